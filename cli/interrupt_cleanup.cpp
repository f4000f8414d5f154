// Removing a command's empty output folders on a signal (see interrupt_cleanup.hpp).
#include "interrupt_cleanup.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <string>

namespace lab::cli {

namespace {

// The handler may only use async-signal-safe calls (rmdir, raise): it reads paths prepared
// before the signal, swapped in whole through one atomic pointer.
struct FolderSet {
    std::vector<std::string> paths;  // outermost first
};
std::atomic<const FolderSet*> g_folders{nullptr};
std::vector<FolderSet*> g_retired;  // never freed while a handler might read them: a few paths per run
constexpr std::array kSignals{SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_then_reraise(int sig) {
    if (const FolderSet* set = g_folders.load())
        for (auto it = set->paths.rbegin(); it != set->paths.rend(); ++it) ::rmdir(it->c_str());  // fails when not empty
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

}  // namespace

void remove_folders_on_signal(const std::vector<std::filesystem::path>& folders) {
    auto* set = new FolderSet;
    for (const auto& f : folders) set->paths.push_back(f.string());
    g_retired.push_back(set);
    g_folders.store(set);
    static bool installed = false;
    if (installed) return;
    installed = true;
    for (int sig : kSignals) {
        struct sigaction current {};
        // A signal the shell set to be ignored (nohup, a background job's SIGINT) stays ignored.
        if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        struct sigaction act {};
        act.sa_handler = remove_then_reraise;
        sigemptyset(&act.sa_mask);
        sigaction(sig, &act, nullptr);
    }
}

void forget_folders_on_signal() { g_folders.store(nullptr); }

}  // namespace lab::cli

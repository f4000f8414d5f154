// The progress bar (see progress_bar.hpp).
#include "progress_bar.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace lab {

namespace {

std::string seconds(double s) {
    if (s < 90) return fmt::format("{:.0f} s", std::max(1.0, s));
    return fmt::format("{:.0f} min", s / 60);
}

std::size_t terminal_width() {
    winsize w{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col - 1;
    return 79;
}

// kShowAfter_s, or $LAB_PROGRESS_AFTER seconds (0 draws from the start: how a test sees a bar
// whatever the machine's speed).
// $LAB_PROGRESS_AFTER as plain decimal seconds, nullopt when unset or not that (atof read "abc"
// as 0, drawing every bar from the start without a word; progress_after_problem() says so).
std::optional<double> progress_after_env() {
    const char* env = std::getenv("LAB_PROGRESS_AFTER");
    if (!env || !*env) return std::nullopt;
    const std::string text = env;
    if (text.find_first_not_of("0123456789.") != std::string::npos || text.find_first_of("0123456789") == std::string::npos ||
        std::count(text.begin(), text.end(), '.') > 1)
        return std::nullopt;
    return std::strtod(env, nullptr);
}

double show_after_s() {
    static const double s = progress_after_env().value_or(kShowAfter_s);
    return s;
}

}  // namespace

std::string render_progress(const std::string& task, const std::string& doing, double elapsed_s, double fraction,
                            double remaining_s, std::size_t width) {
    std::string head = task;
    if (fraction >= 0) {
        const double f = std::clamp(fraction, 0.0, 1.0);
        constexpr int kCells = 20;
        const int full = static_cast<int>(std::floor(f * kCells));
        head += " [" + std::string(full, '#') + std::string(kCells - full, '.') + fmt::format("] {:>3.0f}%", 100 * f);
    }
    const std::string tail = remaining_s >= 0 ? ", about " + seconds(remaining_s) + " left" : " (" + seconds(elapsed_s) + " so far)";
    // Too wide for the terminal: shorten what it is doing, never the bar or the estimate.
    std::string middle = doing.empty() ? "" : " " + doing;
    if (head.size() + middle.size() + tail.size() > width) {
        const std::size_t room = width > head.size() + tail.size() + 2 ? width - head.size() - tail.size() - 1 : 0;
        middle = room > 1 ? middle.substr(0, room) + "…" : "";
    }
    return head + middle + tail;
}

void ProgressBar::start(const std::string& task, double expected_s) {
    clear();
    task_ = task;
    expected_s_ = expected_s;
    started_ = std::chrono::steady_clock::now();
    drawn_ = {};
}

void ProgressBar::update(const std::string& doing) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (expected_s_ <= 0) return draw(doing, -1, -1);
    // Past the expected time the bar waits at 99% rather than promising what it does not know.
    const double f = std::min(0.99, elapsed / expected_s_);
    draw(doing, f, elapsed < expected_s_ ? expected_s_ - elapsed : -1);
}

void ProgressBar::update(const std::string& doing, std::size_t done, std::size_t total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const double f = total ? static_cast<double>(done) / total : -1;
    draw(doing, f, done > 0 && total >= done ? elapsed / done * (total - done) : -1);
}

bool progress_allowed(bool stderr_is_terminal, const char* term, const char* no_progress) {
    // A dumb terminal (Emacs' shell, some CI logs) prints "\r\033[K" as it comes; LAB_NO_PROGRESS=0
    // reads as "not off", as such switches usually do.
    const bool dumb = term && std::string(term) == "dumb";
    const bool off = no_progress && *no_progress && std::string(no_progress) != "0";
    return stderr_is_terminal && !dumb && !off;
}

bool progress_possible() {
    static const bool possible = progress_allowed(isatty(STDERR_FILENO), std::getenv("TERM"), std::getenv("LAB_NO_PROGRESS"));
    return possible;
}

void ProgressBar::draw(const std::string& doing, double fraction, double remaining_s) {
    if (!progress_possible() || task_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - started_).count();
    if (elapsed < show_after_s() || now - drawn_ < std::chrono::milliseconds(100)) return;
    drawn_ = now;
    visible_ = true;
    std::cerr << "\r\033[K" << render_progress(task_, doing, elapsed, fraction, remaining_s, terminal_width()) << std::flush;
}

void ProgressBar::clear() {
    if (visible_) std::cerr << "\r\033[K" << std::flush;
    visible_ = false;
}

ProgressBar& stderr_progress() {
    static ProgressBar bar;
    return bar;
}

std::string progress_after_problem() {
    const char* env = std::getenv("LAB_PROGRESS_AFTER");
    if (!env || !*env || progress_after_env()) return "";
    return fmt::format("LAB_PROGRESS_AFTER={} is not a number of seconds, ignored (bars appear after {:g} s)\n  fix: set it to plain "
                       "decimal seconds (LAB_PROGRESS_AFTER=0 draws bars from the start), or unset it",
                       env, kShowAfter_s);
}

}  // namespace lab

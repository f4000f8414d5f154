// Atomic file writes (see atomic_file.hpp).
#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace lab {

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    fs::create_directories(dir, ec);
    if (ec) throw InputError(dir.string(), "cannot create the folder (" + ec.message() + ")", "choose another path for it");
    std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    int fd = mkstemp(tmpl.data());
    if (fd < 0)
        throw InputError(dir.string(), std::string("cannot write in this folder (") + std::strerror(errno) + ")",
                         "choose a writable location");
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            ::unlink(tmpl.c_str());
            throw InputError(path.string(), std::string("write failed (") + std::strerror(err) + ")");
        }
        p += w;
        left -= static_cast<std::size_t>(w);
    }
    fchmod(fd, 0644);
    bool ok = ::fsync(fd) == 0;
    ok = ::close(fd) == 0 && ok;
    if (!ok || std::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw InputError(path.string(), std::string("cannot write the file (") + std::strerror(err) + ")");
    }
}

void check_writable(const std::filesystem::path& path, const std::string& flag) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    fs::create_directories(dir, ec);
    if (ec) throw InputError(dir.string(), "cannot create the folder for " + flag + " (" + ec.message() + ")", "choose another " + flag + " path");
    std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    const int fd = mkstemp(tmpl.data());
    if (fd < 0)
        throw InputError(dir.string(), "cannot write " + flag + " in this folder (" + std::strerror(errno) + ")",
                         "choose another " + flag + " path");
    ::close(fd);
    ::unlink(tmpl.c_str());
}

}  // namespace lab

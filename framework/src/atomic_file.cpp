// Atomic file writes (see atomic_file.hpp).
#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace lab {

namespace {

// Writes `content` to a file that is not a regular one (/dev/null, a FIFO), or to a stream the
// system names (/dev/stdout, /proc/self/fd/N): opened and written in place, as a shell's
// redirection would; nothing can be renamed over it. Appended, so that standard output sent
// to a file with `>>` keeps what it held (with `>` the shell emptied it already).
void write_through(const std::filesystem::path& path, const std::string& content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) throw InputError(path.string(), std::string("cannot open it for writing (") + std::strerror(errno) + ")", "choose another path");
    for (const char* p = content.data(); p < content.data() + content.size();) {
        const ssize_t w = ::write(fd, p, static_cast<std::size_t>(content.data() + content.size() - p));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            const int err = errno;
            ::close(fd);
            throw InputError(path.string(), std::string("write failed (") + std::strerror(err) + ")");
        }
        p += w;
    }
    ::close(fd);
}

// The mode of the file written: the one it replaces keeps its own (a private report stays private);
// a new file gets what any program's would, 0666 less the umask (mkstemp's temporary is 0600,
// and a fixed 0644 put a run record, which holds the student's course token, in reach of
// every user of a shared machine whatever their umask said).
mode_t mode_for(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

}  // namespace

// /dev/stdout, /dev/fd/1, /proc/self/fd/1 and the like: a stream already open, whatever it is
// (a terminal, a pipe, a file the shell opened), never a file to rename over. (Other paths under
// /dev, /dev/shm/x.json say, are files like any.)
bool names_a_stream(const std::filesystem::path& p) {
    const std::string s = p.lexically_normal().string();
    return s == "/dev/stdout" || s == "/dev/stderr" || s.rfind("/dev/fd/", 0) == 0 ||
           (s.rfind("/proc/", 0) == 0 && s.find("/fd/") != std::string::npos);
}

void write_file_atomically(const std::filesystem::path& given, const std::string& content) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // A symbolic link is followed, so the file it names is replaced and the link stays; a device
    // or a FIFO is written through, never replaced by a regular file; a folder is refused.
    if (names_a_stream(given)) return write_through(given, content);
    // What the path names, the kernel's way (links followed).
    if (const fs::file_status st = fs::status(given, ec); !ec && fs::exists(st)) {
        if (fs::is_directory(st)) throw InputError(given.string(), "is a folder, not a file", "give a file name");
        if (!fs::is_regular_file(st)) return write_through(given, content);
    }
    ec.clear();
    fs::path path = given;
    if (fs::is_symlink(fs::symlink_status(given, ec))) {
        path = fs::canonical(given, ec);
        // A link to a file not there yet: followed by hand to where the file will be.
        if (ec) {
            ec.clear();
            path = given;
            for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(path, ec)); ++hops) {
                const fs::path target = fs::read_symlink(path, ec);
                if (ec) break;
                path = target.is_absolute() ? target : path.parent_path() / target;
            }
        }
    }
    ec.clear();
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
    fchmod(fd, mode_for(path));
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
    // A device, a FIFO or a stream the system names is written through: it need only be writable.
    if (const fs::file_status st = fs::status(path, ec);
        names_a_stream(path) || (!ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st))) {
        if (::access(path.c_str(), W_OK) != 0)
            throw InputError(path.string(), "cannot write " + flag + " there (" + std::strerror(errno) + ")", "choose another " + flag + " path");
        return;
    }
    ec.clear();
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

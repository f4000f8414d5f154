// Reading an ELF file's GNU build ID (see elf_build_id.hpp).
#include "elf_build_id.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace lab {

namespace {

template <class T> bool read_at(std::ifstream& in, std::uint64_t offset, T& out) {
    in.seekg(static_cast<std::streamoff>(offset));
    return static_cast<bool>(in.read(reinterpret_cast<char*>(&out), sizeof(T)));
}

}  // namespace

std::string gnu_build_id(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    Elf64_Ehdr eh{};
    if (!read_at(in, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        return "";
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph{};
        if (!read_at(in, eh.e_phoff + std::uint64_t{i} * sizeof(Elf64_Phdr), ph)) return "";
        if (ph.p_type != PT_NOTE || ph.p_filesz > (1u << 20)) continue;
        std::vector<unsigned char> notes(ph.p_filesz);
        in.seekg(static_cast<std::streamoff>(ph.p_offset));
        if (!in.read(reinterpret_cast<char*>(notes.data()), static_cast<std::streamsize>(notes.size()))) return "";
        // Each note: name size, descriptor size, type, then name and descriptor, each padded to 4.
        for (std::size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
            Elf64_Nhdr nh;
            std::memcpy(&nh, notes.data() + at, sizeof nh);
            const std::size_t name_at = at + sizeof nh, desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
            const std::size_t next = desc_at + ((nh.n_descsz + 3) & ~3u);
            if (next > notes.size() || next <= at) break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0) {
                static const char* hex = "0123456789abcdef";
                std::string id;
                for (std::size_t k = 0; k < nh.n_descsz; ++k)
                    id += hex[notes[desc_at + k] >> 4], id += hex[notes[desc_at + k] & 15];
                return id;
            }
            at = next;
        }
    }
    return "";
}

std::string elf_truncation(const std::filesystem::path& file) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(file, ec);
    std::ifstream in(file, std::ios::binary);
    Elf64_Ehdr eh{};
    if (ec || !read_at(in, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        return "";
    std::uint64_t reach = std::uint64_t{eh.e_phoff} + std::uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr);
    if (eh.e_shoff) reach = std::max<std::uint64_t>(reach, eh.e_shoff + std::uint64_t{eh.e_shnum} * eh.e_shentsize);
    for (unsigned i = 0; i < eh.e_phnum && reach <= size; ++i) {
        Elf64_Phdr ph{};
        if (!read_at(in, eh.e_phoff + std::uint64_t{i} * sizeof(Elf64_Phdr), ph)) break;
        if (ph.p_type == PT_LOAD) reach = std::max<std::uint64_t>(reach, ph.p_offset + ph.p_filesz);
    }
    if (reach <= size) return "";
    return "the file is " + std::to_string(size) + " bytes but its ELF headers reach byte " + std::to_string(reach) +
           ": it is cut short (an interrupted copy, download or build)";
}

bool same_build(const std::filesystem::path& a, const std::filesystem::path& b) {
    const std::string ia = gnu_build_id(a), ib = gnu_build_id(b);
    if (!ia.empty() || !ib.empty()) return ia == ib;
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    if (!fa || !fb) return false;
    return std::equal(std::istreambuf_iterator<char>(fa), std::istreambuf_iterator<char>(), std::istreambuf_iterator<char>(fb),
                      std::istreambuf_iterator<char>());
}

}  // namespace lab

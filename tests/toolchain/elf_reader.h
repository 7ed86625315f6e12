/// \file
/// A minimal ELF64 reader for the toolchain tests (glibc's <elf.h> only, so
/// the checks do not depend on the LLVM code under test): DT_NEEDED and
/// DT_SONAME of a shared object, and sections and symbols of an object file.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace aotc::toolchain::testing {

inline std::string readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Reads a T at \p offset; false if out of range.
template <typename T>
bool readAt(const std::string &bytes, uint64_t offset, T &out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

inline bool isElf64(const std::string &bytes, Elf64_Ehdr &header) {
  return readAt(bytes, 0, header) &&
         std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
         header.e_ident[EI_CLASS] == ELFCLASS64;
}

inline std::vector<Elf64_Shdr> sectionHeaders(const std::string &bytes) {
  std::vector<Elf64_Shdr> sections;
  Elf64_Ehdr header;
  if (!isElf64(bytes, header))
    return sections;
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!readAt(bytes, header.e_shoff + uint64_t(i) * header.e_shentsize,
                section))
      return {};
    sections.push_back(section);
  }
  return sections;
}

inline std::string stringAt(const std::string &bytes, uint64_t offset) {
  if (offset >= bytes.size())
    return "";
  return std::string(bytes.c_str() + offset);
}

/// DT_NEEDED entries and DT_SONAME of a shared object.
struct DynamicInfo {
  std::vector<std::string> needed;
  std::string soname;
  bool valid = false;
};

inline DynamicInfo readDynamic(const std::string &bytes) {
  DynamicInfo info;
  std::vector<Elf64_Shdr> sections = sectionHeaders(bytes);
  for (const Elf64_Shdr &section : sections) {
    if (section.sh_type != SHT_DYNAMIC || section.sh_link >= sections.size())
      continue;
    const Elf64_Shdr &strtab = sections[section.sh_link];
    for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= section.sh_size;
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn dyn;
      if (!readAt(bytes, section.sh_offset + off, dyn) || dyn.d_tag == DT_NULL)
        break;
      if (dyn.d_tag == DT_NEEDED)
        info.needed.push_back(
            stringAt(bytes, strtab.sh_offset + dyn.d_un.d_val));
      if (dyn.d_tag == DT_SONAME)
        info.soname = stringAt(bytes, strtab.sh_offset + dyn.d_un.d_val);
    }
    info.valid = true;
  }
  return info;
}

/// A symbol of a relocatable object, with its section.
struct ObjectSymbol {
  std::string section;
  uint64_t sectionType = 0;
  uint64_t sectionFlags = 0;
  uint64_t sectionAlign = 0;
  uint64_t sectionFileOffset = 0;
  uint64_t value = 0;
  uint64_t size = 0;
  unsigned bind = 0;
  unsigned visibility = 0;
};

inline std::map<std::string, ObjectSymbol>
readObjectSymbols(const std::string &bytes) {
  std::map<std::string, ObjectSymbol> symbols;
  Elf64_Ehdr header;
  std::vector<Elf64_Shdr> sections = sectionHeaders(bytes);
  if (!isElf64(bytes, header) || header.e_shstrndx >= sections.size())
    return symbols;
  const Elf64_Shdr &shstrtab = sections[header.e_shstrndx];
  for (const Elf64_Shdr &symtab : sections) {
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= sections.size())
      continue;
    const Elf64_Shdr &strtab = sections[symtab.sh_link];
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= symtab.sh_size;
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!readAt(bytes, symtab.sh_offset + off, sym))
        break;
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size())
        continue;
      const Elf64_Shdr &section = sections[sym.st_shndx];
      ObjectSymbol info;
      info.section = stringAt(bytes, shstrtab.sh_offset + section.sh_name);
      info.sectionType = section.sh_type;
      info.sectionFlags = section.sh_flags;
      info.sectionAlign = section.sh_addralign;
      info.sectionFileOffset = section.sh_offset;
      info.value = sym.st_value;
      info.size = sym.st_size;
      info.bind = ELF64_ST_BIND(sym.st_info);
      info.visibility = ELF64_ST_VISIBILITY(sym.st_other);
      std::string name = stringAt(bytes, strtab.sh_offset + sym.st_name);
      if (!name.empty())
        symbols[name] = info;
    }
  }
  return symbols;
}

} // namespace aotc::toolchain::testing

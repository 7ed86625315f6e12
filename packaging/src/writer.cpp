/// \file
/// Writing a package with libzip: the manifest's model fields come from the
/// compile (the caller), the weights are stored first with a
/// padding extra field that puts their data at a page boundary, and the
/// result is read back with Package::open before it replaces the output.
#include "aotc/package.hpp"
#include "aotc/model_desc.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>

namespace aotc::pkg {
namespace {

/// Extra field id of the padding that aligns an entry's data (the id
/// Android's zipalign uses).
constexpr uint16_t kAlignExtraId = 0xd935;
constexpr uint64_t kAlign = 4096;
/// A .so larger than this is stored, not deflated (deflating a .so with
/// embedded weights would take long and save little).
constexpr uint64_t kDeflateLimit = 64 << 20;
/// Every entry's modification time (2020-01-01): same inputs, same bytes.
constexpr time_t kEntryTime = 1577836800;

[[noreturn]] void fail(aotc_status_t status, const std::string &what) {
  throw Error(status, what);
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// A file name the package layout accepts ([A-Za-z0-9._+-], not "." or "..").
std::string safeName(const std::string &name) {
  std::string out;
  for (unsigned char c : name)
    out += std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+'
               ? static_cast<char>(c)
               : '_';
  if (out.empty() || out == "." || out == "..")
    out = "_" + out;
  return out.substr(0, 200);
}

/// Size and CRC-32 of a file, read in chunks.
void sizeAndCrc(const std::string &path, uint64_t &size, uint32_t &crc) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(AOTC_ERROR_NOT_FOUND,
         "cannot open '" + path + "': " + std::strerror(errno));
  std::vector<unsigned char> buf(1 << 20);
  uLong c = 0;
  size = 0;
  while (true) {
    ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      ::close(fd);
      fail(AOTC_ERROR_INVALID_ARGUMENT,
           "reading '" + path + "': " + std::strerror(e));
    }
    if (r == 0)
      break;
    c = crc32_z(c, buf.data(), static_cast<size_t>(r));
    size += static_cast<uint64_t>(r);
  }
  ::close(fd);
  crc = static_cast<uint32_t>(c);
}

/// The CPU architecture an ELF shared object is built for.
std::string elfArch(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr h{};
  if (!in.read(reinterpret_cast<char *>(&h), sizeof(h)) ||
      std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
    fail(AOTC_ERROR_INVALID_ARGUMENT, "'" + path + "' is not an ELF file");
  switch (h.e_machine) {
  case EM_X86_64:
    return "x86_64";
  case EM_AARCH64:
    return "aarch64";
  case EM_RISCV:
    return "riscv64";
  }
  return "elf-machine-" + std::to_string(h.e_machine);
}

struct ZipCloser {
  void operator()(zip_t *z) const {
    if (z)
      zip_discard(z);
  }
};

/// One attempt at writing the archive to \p tmp; \p pad is the padding extra
/// field's data length in the weights' local header.
void writeZip(const std::string &tmp, const std::string &shown,
              const Manifest &manifest,
              const std::string &manifestText,
              const std::vector<std::pair<std::string, std::string>> &files,
              const std::vector<std::pair<std::string, std::string>> &sources,
              uint16_t pad) {
  int err = 0;
  std::unique_ptr<zip_t, ZipCloser> za(
      zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err));
  if (!za) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    fail(AOTC_ERROR_INVALID_ARGUMENT,
         "cannot write the package '" + shown + "': " + why);
  }
  auto zipFail = [&](const std::string &what) {
    fail(AOTC_ERROR_INVALID_ARGUMENT,
         "writing the package '" + shown + "': " + what + ": " +
             zip_strerror(za.get()));
  };
  auto add = [&](const std::string &name, zip_source_t *src, bool store,
                 uint16_t padding) {
    if (!src)
      zipFail("source of " + name);
    zip_int64_t idx = zip_file_add(za.get(), name.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      zipFail("adding " + name);
    }
    auto i = static_cast<zip_uint64_t>(idx);
    if (zip_set_file_compression(za.get(), i,
                                 store ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0) < 0 ||
        zip_file_set_mtime(za.get(), i, kEntryTime, 0) < 0 ||
        zip_file_set_external_attributes(za.get(), i, 0, ZIP_OPSYS_UNIX,
                                         (0100644u) << 16) < 0)
      zipFail("setting up " + name);
    if (padding > 0) {
      std::vector<zip_uint8_t> data(padding, 0);
      if (padding >= 2) {
        data[0] = kAlign & 0xff;
        data[1] = (kAlign >> 8) & 0xff;
      }
      if (zip_file_extra_field_set(za.get(), i, kAlignExtraId,
                                   ZIP_EXTRA_FIELD_NEW, data.data(), padding,
                                   ZIP_FL_LOCAL) < 0)
        zipFail("aligning " + name);
    }
  };
  // files: (entry name, path) in manifest order of the weights, then the .so.
  for (const auto &[name, path] : files) {
    const ManifestEntry *e = nullptr;
    for (const ManifestEntry &cand : manifest.entries)
      if (cand.name == name)
        e = &cand;
    bool weights = e && e->role == "weights";
    bool store = weights || (e && e->size > kDeflateLimit);
    add(name, zip_source_file(za.get(), path.c_str(), 0, 0), store,
        weights ? pad : 0);
  }
  add("manifest.json",
      zip_source_buffer(za.get(), manifestText.data(), manifestText.size(), 0),
      false, 0);
  for (const auto &[name, text] : sources)
    add("sources/" + name,
        zip_source_buffer(za.get(), text.data(), text.size(), 0), false, 0);
  zip_t *z = za.release();
  if (zip_close(z) < 0) {
    std::string why = zip_strerror(z);
    zip_discard(z);
    fail(AOTC_ERROR_INVALID_ARGUMENT,
         "writing the package '" + shown + "': " + why);
  }
}

} // namespace

Manifest writePackage(const WriteRequest &request) {
  if (request.soPath.empty() || request.outputPath.empty())
    fail(AOTC_ERROR_INVALID_ARGUMENT, "writePackage: no .so or output path");
  Manifest m = request.model;
  m.formatVersion = kFormatVersion;
  m.aotcVersion = aotcVersion();
  m.arch = elfArch(request.soPath);
  m.os = hostOs();
  // The .so was built by this aotc, against these headers.
  m.abiVersion = AOTC_ABI_VERSION;
  m.descVersion = AOTC_MODEL_DESC_VERSION;
  if ((m.weights == "side-file") != !request.weightsPath.empty() ||
      (m.weights != "side-file" && m.weights != "embedded" &&
       m.weights != "weightless"))
    fail(AOTC_ERROR_INVALID_ARGUMENT,
         "writePackage: weights '" + m.weights + "' with weights path '" +
             request.weightsPath + "'");
  // Entries: the weights first (their local header at offset 0, so that the
  // padding puts their data at a page boundary), then the .so.
  std::vector<std::pair<std::string, std::string>> files;
  std::string soName = safeName(baseName(request.soPath));
  std::vector<ManifestEntry> entries;
  if (!request.weightsPath.empty()) {
    const std::string &path = request.weightsPath;
    ManifestEntry e{"model/" + safeName(baseName(path)), "weights", 0, 0};
    sizeAndCrc(path, e.size, e.crc32);
    if (e.name == "model/" + soName)
      e.name += ".weights";
    files.emplace_back(e.name, path);
    entries.push_back(e);
  }
  ManifestEntry so{"model/" + soName, "model", 0, 0};
  sizeAndCrc(request.soPath, so.size, so.crc32);
  files.emplace_back(so.name, request.soPath);
  entries.push_back(so);
  std::set<std::string> sourceNames;
  std::vector<std::pair<std::string, std::string>> sources;
  for (const auto &[name, text] : request.sources) {
    std::string safe = safeName(name);
    if (!sourceNames.insert(safe).second)
      fail(AOTC_ERROR_INVALID_ARGUMENT, "two sources named '" + safe + "'");
    ManifestEntry e{"sources/" + safe, "source", text.size(),
                    static_cast<uint32_t>(crc32_z(
                        0, reinterpret_cast<const Bytef *>(text.data()),
                        text.size()))};
    entries.push_back(e);
    sources.emplace_back(safe, text);
  }
  m.entries = entries;
  std::string manifestText = m.toJson();

  std::string tmp = request.outputPath + ".tmp" + std::to_string(getpid());
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      if (!path.empty())
        std::remove(path.c_str());
    }
  } cleanup{tmp};
  // The padding that puts the weights' data at kAlign: their local header
  // is 30 bytes, the name, libzip's own extra fields (none expected) and
  // ours (4 bytes of header and the data). Checked after writing.
  const ManifestEntry *weights = m.entry("weights");
  uint16_t pad = 0;
  if (weights) {
    uint64_t header = 30 + weights->name.size() + 4;
    pad = static_cast<uint16_t>((kAlign - header % kAlign) % kAlign);
  }
  for (int attempt = 0;; ++attempt) {
    writeZip(tmp, request.outputPath, m, manifestText, files, sources, pad);
    Package check = Package::open(tmp);
    const ZipEntry *w = check.find("weights");
    if (!w || w->dataOffset % kAlign == 0 || attempt == 2)
      break;
    // libzip added something of its own: grow the padding by the rest.
    uint64_t more = (kAlign - w->dataOffset % kAlign) % kAlign;
    pad = static_cast<uint16_t>((pad + more) % kAlign);
  }
  if (std::rename(tmp.c_str(), request.outputPath.c_str()) != 0)
    fail(AOTC_ERROR_INVALID_ARGUMENT, "cannot write '" + request.outputPath +
                                          "': " + std::strerror(errno));
  cleanup.path.clear();
  return m;
}

} // namespace aotc::pkg

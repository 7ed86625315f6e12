/// \file
/// Reading and validating a package: a strict zip reader of our own (the
/// loader needs each entry's offset in the file, to map the weights, which
/// libzip does not give) that accepts only what the package layout allows.
#include "aotc/package.hpp"
#include "aotc/model_desc.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

namespace aotc::pkg {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr size_t kEndSize = 22;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;
constexpr uint64_t kMaxCentralBytes = 16 << 20;

uint16_t le16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
uint64_t le64(const uint8_t *p) {
  return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32;
}

std::string quoted(const std::string &name) {
  std::string out = "'";
  for (unsigned char c : name) {
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

/// Why \p name is not an entry name of the package layout, or "".
std::string badName(const std::string &name) {
  if (name.empty())
    return "is empty";
  if (name.size() > kMaxNameLength)
    return "is longer than " + std::to_string(kMaxNameLength) + " bytes";
  if (name[0] == '/')
    return "is an absolute path";
  if (name.find('\\') != std::string::npos)
    return "contains a backslash";
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos
                                           ? std::string::npos
                                           : slash - start));
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  for (const std::string &p : parts) {
    if (p == "..")
      return "has a '..' component";
    if (p == ".")
      return "has a '.' component";
    if (p.empty())
      return name.back() == '/' ? "is a directory" : "has an empty component";
  }
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+' ||
          c == '/'))
      return "has a character outside [A-Za-z0-9._+-/]";
  if (parts.size() == 1 && parts[0] == "manifest.json")
    return "";
  if (parts.size() == 2 && (parts[0] == "model" || parts[0] == "sources"))
    return "";
  return "is outside the package layout (manifest.json, model/FILE, "
         "sources/FILE)";
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

const char *hostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

const char *hostOs() {
#if defined(__linux__)
  return "linux";
#else
  return "unknown";
#endif
}

const char *aotcVersion() { return AOTC_VERSION_STRING; }

Package::Package(Package &&other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)),
      fileSize_(other.fileSize_), entries_(std::move(other.entries_)),
      manifest_(std::move(other.manifest_)) {}

Package &Package::operator=(Package &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    fileSize_ = other.fileSize_;
    entries_ = std::move(other.entries_);
    manifest_ = std::move(other.manifest_);
  }
  return *this;
}

Package::~Package() {
  if (fd_ >= 0)
    ::close(fd_);
}

void Package::error(aotc_status_t status, const std::string &what) const {
  throw Error(status, "package '" + path_ + "': " + what);
}

Package Package::open(const std::string &path) {
  Package p;
  p.path_ = path;
  p.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (p.fd_ < 0)
    p.error(AOTC_ERROR_NOT_FOUND,
            std::string("cannot open it: ") + std::strerror(errno));
  struct stat st;
  if (fstat(p.fd_, &st) != 0 || !S_ISREG(st.st_mode))
    p.error(AOTC_ERROR_INVALID_ARGUMENT, "not a regular file");
  p.fileSize_ = static_cast<uint64_t>(st.st_size);
  p.parse();
  return p;
}

void Package::parse() {
  auto readAt = [&](uint64_t offset, uint64_t n, const char *what) {
    if (offset > fileSize_ || n > fileSize_ - offset)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            std::string(what) + " passes the end of the file (truncated?)");
    std::string buf(static_cast<size_t>(n), '\0');
    size_t got = 0;
    while (got < n) {
      ssize_t r = pread(fd_, &buf[got], n - got, offset + got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        error(AOTC_ERROR_INVALID_ARGUMENT,
              std::string("reading ") + what + " failed" +
                  (r < 0 ? std::string(": ") + std::strerror(errno) : ""));
      got += static_cast<size_t>(r);
    }
    return buf;
  };
  auto bytes = [](const std::string &s) {
    return reinterpret_cast<const uint8_t *>(s.data());
  };

  // The end of central directory record: the last 22 bytes, or before a
  // comment that runs exactly to the end of the file.
  if (fileSize_ < kEndSize)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "not a zip archive (" + std::to_string(fileSize_) + " bytes)");
  uint64_t tailSize = std::min<uint64_t>(fileSize_, kEndSize + 0xffff);
  std::string tail = readAt(fileSize_ - tailSize, tailSize, "the end record");
  int64_t at = -1;
  for (int64_t i = static_cast<int64_t>(tailSize - kEndSize); i >= 0; --i) {
    const uint8_t *q = bytes(tail) + i;
    if (le32(q) == kEndSig &&
        static_cast<uint64_t>(i) + kEndSize + le16(q + 20) == tailSize) {
      at = i;
      break;
    }
  }
  if (at < 0)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "not a zip archive, or truncated: no end of central directory "
          "record");
  uint64_t endOffset = fileSize_ - tailSize + static_cast<uint64_t>(at);
  const uint8_t *e = bytes(tail) + at;
  if (le16(e + 4) != 0 || le16(e + 6) != 0 || le16(e + 8) != le16(e + 10))
    error(AOTC_ERROR_INVALID_ARGUMENT, "a multi-volume zip is not a package");
  uint64_t count = le16(e + 10), cdSize = le32(e + 12), cdOffset = le32(e + 16);
  uint64_t cdLimit = endOffset;
  if (count == 0xffff || cdSize == 0xffffffff || cdOffset == 0xffffffff) {
    if (endOffset < 20)
      error(AOTC_ERROR_INVALID_ARGUMENT, "zip64 locator missing");
    std::string loc = readAt(endOffset - 20, 20, "the zip64 locator");
    if (le32(bytes(loc)) != kEnd64LocatorSig)
      error(AOTC_ERROR_INVALID_ARGUMENT, "zip64 locator missing");
    uint64_t end64 = le64(bytes(loc) + 8);
    std::string rec = readAt(end64, 56, "the zip64 end record");
    const uint8_t *r = bytes(rec);
    if (le32(r) != kEnd64Sig || end64 > endOffset - 20)
      error(AOTC_ERROR_INVALID_ARGUMENT, "bad zip64 end record");
    if (le32(r + 16) != 0 || le32(r + 20) != 0 || le64(r + 24) != le64(r + 32))
      error(AOTC_ERROR_INVALID_ARGUMENT, "a multi-volume zip is not a package");
    count = le64(r + 32);
    cdSize = le64(r + 40);
    cdOffset = le64(r + 48);
    cdLimit = end64;
  }
  if (count > kMaxEntries)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          std::to_string(count) + " entries, more than a package holds (" +
              std::to_string(kMaxEntries) + ")");
  if (cdOffset > cdLimit || cdSize > cdLimit - cdOffset ||
      cdSize > kMaxCentralBytes)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "the central directory lies outside the archive (truncated?)");
  std::string cd = readAt(cdOffset, cdSize, "the central directory");

  std::set<std::string> names, folded;
  uint64_t pos = 0;
  struct Span {
    uint64_t start, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (uint64_t i = 0; i < count; ++i) {
    if (cdSize - pos < kCentralSize || le32(bytes(cd) + pos) != kCentralSig)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "central directory entry " + std::to_string(i) + " is corrupt");
    const uint8_t *c = bytes(cd) + pos;
    uint16_t madeBy = le16(c + 4), flags = le16(c + 8), method = le16(c + 10);
    uint64_t nameLen = le16(c + 28), extraLen = le16(c + 30),
             commentLen = le16(c + 32);
    uint32_t external = le32(c + 38);
    if (cdSize - pos < kCentralSize + nameLen + extraLen + commentLen)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "central directory entry " + std::to_string(i) + " is corrupt");
    ZipEntry z;
    z.name.assign(reinterpret_cast<const char *>(c + kCentralSize), nameLen);
    z.method = method;
    z.crc32 = le32(c + 16);
    z.compressedSize = le32(c + 20);
    z.size = le32(c + 24);
    uint64_t local = le32(c + 42);
    // zip64 sizes and offset, in that order, where the 32-bit field is full.
    const uint8_t *x = c + kCentralSize + nameLen;
    for (uint64_t k = 0; k + 4 <= extraLen;) {
      uint16_t id = le16(x + k), len = le16(x + k + 2);
      if (k + 4 + len > extraLen)
        error(AOTC_ERROR_INVALID_ARGUMENT,
              "entry " + quoted(z.name) + ": corrupt extra field");
      if (id == 1) {
        const uint8_t *f = x + k + 4;
        uint64_t left = len;
        auto take = [&](uint64_t &v) {
          if (left < 8)
            error(AOTC_ERROR_INVALID_ARGUMENT,
                  "entry " + quoted(z.name) + ": corrupt zip64 field");
          v = le64(f);
          f += 8;
          left -= 8;
        };
        if (z.size == 0xffffffff)
          take(z.size);
        if (z.compressedSize == 0xffffffff)
          take(z.compressedSize);
        if (local == 0xffffffff)
          take(local);
      }
      k += 4 + len;
    }
    pos += kCentralSize + nameLen + extraLen + commentLen;

    std::string why = badName(z.name);
    if (!why.empty())
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " " + why);
    if (!names.insert(z.name).second || !folded.insert(lower(z.name)).second)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " appears twice");
    unsigned host = madeBy >> 8;
    unsigned mode = external >> 16;
    if (host == 3 && (mode & 0170000) == 0120000)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " is a symbolic link");
    if ((host == 3 && (mode & 0170000) == 0040000) || (external & 0x10))
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " is a directory");
    if (flags & 0x41)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " is encrypted");
    if (method != 0 && method != 8)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " uses compression method " +
                std::to_string(method) + " (a package stores or deflates)");
    if (method == 0 && z.compressedSize != z.size)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " is stored but its sizes differ");

    // The local header must agree and its data lie before the directory.
    std::string lh = readAt(local, kLocalSize, "a local header");
    const uint8_t *l = bytes(lh);
    uint64_t lNameLen = le16(l + 26), lExtraLen = le16(l + 28);
    if (le32(l) != kLocalSig || le16(l + 8) != method ||
        readAt(local + kLocalSize, lNameLen, "a local header") != z.name)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) +
                ": its local header does not match the central directory");
    z.dataOffset = local + kLocalSize + lNameLen + lExtraLen;
    if (z.dataOffset > cdOffset || z.compressedSize > cdOffset - z.dataOffset)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) +
                " runs past the start of the central directory (truncated "
                "or corrupt)");
    spans.push_back({local, z.dataOffset + z.compressedSize, z.name});
    entries_.push_back(std::move(z));
  }
  if (pos != cdSize)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "the central directory holds more than its entries");
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.start < b.start; });
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].start < spans[i - 1].end)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entries " + quoted(spans[i - 1].name) + " and " +
                quoted(spans[i].name) + " overlap");

  // The manifest, and every entry it lists exactly as the zip has it.
  const ZipEntry *m = nullptr;
  for (const ZipEntry &z : entries_)
    if (z.name == "manifest.json")
      m = &z;
  if (!m)
    error(AOTC_ERROR_INVALID_ARGUMENT, "no manifest.json (not an aotc package)");
  manifest_ = Manifest::fromJson(read(*m, kMaxManifestBytes),
                                 "package '" + path_ + "': manifest.json");
  std::set<std::string> listed;
  int models = 0, weights = 0;
  for (const ManifestEntry &me : manifest_.entries) {
    const ZipEntry *z = nullptr;
    for (const ZipEntry &cand : entries_)
      if (cand.name == me.name)
        z = &cand;
    if (!z || me.name == "manifest.json")
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "manifest.json lists entry " + quoted(me.name) +
                ", which the archive does not hold");
    if (!listed.insert(me.name).second)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "manifest.json lists entry " + quoted(me.name) + " twice");
    std::string folder = me.name.substr(0, me.name.find('/'));
    bool roleOk = (me.role == "model" && folder == "model") ||
                  (me.role == "weights" && folder == "model") ||
                  (me.role == "source" && folder == "sources");
    if (!roleOk)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "manifest.json: entry " + quoted(me.name) + " has role '" +
                me.role + "', which does not belong in '" + folder + "/'");
    models += me.role == "model";
    weights += me.role == "weights";
    if (z->size != me.size)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(me.name) + " holds " + std::to_string(z->size) +
                " bytes, manifest.json says " + std::to_string(me.size));
    if (z->crc32 != me.crc32)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(me.name) + " has CRC-32 " +
                std::to_string(z->crc32) + ", manifest.json says " +
                std::to_string(me.crc32));
    if (me.role == "weights" && z->method != 0)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(me.name) +
                " (the weights) is compressed: it must be stored, to be "
                "mapped");
  }
  for (const ZipEntry &z : entries_)
    if (z.name != "manifest.json" && !listed.count(z.name))
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(z.name) + " is not listed in manifest.json");
  if (models != 1)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "manifest.json lists " + std::to_string(models) +
              " model entries, a package has one");
  if (weights > 1 || (weights == 1) != (manifest_.weights == "side-file"))
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "manifest.json: weights '" + manifest_.weights + "' with " +
              std::to_string(weights) + " weights entries");
}

const ZipEntry *Package::find(const std::string &role) const {
  const ManifestEntry *me = manifest_.entry(role);
  if (!me)
    return nullptr;
  for (const ZipEntry &z : entries_)
    if (z.name == me->name)
      return &z;
  return nullptr;
}

void Package::checkLoadable() const {
  const Manifest &m = manifest_;
  if (m.arch != hostArch() || m.os != hostOs())
    error(AOTC_ERROR_UNSUPPORTED,
          "built for " + m.arch + "/" + m.os + ", this host is " + hostArch() +
              "/" + hostOs());
  if (m.abiVersion != AOTC_ABI_VERSION)
    error(AOTC_ERROR_UNSUPPORTED,
          "its model has C ABI version " + std::to_string(m.abiVersion) +
              ", this runtime knows version " +
              std::to_string(AOTC_ABI_VERSION));
  if (m.descVersion != AOTC_MODEL_DESC_VERSION)
    error(AOTC_ERROR_UNSUPPORTED,
          "its model has descriptor version " + std::to_string(m.descVersion) +
              ", this runtime reads version " +
              std::to_string(AOTC_MODEL_DESC_VERSION));
}

std::string Package::read(const ZipEntry &entry, uint64_t limit) const {
  if (entry.size > limit)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "entry " + quoted(entry.name) + " holds " +
              std::to_string(entry.size) + " bytes, more than the " +
              std::to_string(limit) + " allowed");
  // Deflate expands at most about 1032:1: a larger claim is a lie that
  // would only cost memory.
  if (entry.method == 8 && entry.size / 1032 > entry.compressedSize + 64)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "entry " + quoted(entry.name) + " claims " +
              std::to_string(entry.size) + " bytes from " +
              std::to_string(entry.compressedSize) + " deflated bytes");
  std::string raw(static_cast<size_t>(entry.compressedSize), '\0');
  size_t got = 0;
  while (got < raw.size()) {
    ssize_t r = pread(fd_, &raw[got], raw.size() - got,
                      static_cast<off_t>(entry.dataOffset + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(entry.name) + ": read failed (truncated?)");
    got += static_cast<size_t>(r);
  }
  std::string out;
  if (entry.method == 0) {
    out = std::move(raw);
  } else {
    out.assign(static_cast<size_t>(entry.size), '\0');
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
      error(AOTC_ERROR_OUT_OF_MEMORY, "inflateInit2 failed");
    zs.next_in = reinterpret_cast<Bytef *>(raw.data());
    uint64_t inLeft = raw.size(), outDone = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
      uInt inChunk = static_cast<uInt>(std::min<uint64_t>(inLeft, 1u << 30));
      uInt outChunk = static_cast<uInt>(
          std::min<uint64_t>(out.size() - outDone, 1u << 30));
      zs.avail_in = inChunk;
      zs.next_out = reinterpret_cast<Bytef *>(out.data()) + outDone;
      zs.avail_out = outChunk;
      rc = inflate(&zs, Z_NO_FLUSH);
      inLeft -= inChunk - zs.avail_in;
      outDone += outChunk - zs.avail_out;
      if (rc == Z_OK && zs.avail_out == outChunk && zs.avail_in == inChunk)
        rc = Z_BUF_ERROR; // no progress: the data ends early or overflows
      if (rc == Z_OK && outDone == out.size() && inLeft == 0)
        rc = Z_BUF_ERROR; // full output without the stream's end
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || outDone != out.size())
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(entry.name) +
                ": its deflated data is corrupt or does not hold " +
                std::to_string(entry.size) + " bytes");
  }
  uint32_t crc = static_cast<uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef *>(out.data()), out.size()));
  if (crc != entry.crc32)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "entry " + quoted(entry.name) + " is corrupt: CRC-32 " +
              std::to_string(crc) + ", expected " +
              std::to_string(entry.crc32));
  return out;
}

void Package::verifyStored(const ZipEntry &entry) const {
  if (entry.method != 0)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "entry " + quoted(entry.name) + " is not stored");
  std::vector<unsigned char> buf(1 << 20);
  uLong crc = 0;
  uint64_t done = 0;
  while (done < entry.size) {
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(buf.size(), entry.size - done));
    ssize_t r = pread(fd_, buf.data(), want,
                      static_cast<off_t>(entry.dataOffset + done));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      error(AOTC_ERROR_INVALID_ARGUMENT,
            "entry " + quoted(entry.name) + ": read failed (truncated?)");
    crc = crc32_z(crc, buf.data(), static_cast<size_t>(r));
    done += static_cast<uint64_t>(r);
  }
  if (static_cast<uint32_t>(crc) != entry.crc32)
    error(AOTC_ERROR_INVALID_ARGUMENT,
          "entry " + quoted(entry.name) + " is corrupt: CRC-32 " +
              std::to_string(static_cast<uint32_t>(crc)) + ", expected " +
              std::to_string(entry.crc32));
}

} // namespace aotc::pkg

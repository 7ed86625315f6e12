/// \file
/// ExternalData (external_data.h).
#include "compiler/frontend/external_data.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aotc {
namespace onnx_import {

/// A read-only private mapping of a whole file, unmapped with its last
/// TensorData.
struct ExternalData::Mapping {
  const uint8_t *base = nullptr;
  int64_t size = 0;
  ~Mapping() {
    if (base && size > 0)
      ::munmap(const_cast<uint8_t *>(base), static_cast<size_t>(size));
  }
};

namespace {

std::string label(const onnx::TensorProto &t) {
  return "initializer '" + t.name() + "'";
}

/// A non-negative decimal integer, the whole string.
bool parseSize(const std::string &s, int64_t &out) {
  if (s.empty() || s.size() > 18)
    return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::string realPath(const std::string &p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

} // namespace

ExternalData::ExternalData(std::string modelDir)
    : modelDir_(std::move(modelDir)) {
  if (!modelDir_.empty())
    realModelDir_ = realPath(modelDir_);
}

Expected<std::string>
ExternalData::resolve(const onnx::TensorProto &t) const {
  std::string location;
  bool has = false;
  for (const onnx::StringStringEntryProto &e : t.external_data())
    if (e.key() == "location") {
      location = e.value();
      has = true;
    }
  if (!has || location.empty())
    return makeError(label(t), ": external data without a 'location'");
  if (modelDir_.empty())
    return makeError(label(t), ": external data ('", location,
                     "') needs the model's folder; compile the model from "
                     "its file");
  if (location[0] == '/')
    return makeError(label(t), ": external data location '", location,
                     "' is an absolute path; it must be relative to the "
                     "model's folder");
  // No ".." component at all (ONNX's rule), so a location cannot climb out
  // of the folder lexically.
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find('/', start);
    if (end == std::string::npos)
      end = location.size();
    if (location.compare(start, end - start, "..") == 0)
      return makeError(label(t), ": external data location '", location,
                       "' points outside the model's folder ('..')");
    start = end + 1;
  }
  std::string path = modelDir_ + "/" + location;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return makeError(label(t), ": external data file '", path,
                     "' cannot be opened: ", std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return makeError(label(t), ": external data '", path,
                     "' is not a regular file");
  // Symlinks may point anywhere: the resolved file must still be inside
  // the resolved model folder.
  std::string real = realPath(path);
  if (realModelDir_.empty() || real.empty() ||
      real.compare(0, realModelDir_.size() + 1, realModelDir_ + "/") != 0)
    return makeError(label(t), ": external data location '", location,
                     "' resolves to '", real,
                     "', outside the model's folder '", realModelDir_, "'");
  return real;
}

Expected<std::shared_ptr<const ExternalData::Mapping>>
ExternalData::map(const std::string &path) {
  auto it = files_.find(path);
  if (it != files_.end())
    return it->second;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return makeError("external data file '", path,
                     "' cannot be opened: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return makeError("external data file '", path,
                     "' cannot be read: ", std::strerror(err));
  }
  auto m = std::make_shared<Mapping>();
  m->size = static_cast<int64_t>(st.st_size);
  if (m->size > 0) {
    void *p = ::mmap(nullptr, static_cast<size_t>(m->size), PROT_READ,
                     MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return makeError("external data file '", path,
                       "' cannot be mapped: ", std::strerror(err));
    }
    m->base = static_cast<const uint8_t *>(p);
  }
  ::close(fd);
  std::shared_ptr<const Mapping> shared = std::move(m);
  files_[path] = shared;
  return shared;
}

Expected<TensorData> ExternalData::read(const onnx::TensorProto &t,
                                        int64_t bytes) {
  if (t.has_raw_data() || t.float_data_size() || t.int32_data_size() ||
      t.int64_data_size() || t.double_data_size() || t.uint64_data_size() ||
      t.string_data_size())
    return makeError(label(t),
                     ": stored externally but also has data in the model");
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &e : t.external_data()) {
    if (e.key() == "offset" && !parseSize(e.value(), offset))
      return makeError(label(t), ": external data offset '", e.value(),
                       "' is not a non-negative integer");
    if (e.key() == "length" && !parseSize(e.value(), length))
      return makeError(label(t), ": external data length '", e.value(),
                       "' is not a non-negative integer");
  }
  AOTC_ASSIGN_OR_RETURN(std::string path, resolve(t));
  AOTC_ASSIGN_OR_RETURN(std::shared_ptr<const Mapping> m, map(path));
  if (length < 0)
    length = offset <= m->size ? m->size - offset : 0;
  if (length != bytes)
    return makeError(label(t), ": external data has ", length,
                     " bytes, expected ", bytes, " for its type and shape");
  if (offset > m->size || length > m->size - offset)
    return makeError(label(t), ": external data [", offset, ", ",
                     offset + length, ") lies past the end of '", path,
                     "' (", m->size, " bytes)");
  const uint8_t *at = m->base + offset;
  // Elements are read in place; a range that is not 16-byte aligned (small
  // tensors some writers pack back to back) is copied instead.
  if (length == 0 || reinterpret_cast<uintptr_t>(at) % 16 != 0)
    return TensorData::fromBytes(std::vector<uint8_t>(at, at + length));
  return TensorData::view(m, at, length);
}

} // namespace onnx_import
} // namespace aotc

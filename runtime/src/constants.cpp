/// \file
/// The constants lifecycle (see constants.h).
#include "constants.h"

#include "error.h"
#include "permute.h"
#include "util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <unordered_set>

namespace aotc::rt {

uint64_t AllocationId::next() {
  static std::atomic<uint64_t> counter{2}; // 0 and 1: ArgSlot's tags
  return counter.fetch_add(1, std::memory_order_relaxed);
}
namespace {

constexpr uint64_t kMinBlobBytes = 64;


MemRef adopt(cl_mem mem) {
  return MemRef(mem, [](cl_mem m) {
    if (m)
      clReleaseMemObject(m);
  });
}

/// A read-only mapping of a model's weights file.
struct Mapping {
  void *addr = MAP_FAILED;
  size_t size = 0;
  ~Mapping() {
    if (addr != MAP_FAILED)
      munmap(addr, size);
  }
};

constexpr size_t kWeightsHeader = 4096;

/// Maps the weights file of \p d and checks its header against the .so:
/// from \p src (aotc_container_create_with_weights) when its fd is >= 0, else
/// desc.weights_file from the .so's folder. \p blob receives the payload.
aotc_status_t mapWeightsFile(const AotcModelDesc &d, const WeightsSource &src,
                             std::shared_ptr<Mapping> &out,
                             const uint8_t *&blob) {
  std::string name = d.weights_file;
  if (name.empty() || name.find('/') != std::string::npos || name == "." ||
      name == "..")
    return fail(AOTC_ERROR_INTERNAL, "model '%s': bad weights file name '%s'",
                d.model_name, name.c_str());
  std::string path;
  int fd = -1;
  bool own = src.fd < 0;
  if (own) {
    Dl_info info;
    if (!dladdr(&d, &info) || !info.dli_fname)
      return fail(AOTC_ERROR_NOT_FOUND,
                  "model '%s': cannot find the .so's own path to open its "
                  "weights file '%s'",
                  d.model_name, name.c_str());
    std::string so = info.dli_fname;
    size_t slash = so.rfind('/');
    path = (slash == std::string::npos ? "." : so.substr(0, slash)) + "/" +
           name;
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      return fail(AOTC_ERROR_NOT_FOUND,
                  "model '%s': cannot open its weights file '%s': %s",
                  d.model_name, path.c_str(), std::strerror(errno));
  } else {
    fd = src.fd;
    path = "weights_fd " + std::to_string(src.fd) + " at offset " +
           std::to_string(src.offset);
  }
  // Closes the descriptor the runtime opened (never the caller's).
  struct Closer {
    int fd;
    bool own;
    ~Closer() {
      if (own && fd >= 0)
        close(fd);
    }
  } closer{fd, own};
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': '%s' is not an aotc weights file (not a "
                "readable regular file)",
                d.model_name, path.c_str());
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  uint64_t base = own ? 0 : src.offset;
  uint64_t size = own ? fileSize : src.size;
  if (base > fileSize || size > fileSize - base)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': the weights range (%llu bytes at offset %llu) "
                "passes the end of its %llu-byte file",
                d.model_name, ull(size), ull(base), ull(fileSize));
  char header[24];
  uint64_t id = 0, payload = 0;
  bool ok = size >= kWeightsHeader &&
            pread(fd, header, sizeof(header), static_cast<off_t>(base)) ==
                static_cast<ssize_t>(sizeof(header));
  if (ok) {
    std::memcpy(&id, header + 8, 8);
    std::memcpy(&payload, header + 16, 8);
  }
  if (!ok || std::memcmp(header, "AOTCWGT1", 8) != 0)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': '%s' is not an aotc weights file", d.model_name,
                path.c_str());
  if (id != d.weights_id || payload != d.constants_blob_size)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': the weights file '%s' belongs to another "
                "compile (id %016llx, %llu bytes; this .so expects %016llx, "
                "%llu bytes)",
                d.model_name, path.c_str(), ull(id), ull(payload),
                ull(d.weights_id), ull(d.constants_blob_size));
  if (size != kWeightsHeader + payload)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': the weights file '%s' holds %llu bytes, its "
                "header says %llu",
                d.model_name, path.c_str(), ull(size),
                ull(kWeightsHeader + payload));
  // mmap takes a page-aligned offset: map from the page holding the range's
  // start and point past the difference.
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t mapStart = base / page * page, skew = base - mapStart;
  auto map = std::make_shared<Mapping>();
  map->size = static_cast<size_t>(size + skew);
  map->addr = mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd,
                   static_cast<off_t>(mapStart));
  int mapErrno = errno;
  if (map->addr == MAP_FAILED)
    return fail(AOTC_ERROR_OUT_OF_MEMORY,
                "model '%s': mapping the weights file '%s': %s", d.model_name,
                path.c_str(), std::strerror(mapErrno));
  blob = static_cast<const uint8_t *>(map->addr) + skew + kWeightsHeader;
  out = std::move(map);
  return AOTC_OK;
}

/// The shape of \p fold's view of its source into \p view (the source's
/// shape, or with a split its dim split_dim as [ceil(size / split), split]:
/// a last panel that the source does not fill is padded with zeros);
/// returns the view's rank, or -1 if the split does not fit.
int32_t foldView(const AotcFoldDesc &fold, int64_t *view) {
  if (fold.split <= 0) {
    for (int32_t k = 0; k < fold.rank; ++k)
      view[k] = fold.shape[k];
    return fold.rank;
  }
  if (fold.split_dim < 0 || fold.split_dim >= fold.rank ||
      fold.shape[fold.split_dim] < 0)
    return -1;
  int32_t r = 0;
  for (int32_t k = 0; k < fold.rank; ++k) {
    if (k == fold.split_dim) {
      view[r++] = (fold.shape[k] + fold.split - 1) / fold.split;
      view[r++] = fold.split;
    } else {
      view[r++] = fold.shape[k];
    }
  }
  return r;
}

/// Copies a source tensor of \p fold from its own layout into the layout
/// padded along split_dim to a multiple of the split (zeros in the
/// padding), or (!toPadded) from the padded layout back.
void copyPadded(const AotcFoldDesc &fold, const uint8_t *from, uint8_t *to,
                bool toPadded) {
  uint64_t elem = aotc_dtype_size(fold.dtype), outer = 1, inner = elem;
  for (int32_t k = 0; k < fold.split_dim; ++k)
    outer *= static_cast<uint64_t>(fold.shape[k]);
  for (int32_t k = fold.split_dim + 1; k < fold.rank; ++k)
    inner *= static_cast<uint64_t>(fold.shape[k]);
  uint64_t n = static_cast<uint64_t>(fold.shape[fold.split_dim]);
  uint64_t split = static_cast<uint64_t>(fold.split);
  uint64_t row = n * inner, padded = (n + split - 1) / split * split * inner;
  for (uint64_t o = 0; o < outer; ++o) {
    if (toPadded) {
      std::memcpy(to + o * padded, from + o * row, row);
      std::memset(to + o * padded + row, 0, padded - row);
    } else {
      std::memcpy(to + o * row, from + o * padded, row);
    }
  }
}

/// True if \p fold pads its source (a split that does not divide it).
bool padsSource(const AotcFoldDesc &fold) {
  return fold.split > 0 && fold.shape[fold.split_dim] % fold.split != 0;
}

} // namespace

void ConstantStore::release() {
  active_.reset();
  inactive_.reset();
  if (queue_)
    clReleaseCommandQueue(queue_);
  queue_ = nullptr;
}

aotc_status_t ConstantStore::init(cl_context context, const DeviceInfo &device,
                                  const AotcModelDesc &desc,
                                  const WeightsSource &weights) {
  if (weights.fd >= 0 && !desc.weights_file)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': a weights descriptor was given, but the model "
                "has no weights side file (its weights are inside the .so%s)",
                desc.model_name,
                desc.constants_blob_stored < desc.constants_blob_size
                    ? ", or given by updates: a weightless .so"
                    : "");
  context_ = context;
  device_ = &device;
  desc_ = &desc;
  for (int32_t i = 0; i + 1 < 2 * desc.num_frozen; i += 2)
    if (desc.frozen[i] && desc.frozen[i + 1])
      frozen_.emplace(desc.frozen[i], desc.frozen[i + 1]);
  for (int32_t i = 0; i < desc.num_constants; ++i) {
    const AotcConstantDesc &c = desc.constants[i];
    if (c.folded == AOTC_CONSTANT_COMPUTED)
      computed_.push_back(i);
    if (c.folded || !c.onnx_name || !*c.onnx_name ||
        frozen_.count(c.onnx_name))
      continue;
    Target t;
    t.name = c.onnx_name;
    t.direct = i;
    t.dtype = c.dtype;
    t.rank = c.rank;
    t.shape = c.shape;
    t.nbytes = c.nbytes;
    if (!byName_.emplace(c.onnx_name, targets_.size()).second)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': two constants are initializer '%s'",
                  desc.model_name, c.onnx_name);
    targets_.push_back(std::move(t));
  }
  AOTC_RT_RETURN_IF_ERROR(indexFolds());

  auto set = std::make_shared<ConstantSet>();
  set->blobBytes = desc.constants_blob_size;
  uint64_t allocBytes = std::max(desc.constants_blob_size, kMinBlobBytes);
  if (device.maxMemAllocSize && allocBytes > device.maxMemAllocSize)
    return fail(AOTC_ERROR_OUT_OF_MEMORY,
                "model '%s': the constants (%llu bytes) exceed the largest "
                "buffer '%s' can allocate (%llu bytes)",
                desc.model_name, ull(allocBytes), device.fullName.c_str(),
                ull(device.maxMemAllocSize));
  // The bytes the .so holds: all, or a weightless .so's prefix before the
  // updatable constants; or the whole blob in a mapped side file.
  const uint8_t *source = desc.constants_blob;
  uint64_t stored = source ? desc.constants_blob_stored : 0;
  std::shared_ptr<Mapping> mapping;
  if (desc.weights_file) {
    AOTC_RT_RETURN_IF_ERROR(mapWeightsFile(desc, weights, mapping, source));
    stored = desc.constants_blob_size;
  }
  if (stored > desc.constants_blob_size)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': %llu stored bytes of a %llu-byte constants blob",
                desc.model_name, ull(stored), ull(desc.constants_blob_size));
  cl_int err = CL_SUCCESS;
  queue_ = clCreateCommandQueue(context, device.device, 0, &err);
  if (err != CL_SUCCESS || !queue_)
    return fail(statusForClError(err), "clCreateCommandQueue on '%s': %s",
                device.fullName.c_str(), clErrorName(err));
  bool whole = stored > 0 && stored == allocBytes;
  // A CPU device shares the host's memory: its kernels read the blob where
  // the .so is mapped, so the weights are not resident twice. Needs the
  // device's base alignment (the blob is page aligned) and a blob as large
  // as the buffer.
  uint64_t align = std::max<uint64_t>(device.memBaseAddrAlignBits / 8, 1);
  bool share = whole && device.isCpu &&
               reinterpret_cast<uintptr_t>(source) % align == 0;
  cl_mem blob = clCreateBuffer(
      context,
      CL_MEM_READ_ONLY | (share   ? CL_MEM_USE_HOST_PTR
                          : whole ? CL_MEM_COPY_HOST_PTR
                                  : 0),
      static_cast<size_t>(allocBytes),
      whole ? const_cast<uint8_t *>(source) : nullptr, &err);
  if (err == CL_SUCCESS && blob && !whole && stored > 0)
    err = clEnqueueWriteBuffer(queue_, blob, CL_TRUE, 0,
                               static_cast<size_t>(stored), source, 0,
                               nullptr, nullptr);
  // A buffer over the mapped file keeps the mapping until it is released.
  set->blob = MemRef(blob, [mapping](cl_mem m) {
    if (m)
      clReleaseMemObject(m);
  });
  if (err != CL_SUCCESS || !blob)
    return fail(statusForClError(err),
                "model '%s': uploading %llu bytes of constants to '%s' "
                "failed: %s",
                desc.model_name, ull(allocBytes), device.fullName.c_str(),
                clErrorName(err));
  set->own.resize(desc.num_constants);
  set->userData.assign(desc.num_constants, nullptr);
  set->missing.assign(desc.num_constants, 0);
  // A weightless .so: the constants past the stored prefix must come
  // through an update before the first run; one that cannot (folded or
  // compiled in) makes the model unusable, which is an error now rather
  // than garbage later.
  for (int32_t i = 0; i < desc.num_constants; ++i) {
    const AotcConstantDesc &c = desc.constants[i];
    if (c.folded == AOTC_CONSTANT_COMPUTED) {
      // No value until the folding program has run (the container runs
      // it once the kernels exist).
      if (c.nbytes > 0) {
        set->missing[i] = 1;
        ++set->numMissing;
      }
      continue;
    }
    if (c.nbytes == 0 || c.offset + c.nbytes <= stored)
      continue;
    bool updatable = (c.onnx_name && byName_.count(c.onnx_name) &&
                      targets_[byName_.at(c.onnx_name)].direct == i) ||
                     packedReason_.count(i);
    if (!updatable)
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "model '%s': constant '%s' is not stored in the .so and "
                  "cannot be updated (folded or compiled in)",
                  desc.model_name, c.name);
    set->missing[i] = 1;
    ++set->numMissing;
  }
  active_ = std::move(set);
  return AOTC_OK;
}

aotc_status_t ConstantStore::indexFolds() {
  const AotcModelDesc &d = *desc_;
  for (int32_t f = 0; f < d.num_folds; ++f) {
    const AotcFoldDesc &fold = d.folds[f];
    bool ok = fold.source && fold.shape && fold.perm && fold.rank > 0 &&
              fold.rank <= AOTC_MAX_RANK && fold.target >= 0 &&
              fold.target < d.num_constants;
    if (ok) {
      const AotcConstantDesc &c = d.constants[fold.target];
      uint64_t bytes = aotc_dtype_size(fold.dtype);
      bool seen[kMaxPermuteRank] = {};
      int64_t view[kMaxPermuteRank];
      int32_t vr = foldView(fold, view);
      ok = vr > 0 && c.rank == vr && c.dtype == fold.dtype && bytes > 0;
      for (int32_t k = 0; ok && k < vr; ++k) {
        int32_t p = fold.perm[k];
        ok = p >= 0 && p < vr && !seen[p] && view[p] >= 0 &&
             c.shape[k] == view[p];
        if (ok) {
          seen[p] = true;
          bytes *= static_cast<uint64_t>(view[p]);
        }
      }
      ok = ok && bytes == c.nbytes;
    }
    if (!ok)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': fold %d (of '%s') does not match its target",
                  d.model_name, f, fold.source ? fold.source : "?");
    if (frozen_.count(fold.source))
      continue;
    auto [it, added] = byName_.emplace(fold.source, targets_.size());
    if (added) {
      Target t;
      t.name = fold.source;
      t.dtype = fold.dtype;
      t.rank = fold.rank;
      t.shape = fold.shape;
      // The initializer's own size (a padded panel's target is larger).
      t.nbytes = aotc_dtype_size(fold.dtype);
      for (int32_t k = 0; k < fold.rank; ++k)
        t.nbytes *= static_cast<uint64_t>(fold.shape[k]);
      targets_.push_back(std::move(t));
    }
    Target &t = targets_[it->second];
    bool same = t.dtype == fold.dtype && t.rank == fold.rank;
    for (int32_t k = 0; same && k < t.rank; ++k)
      same = t.shape[k] == fold.shape[k];
    if (!same)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': initializer '%s' has two shapes", d.model_name,
                  fold.source);
    t.folds.push_back(f);
    packedReason_[fold.target] =
        std::string("packed from initializer '") + fold.source +
        "' (rewritten when it is updated)";
  }
  return AOTC_OK;
}

bool ConstantStore::updatable(int32_t index, const char *&reason) const {
  const AotcConstantDesc &c = desc_->constants[index];
  reason = nullptr;
  if (auto it = packedReason_.find(index); it != packedReason_.end()) {
    reason = it->second.c_str();
    return false;
  }
  if (c.folded == AOTC_CONSTANT_COMPUTED) {
    reason = "computed by the model's folding program from its weights "
             "(recomputed when they are updated)";
    return false;
  }
  if (c.folded) {
    reason = "folded: computed at compile time";
    return false;
  }
  if (!c.onnx_name || !*c.onnx_name) {
    reason = "not an ONNX initializer (the value of a Constant node)";
    return false;
  }
  if (auto it = frozen_.find(c.onnx_name); it != frozen_.end()) {
    reason = it->second.c_str();
    return false;
  }
  return true;
}

const char *ConstantStore::initializerOf(int32_t index) const {
  const AotcConstantDesc &c = desc_->constants[index];
  for (int32_t f = 0; f < desc_->num_folds; ++f)
    if (desc_->folds[f].target == index)
      return desc_->folds[f].source;
  return c.onnx_name && *c.onnx_name ? c.onnx_name : c.name;
}

std::shared_ptr<const ConstantSet> ConstantStore::active() const {
  std::lock_guard<std::mutex> lock(setsMutex_);
  return active_;
}

aotc_status_t ConstantStore::lookup(const char *name, size_t &target) const {
  const AotcModelDesc &d = *desc_;
  if (!name)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "a constant entry has no name");
  if (auto it = byName_.find(name); it != byName_.end()) {
    target = it->second;
    return AOTC_OK;
  }
  if (auto it = frozen_.find(name); it != frozen_.end())
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': initializer '%s' cannot be updated: %s",
                d.model_name, name, it->second.c_str());
  for (int32_t i = 0; i < d.num_constants; ++i)
    if (d.constants[i].folded && d.constants[i].name &&
        std::strcmp(d.constants[i].name, name) == 0)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "model '%s': constant '%s' is folded (%s), not an "
                  "initializer: it cannot be given",
                  d.model_name, name,
                  d.constants[i].folded == AOTC_CONSTANT_COMPUTED
                      ? "computed from the weights by the folding program"
                      : "computed at compile time");
  return fail(AOTC_ERROR_NOT_FOUND,
              "model '%s' has no updatable constant '%s' (%zu updatable: "
              "aotc_container_extract_constants lists them)",
              d.model_name, name, targets_.size());
}

aotc_status_t ConstantStore::checkEntry(const aotc_constant_entry_t &e,
                                        const Target &c) const {
  const aotc_tensor_t &t = e.tensor;
  bool sameShape = t.rank == c.rank;
  for (int32_t k = 0; sameShape && k < c.rank; ++k)
    sameShape = t.shape[k] == c.shape[k];
  if (t.dtype != c.dtype || !sameShape)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "constant '%s': got %s%s, the model has %s%s", e.name,
                aotc_dtype_name(t.dtype),
                t.rank >= 0 && t.rank <= AOTC_MAX_RANK
                    ? shapeString(t.rank, t.shape).c_str()
                    : "[bad rank]",
                aotc_dtype_name(c.dtype), shapeString(c.rank, c.shape).c_str());
  if (c.nbytes > 0 && (!t.data || t.nbytes < c.nbytes))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "constant '%s': %s holds %llu bytes, its shape needs %llu",
                e.name, t.data ? "the tensor" : "null data",
                ull(t.data ? t.nbytes : 0), ull(c.nbytes));
  return AOTC_OK;
}

aotc_status_t ConstantStore::update(const aotc_constant_entry_t *entries,
                                    size_t n, bool useInactive,
                                    bool validateFull, bool userManaged) {
  if (n > 0 && !entries)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "entries is null but num_entries is %zu", n);
  std::lock_guard<std::mutex> serial(updateMutex_);
  // Check everything before changing anything.
  std::vector<size_t> target(n);
  std::unordered_set<size_t> given;
  for (size_t i = 0; i < n; ++i) {
    AOTC_RT_RETURN_IF_ERROR(lookup(entries[i].name, target[i]));
    AOTC_RT_RETURN_IF_ERROR(checkEntry(entries[i], targets_[target[i]]));
    if (!given.insert(target[i]).second)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "constant '%s' is given twice", entries[i].name);
  }
  if (validateFull)
    for (size_t k = 0; k < targets_.size(); ++k)
      if (!given.count(k))
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "validate_full: constant '%s' is not given (%zu of %zu "
                    "updatable constants are)",
                    targets_[k].name, given.size(), targets_.size());

  std::shared_ptr<const ConstantSet> base;
  {
    std::lock_guard<std::mutex> lock(setsMutex_);
    base = useInactive && inactive_ ? inactive_ : active_;
  }
  auto next = std::make_shared<ConstantSet>(*base);
  for (size_t i = 0; i < n; ++i)
    AOTC_RT_RETURN_IF_ERROR(
        write(*next, target[i], entries[i].tensor.data, userManaged));
  // The computed constants follow the weights they derive from.
  AOTC_RT_RETURN_IF_ERROR(fold(*next));
  std::lock_guard<std::mutex> lock(setsMutex_);
  (useInactive ? inactive_ : active_) = std::move(next);
  return AOTC_OK;
}

aotc_status_t ConstantStore::write(ConstantSet &set, size_t target,
                                   const void *data, bool userManaged) const {
  const AotcModelDesc &d = *desc_;
  const Target &t = targets_[target];
  auto setOwn = [&](int32_t c, MemRef mem, const void *user) {
    set.own[c] = std::move(mem);
    set.userData[c] = user;
    if (set.missing[c]) {
      set.missing[c] = 0;
      --set.numMissing;
    }
  };
  if (t.direct >= 0) {
    MemRef mem;
    AOTC_RT_RETURN_IF_ERROR(upload(t.name, data, t.nbytes, userManaged, mem));
    setOwn(t.direct, std::move(mem), userManaged ? data : nullptr);
  }
  // The packed copies: always the runtime's own memory (the target's size:
  // a padded last panel makes it larger than the source).
  std::vector<uint8_t> packed, padded;
  for (int32_t f : t.folds) {
    const AotcFoldDesc &fold = d.folds[f];
    uint64_t targetBytes = d.constants[fold.target].nbytes;
    packed.resize(static_cast<size_t>(targetBytes));
    int64_t view[kMaxPermuteRank];
    int32_t vr = foldView(fold, view); // checked by indexFolds
    const uint8_t *src = static_cast<const uint8_t *>(data);
    if (padsSource(fold)) {
      padded.resize(static_cast<size_t>(targetBytes));
      copyPadded(fold, src, padded.data(), /*toPadded=*/true);
      src = padded.data();
    }
    if (targetBytes > 0)
      permute(src, packed.data(), vr, view, fold.perm,
              aotc_dtype_size(fold.dtype), /*forward=*/true);
    MemRef mem;
    AOTC_RT_RETURN_IF_ERROR(
        upload(t.name, packed.data(), targetBytes, false, mem));
    setOwn(fold.target, std::move(mem), nullptr);
  }
  // The caller's memory, which run_const_fold reads again.
  if (userManaged)
    set.userSources[target] = data;
  else
    set.userSources.erase(target);
  return AOTC_OK;
}

aotc_status_t ConstantStore::fold(ConstantSet &set) const {
  if (computed_.empty())
    return AOTC_OK;
  size_t missing = 0;
  for (int32_t c : computed_)
    missing += set.missing[c] ? 1 : 0;
  if (set.numMissing > missing)
    return AOTC_OK; // a weight is missing: nothing to compute from yet
  if (!foldRunner_)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': no folding program runner",
                desc_->model_name);
  for (int32_t c : computed_) {
    const AotcConstantDesc &d = desc_->constants[c];
    MemRef mem;
    if (d.nbytes > 0) {
      cl_int err = CL_SUCCESS;
      cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE,
                                static_cast<size_t>(d.nbytes), nullptr, &err);
      mem = adopt(m);
      if (err != CL_SUCCESS || !m)
        return fail(statusForClError(err),
                    "computed constant '%s': allocating %llu bytes on '%s' "
                    "failed: %s",
                    d.name, ull(d.nbytes), device_->fullName.c_str(),
                    clErrorName(err));
    }
    set.own[c] = std::move(mem);
    set.userData[c] = nullptr;
    if (set.missing[c]) {
      set.missing[c] = 0;
      --set.numMissing;
    }
  }
  return foldRunner_(set);
}

aotc_status_t ConstantStore::upload(const char *what, const void *data,
                                    uint64_t bytes, bool useHostPtr,
                                    MemRef &out) const {
  out.reset();
  if (bytes == 0)
    return AOTC_OK;
  cl_int err = CL_SUCCESS;
  cl_mem_flags flags = CL_MEM_READ_ONLY | (useHostPtr ? CL_MEM_USE_HOST_PTR : 0);
  cl_mem m = clCreateBuffer(context_, flags, static_cast<size_t>(bytes),
                            useHostPtr ? const_cast<void *>(data) : nullptr,
                            &err);
  // A copy is written with a blocking write, so that the caller's memory
  // is free to change when the update returns.
  if (err == CL_SUCCESS && m && !useHostPtr)
    err = clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0,
                               static_cast<size_t>(bytes), data, 0, nullptr,
                               nullptr);
  out = adopt(m);
  if (err != CL_SUCCESS || !m) {
    out.reset();
    return fail(statusForClError(err),
                "constant '%s': %s %llu bytes on '%s' failed: %s", what,
                useHostPtr ? "wrapping the caller's" : "copying", ull(bytes),
                device_->fullName.c_str(), clErrorName(err));
  }
  return AOTC_OK;
}

aotc_status_t ConstantStore::runConstFold(bool useInactive) {
  std::lock_guard<std::mutex> serial(updateMutex_);
  std::shared_ptr<const ConstantSet> base;
  {
    std::lock_guard<std::mutex> lock(setsMutex_);
    base = useInactive ? inactive_ : active_;
  }
  if (!base)
    return fail(AOTC_ERROR_NOT_FOUND,
                "model '%s' has no inactive constant set to fold",
                desc_->model_name);
  // Picks up user-managed weights the caller changed in place since their
  // update: each is written again from the caller's memory (its packed
  // copies repacked; on a device that copied it, copied again), then the
  // folding program runs. Into a new set: runs in flight keep reading the
  // old one.
  if (computed_.empty() && base->userSources.empty())
    return AOTC_OK;
  auto next = std::make_shared<ConstantSet>(*base);
  for (const auto &[target, data] : base->userSources)
    AOTC_RT_RETURN_IF_ERROR(write(*next, target, data, /*userManaged=*/true));
  AOTC_RT_RETURN_IF_ERROR(fold(*next));
  std::lock_guard<std::mutex> lock(setsMutex_);
  (useInactive ? inactive_ : active_) = std::move(next);
  return AOTC_OK;
}

aotc_status_t ConstantStore::swap() {
  std::lock_guard<std::mutex> serial(updateMutex_);
  std::lock_guard<std::mutex> lock(setsMutex_);
  if (!inactive_)
    return fail(AOTC_ERROR_NOT_FOUND,
                "model '%s' has no inactive constant set to swap in (update "
                "with use_inactive first)",
                desc_->model_name);
  std::swap(active_, inactive_);
  return AOTC_OK;
}

aotc_status_t ConstantStore::freeInactive() {
  std::lock_guard<std::mutex> serial(updateMutex_);
  std::shared_ptr<const ConstantSet> dropped;
  {
    std::lock_guard<std::mutex> lock(setsMutex_);
    dropped = std::move(inactive_);
  }
  return AOTC_OK; // released with the last run that reads it
}

aotc_status_t ConstantStore::readBack(const ConstantSet &set, int32_t index,
                                      void *data) const {
  const AotcConstantDesc &c = desc_->constants[index];
  if (c.nbytes == 0)
    return AOTC_OK;
  if (set.missing[index])
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "constant '%s' has no value yet (weightless model)",
                c.name);
  cl_mem mem = set.own[index] ? set.own[index].get() : set.blob.get();
  size_t offset = set.own[index] ? 0 : static_cast<size_t>(c.offset);
  cl_int err = clEnqueueReadBuffer(queue_, mem, CL_TRUE, offset,
                                   static_cast<size_t>(c.nbytes), data, 0,
                                   nullptr, nullptr);
  if (err != CL_SUCCESS)
    return fail(statusForClError(err), "reading constant '%s' from '%s': %s",
                c.name, device_->fullName.c_str(), clErrorName(err));
  return AOTC_OK;
}

aotc_status_t ConstantStore::extract(bool useInactive,
                                     aotc_constant_entry_t *out,
                                     size_t capacity, size_t *outCount) const {
  if (!outCount || (capacity > 0 && !out))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "out_count is null, or out is null with capacity %zu",
                capacity);
  std::lock_guard<std::mutex> serial(updateMutex_);
  std::shared_ptr<const ConstantSet> set;
  {
    std::lock_guard<std::mutex> lock(setsMutex_);
    set = useInactive ? inactive_ : active_;
  }
  if (!set)
    return fail(AOTC_ERROR_NOT_FOUND,
                "model '%s' has no inactive constant set to read",
                desc_->model_name);
  *outCount = targets_.size();
  size_t n = std::min(capacity, targets_.size());
  aotc_status_t tooSmall = AOTC_OK;
  for (size_t k = 0; k < n; ++k) {
    const Target &c = targets_[k];
    aotc_constant_entry_t &e = out[k];
    e.name = c.name;
    e.tensor.dtype = c.dtype;
    e.tensor.rank = c.rank;
    std::fill(e.tensor.shape, e.tensor.shape + AOTC_MAX_RANK, 0);
    std::copy(c.shape, c.shape + c.rank, e.tensor.shape);
    if (!e.tensor.data)
      continue;
    if (e.tensor.nbytes < c.nbytes) {
      tooSmall = fail(AOTC_ERROR_BUFFER_TOO_SMALL,
                      "constant '%s': the buffer holds %llu bytes, the "
                      "constant %llu",
                      c.name, ull(e.tensor.nbytes), ull(c.nbytes));
      continue;
    }
    if (c.direct >= 0) {
      AOTC_RT_RETURN_IF_ERROR(readBack(*set, c.direct, e.tensor.data));
      continue;
    }
    // Only packed: read the packed copy back and unpack it.
    const AotcFoldDesc &fold = desc_->folds[c.folds.front()];
    uint64_t targetBytes = desc_->constants[fold.target].nbytes;
    std::vector<uint8_t> packed(static_cast<size_t>(targetBytes));
    AOTC_RT_RETURN_IF_ERROR(readBack(*set, fold.target, packed.data()));
    int64_t view[kMaxPermuteRank];
    int32_t vr = foldView(fold, view);
    uint8_t *out = static_cast<uint8_t *>(e.tensor.data);
    std::vector<uint8_t> padded(padsSource(fold) ? targetBytes : 0);
    if (targetBytes > 0)
      permute(packed.data(), padded.empty() ? out : padded.data(), vr, view,
              fold.perm, aotc_dtype_size(fold.dtype), /*forward=*/false);
    if (!padded.empty())
      copyPadded(fold, padded.data(), out, /*toPadded=*/false);
  }
  return tooSmall;
}

} // namespace aotc::rt

/// \file
/// The constants lifecycle (see constants.h).
#include "constants.h"

#include "error.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace aotc::rt {
namespace {

constexpr uint64_t kMinBlobBytes = 64;

unsigned long long ull(uint64_t value) {
  return static_cast<unsigned long long>(value);
}

MemRef adopt(cl_mem mem) {
  return MemRef(mem, [](cl_mem m) {
    if (m)
      clReleaseMemObject(m);
  });
}

std::string shapeText(int32_t rank, const int64_t *shape) {
  std::string s = "[";
  for (int32_t d = 0; d < rank; ++d)
    s += (d ? "," : "") + std::to_string(shape[d]);
  return s + "]";
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
                                  const AotcModelDesc &desc) {
  context_ = context;
  device_ = &device;
  desc_ = &desc;
  for (int32_t i = 0; i + 1 < 2 * desc.num_frozen; i += 2)
    if (desc.frozen[i] && desc.frozen[i + 1])
      frozen_.emplace(desc.frozen[i], desc.frozen[i + 1]);
  for (int32_t i = 0; i < desc.num_constants; ++i) {
    const AotcConstantDesc &c = desc.constants[i];
    if (c.folded || !c.onnx_name || !*c.onnx_name ||
        frozen_.count(c.onnx_name))
      continue;
    if (!updatable_.emplace(c.onnx_name, i).second)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': two constants are initializer '%s'",
                  desc.model_name, c.onnx_name);
    order_.push_back(i);
  }

  auto set = std::make_shared<ConstantSet>();
  set->blobBytes = desc.constants_blob_size;
  uint64_t allocBytes = std::max(desc.constants_blob_size, kMinBlobBytes);
  if (device.maxMemAllocSize && allocBytes > device.maxMemAllocSize)
    return fail(AOTC_ERROR_OUT_OF_MEMORY,
                "model '%s': the constants (%llu bytes) exceed the largest "
                "buffer '%s' can allocate (%llu bytes)",
                desc.model_name, ull(allocBytes), device.fullName.c_str(),
                ull(device.maxMemAllocSize));
  bool copy = desc.constants_blob && desc.constants_blob_size > 0;
  cl_int err = CL_SUCCESS;
  cl_mem blob = clCreateBuffer(
      context, CL_MEM_READ_ONLY | (copy ? CL_MEM_COPY_HOST_PTR : 0),
      static_cast<size_t>(allocBytes),
      copy ? const_cast<uint8_t *>(desc.constants_blob) : nullptr, &err);
  if (err != CL_SUCCESS || !blob)
    return fail(statusForClError(err),
                "model '%s': uploading %llu bytes of constants to '%s' "
                "failed: %s",
                desc.model_name, ull(allocBytes), device.fullName.c_str(),
                clErrorName(err));
  set->blob = adopt(blob);
  set->own.resize(desc.num_constants);
  set->userData.assign(desc.num_constants, nullptr);
  set->missing.assign(desc.num_constants, 0);
  // A weightless .so: every constant must come through an update before
  // the first run; one that cannot (folded or frozen) makes the model
  // unusable, which is an error now rather than garbage later.
  if (!desc.constants_blob)
    for (int32_t i = 0; i < desc.num_constants; ++i) {
      const AotcConstantDesc &c = desc.constants[i];
      if (c.nbytes == 0)
        continue;
      bool updatable = c.onnx_name && updatable_.count(c.onnx_name) &&
                       updatable_.at(c.onnx_name) == i;
      if (!updatable)
        return fail(AOTC_ERROR_UNSUPPORTED,
                    "model '%s' is weightless but its constant '%s' cannot "
                    "be updated (folded or compiled in)",
                    desc.model_name, c.name);
      set->missing[i] = 1;
      ++set->numMissing;
    }

  queue_ = clCreateCommandQueue(context, device.device, 0, &err);
  if (err != CL_SUCCESS || !queue_)
    return fail(statusForClError(err), "clCreateCommandQueue on '%s': %s",
                device.fullName.c_str(), clErrorName(err));
  active_ = std::move(set);
  return AOTC_OK;
}

bool ConstantStore::updatable(int32_t index, const char *&reason) const {
  const AotcConstantDesc &c = desc_->constants[index];
  reason = nullptr;
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

std::shared_ptr<const ConstantSet> ConstantStore::active() const {
  std::lock_guard<std::mutex> lock(setsMutex_);
  return active_;
}

aotc_status_t ConstantStore::lookup(const char *name, int32_t &index) const {
  const AotcModelDesc &d = *desc_;
  if (!name)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "a constant entry has no name");
  if (auto it = updatable_.find(name); it != updatable_.end()) {
    index = it->second;
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
                  "model '%s': constant '%s' is folded (computed at compile "
                  "time), not an initializer: it cannot be given",
                  d.model_name, name);
  return fail(AOTC_ERROR_NOT_FOUND,
              "model '%s' has no updatable constant '%s' (%zu updatable: "
              "aotc_container_extract_constants lists them)",
              d.model_name, name, order_.size());
}

aotc_status_t ConstantStore::checkEntry(const aotc_constant_entry_t &e,
                                        int32_t index) const {
  const AotcConstantDesc &c = desc_->constants[index];
  const aotc_tensor_t &t = e.tensor;
  bool sameShape = t.rank == c.rank;
  for (int32_t k = 0; sameShape && k < c.rank; ++k)
    sameShape = t.shape[k] == c.shape[k];
  if (t.dtype != c.dtype || !sameShape)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "constant '%s': got %s%s, the model has %s%s", e.name,
                aotc_dtype_name(t.dtype),
                t.rank >= 0 && t.rank <= AOTC_MAX_RANK
                    ? shapeText(t.rank, t.shape).c_str()
                    : "[bad rank]",
                aotc_dtype_name(c.dtype), shapeText(c.rank, c.shape).c_str());
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
  const AotcModelDesc &d = *desc_;
  // Check everything before changing anything.
  std::vector<int32_t> index(n);
  std::unordered_set<int32_t> given;
  for (size_t i = 0; i < n; ++i) {
    AOTC_RT_RETURN_IF_ERROR(lookup(entries[i].name, index[i]));
    AOTC_RT_RETURN_IF_ERROR(checkEntry(entries[i], index[i]));
    if (!given.insert(index[i]).second)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "constant '%s' is given twice", entries[i].name);
  }
  if (validateFull)
    for (int32_t i : order_)
      if (!given.count(i))
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "validate_full: constant '%s' is not given (%zu of %zu "
                    "updatable constants are)",
                    d.constants[i].onnx_name, given.size(), order_.size());

  std::shared_ptr<const ConstantSet> base;
  {
    std::lock_guard<std::mutex> lock(setsMutex_);
    base = useInactive && inactive_ ? inactive_ : active_;
  }
  auto next = std::make_shared<ConstantSet>(*base);
  for (size_t i = 0; i < n; ++i) {
    const AotcConstantDesc &c = d.constants[index[i]];
    const aotc_tensor_t &t = entries[i].tensor;
    MemRef mem;
    if (c.nbytes > 0) {
      cl_int err = CL_SUCCESS;
      cl_mem_flags flags =
          CL_MEM_READ_ONLY | (userManaged ? CL_MEM_USE_HOST_PTR : 0);
      // A copy is written with a blocking write: PoCL may read a
      // CL_MEM_COPY_HOST_PTR source after clCreateBuffer returns.
      cl_mem m = clCreateBuffer(context_, flags, static_cast<size_t>(c.nbytes),
                                userManaged ? t.data : nullptr, &err);
      if (err == CL_SUCCESS && m && !userManaged)
        err = clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0,
                                   static_cast<size_t>(c.nbytes), t.data, 0,
                                   nullptr, nullptr);
      mem = adopt(m);
      if (err != CL_SUCCESS || !m)
        return fail(statusForClError(err),
                    "constant '%s': %s %llu bytes on '%s' failed: %s",
                    entries[i].name,
                    userManaged ? "wrapping the caller's" : "copying",
                    ull(c.nbytes), device_->fullName.c_str(), clErrorName(err));
    }
    next->own[index[i]] = std::move(mem);
    next->userData[index[i]] = userManaged ? t.data : nullptr;
    if (next->missing[index[i]]) {
      next->missing[index[i]] = 0;
      --next->numMissing;
    }
  }
  std::lock_guard<std::mutex> lock(setsMutex_);
  (useInactive ? inactive_ : active_) = std::move(next);
  return AOTC_OK;
}

aotc_status_t ConstantStore::runConstFold(bool useInactive) {
  std::lock_guard<std::mutex> serial(updateMutex_);
  std::lock_guard<std::mutex> lock(setsMutex_);
  if (useInactive && !inactive_)
    return fail(AOTC_ERROR_NOT_FOUND,
                "model '%s' has no inactive constant set to fold",
                desc_->model_name);
  // Folded constants derive from frozen initializers only (see the header):
  // an updated set needs no recomputation.
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
                c.onnx_name);
  cl_mem mem = set.own[index] ? set.own[index].get() : set.blob.get();
  size_t offset = set.own[index] ? 0 : static_cast<size_t>(c.offset);
  cl_int err = clEnqueueReadBuffer(queue_, mem, CL_TRUE, offset,
                                   static_cast<size_t>(c.nbytes), data, 0,
                                   nullptr, nullptr);
  if (err != CL_SUCCESS)
    return fail(statusForClError(err), "reading constant '%s' from '%s': %s",
                c.onnx_name, device_->fullName.c_str(), clErrorName(err));
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
  *outCount = order_.size();
  size_t n = std::min(capacity, order_.size());
  aotc_status_t tooSmall = AOTC_OK;
  for (size_t k = 0; k < n; ++k) {
    const AotcConstantDesc &c = desc_->constants[order_[k]];
    aotc_constant_entry_t &e = out[k];
    e.name = c.onnx_name;
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
                      c.onnx_name, ull(e.tensor.nbytes), ull(c.nbytes));
      continue;
    }
    AOTC_RT_RETURN_IF_ERROR(readBack(*set, order_[k], e.tensor.data));
  }
  return tooSmall;
}

} // namespace aotc::rt

/// \file
/// The model container: loading a model onto a device, validating inputs,
/// running on a free instance and launching kernels.
#include "container.h"

#include "program_cache.h"

#include <algorithm>
#include <cstring>

namespace aotc::rt {
namespace {

/// The smallest device buffer (OpenCL forbids empty ones).
constexpr uint64_t kMinBufferBytes = 64;
/// Buffers grow in multiples of this.
constexpr uint64_t kBufferGranule = 256;
/// Default work-group sizes (dimension 0; the others get 1). GPUs: 64, two
/// warps or one wavefront, fine for coalesced pointwise kernels. CPUs (PoCL):
/// 256, a work-group function that PoCL vectorizes across work-items and few
/// enough groups to amortize their scheduling; kernels that want CPU-style
/// work-groups of 1 pass their local size explicitly. The size never depends
/// on the global size, because PoCL compiles a specialized work-group function
/// for every new local size (about 30 ms each): a ladder of smaller groups
/// for small launches (tried 2026-11-25) gained 15% on a 14x14 1x1
/// convolution and made the first run at a new batch size up to 216x the
/// steady one (MobileNetV2 at batch 8).
constexpr size_t kDefaultLocalGpu = 64;
constexpr size_t kDefaultLocalCpu = 256;

constexpr uint32_t kMaxInstances = 1024;

size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case AOTC_DT_FLOAT32:
  case AOTC_DT_INT32:
    return 4;
  case AOTC_DT_UINT8:
  case AOTC_DT_INT8:
  case AOTC_DT_BOOL:
    return 1;
  case AOTC_DT_INT64:
  case AOTC_DT_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case AOTC_DT_FLOAT32:
    return "float32";
  case AOTC_DT_UINT8:
    return "uint8";
  case AOTC_DT_INT8:
    return "int8";
  case AOTC_DT_INT32:
    return "int32";
  case AOTC_DT_INT64:
    return "int64";
  case AOTC_DT_BOOL:
    return "bool";
  case AOTC_DT_FLOAT64:
    return "float64";
  default:
    return "unknown";
  }
}

/// Bytes of a dense tensor; false on overflow, a negative dim or an unknown
/// dtype.
bool tensorBytes(int32_t dtype, int32_t rank, const int64_t *shape,
                 uint64_t &out) {
  uint64_t bytes = dtypeSize(dtype);
  if (bytes == 0)
    return false;
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] < 0)
      return false;
  // An empty tensor has 0 bytes, however large its other dims.
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] == 0) {
      out = 0;
      return true;
    }
  for (int32_t i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[i]), &bytes))
      return false;
  out = bytes;
  return true;
}

std::string shapeString(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

unsigned long long ull(uint64_t value) {
  return static_cast<unsigned long long>(value);
}

long long ll(int64_t value) { return static_cast<long long>(value); }

} // namespace

//===----------------------------------------------------------------------===//
// Buffers and instances
//===----------------------------------------------------------------------===//

aotc_status_t DeviceBuffer::ensure(cl_context context, const DeviceInfo &device,
                                   cl_mem_flags flags, uint64_t bytes,
                                   const char *what) {
  if (mem_ && bytes <= capacity_)
    return AOTC_OK;
  uint64_t limit = device.maxMemAllocSize ? device.maxMemAllocSize : ~0ull;
  if (bytes > limit)
    return fail(AOTC_ERROR_OUT_OF_MEMORY,
                "%s needs %llu bytes, more than the largest buffer '%s' can "
                "allocate (%llu bytes)",
                what, ull(bytes), device.fullName.c_str(), ull(limit));
  // Grow by at least half the current capacity, so that slowly increasing
  // sizes do not reallocate on every run.
  uint64_t wanted =
      std::max({bytes, capacity_ + capacity_ / 2, kMinBufferBytes});
  wanted = (wanted + kBufferGranule - 1) / kBufferGranule * kBufferGranule;
  wanted = std::max(std::min(wanted, limit), bytes);
  release();
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context, flags, static_cast<size_t>(wanted),
                              nullptr, &err);
  if (err != CL_SUCCESS || !mem)
    return fail(statusForClError(err),
                "allocating %llu bytes for %s on '%s' failed: %s", ull(wanted),
                what, device.fullName.c_str(), clErrorName(err));
  mem_ = mem;
  capacity_ = wanted;
  return AOTC_OK;
}

void DeviceBuffer::release() {
  if (mem_)
    clReleaseMemObject(mem_);
  mem_ = nullptr;
  capacity_ = 0;
}

Instance::~Instance() {
  if (queue)
    clFinish(queue);
  for (cl_kernel kernel : kernels)
    if (kernel)
      clReleaseKernel(kernel);
  inputs.clear();
  outputs.clear();
  arena.release();
  if (queue)
    clReleaseCommandQueue(queue);
}

/// Takes a free instance for the lifetime of the lease, waiting while all
/// instances are busy.
class InstanceLease {
public:
  explicit InstanceLease(Container &container) : container_(container) {
    std::unique_lock<std::mutex> lock(container_.instancesMutex_);
    container_.instanceFree_.wait(
        lock, [&] { return !container_.freeInstances_.empty(); });
    instance_ = container_.freeInstances_.back();
    container_.freeInstances_.pop_back();
  }
  ~InstanceLease() {
    {
      std::lock_guard<std::mutex> lock(container_.instancesMutex_);
      container_.freeInstances_.push_back(instance_);
    }
    container_.instanceFree_.notify_one();
  }
  InstanceLease(const InstanceLease &) = delete;
  InstanceLease &operator=(const InstanceLease &) = delete;
  Instance &get() { return *instance_; }

private:
  Container &container_;
  Instance *instance_ = nullptr;
};

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Container::~Container() {
  // Instances first: they finish their queues and hold kernels of program_.
  instances_.clear();
  freeInstances_.clear();
  if (program_)
    clReleaseProgram(program_);
  constants.release();
  if (context_)
    clReleaseContext(context_);
}

aotc_status_t Container::describeTensor(const char *kind,
                                        const AotcTensorDesc &tensor,
                                        aotc_tensor_info_t &out) {
  if (!tensor.name)
    return fail(AOTC_ERROR_INTERNAL, "model descriptor: %s without a name",
                kind);
  if (dtypeSize(tensor.dtype) == 0)
    return fail(AOTC_ERROR_UNSUPPORTED, "%s '%s' has unsupported dtype %d",
                kind, tensor.name, tensor.dtype);
  if (tensor.rank < 0 || tensor.rank > AOTC_MAX_RANK)
    return fail(AOTC_ERROR_UNSUPPORTED,
                "%s '%s' has rank %d; the C ABI supports at most %d", kind,
                tensor.name, tensor.rank, AOTC_MAX_RANK);
  if (tensor.rank > 0 && !tensor.dims)
    return fail(AOTC_ERROR_INTERNAL, "model descriptor: %s '%s' has no dims",
                kind, tensor.name);
  std::memset(&out, 0, sizeof(out));
  out.name = tensor.name;
  out.dtype = tensor.dtype;
  out.rank = tensor.rank;
  for (int32_t d = 0; d < tensor.rank; ++d) {
    const AotcDimDesc &dim = tensor.dims[d];
    if (dim.symbol >= desc_->num_symbols)
      return fail(AOTC_ERROR_INTERNAL,
                  "model descriptor: %s '%s' dim %d uses symbol %d of %d", kind,
                  tensor.name, d, dim.symbol, desc_->num_symbols);
    bool isStatic = dim.symbol < 0 && dim.value >= 0;
    out.dims[d] = isStatic ? dim.value : -1;
    out.dim_symbols[d] = dim.symbol >= 0 ? dim.symbol : -1;
    if (dim.text) {
      out.dim_texts[d] = dim.text;
    } else {
      strings_.push_back(dim.symbol >= 0 ? desc_->symbols[dim.symbol].name
                         : isStatic      ? std::to_string(dim.value)
                                         : std::string("?"));
      out.dim_texts[d] = strings_.back().c_str();
    }
  }
  return AOTC_OK;
}

aotc_status_t Container::validateDesc() {
  const AotcModelDesc &d = *desc_;
  if (d.desc_version != AOTC_MODEL_DESC_VERSION)
    return fail(AOTC_ERROR_UNSUPPORTED,
                "model descriptor version %u, this runtime reads version %d",
                d.desc_version, AOTC_MODEL_DESC_VERSION);
  if (!d.model_name)
    return fail(AOTC_ERROR_INTERNAL, "model descriptor: no model name");
  const char *model = d.model_name;
  if (d.num_kernels < 0 || d.num_symbols < 0 || d.num_inputs < 0 ||
      d.num_outputs < 0 || d.num_constants < 0 || d.num_metadata < 0)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': negative count in descriptor",
                model);
  if (d.num_kernels > 0 && (!d.cl_source || !d.kernel_names))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': kernels without source",
                model);
  for (int32_t i = 0; i < d.num_kernels; ++i)
    if (!d.kernel_names[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': kernel %d has no name",
                  model, i);
  if ((d.num_symbols > 0 && !d.symbols) || (d.num_inputs > 0 && !d.inputs) ||
      (d.num_outputs > 0 && !d.outputs) ||
      (d.num_constants > 0 && !d.constants) ||
      (d.num_metadata > 0 && !d.metadata))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': missing descriptor table",
                model);
  for (int32_t i = 0; i < d.num_symbols; ++i) {
    const AotcSymbolDesc &s = d.symbols[i];
    if (!s.name || s.min < 0 || s.min > s.max)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': symbol %d has no name or a bad range", model, i);
  }
  for (int32_t i = 0; i < 2 * d.num_metadata; ++i)
    if (!d.metadata[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': null metadata entry",
                  model);
  for (int32_t i = 0; i < d.num_constants; ++i) {
    const AotcConstantDesc &c = d.constants[i];
    const char *name = c.name ? c.name : "?";
    uint64_t bytes = 0;
    if (!c.name || !c.onnx_name || c.rank < 0 || (c.rank > 0 && !c.shape) ||
        !tensorBytes(c.dtype, c.rank, c.shape, bytes) || bytes != c.nbytes)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': constant '%s' has a bad name, dtype or shape",
                  model, name);
    if (c.offset % 64 != 0 || c.offset > d.constants_blob_size ||
        c.nbytes > d.constants_blob_size - c.offset)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': constant '%s' (offset %llu, %llu bytes) is not "
                  "a 64-byte aligned range of the %llu-byte constants blob",
                  model, name, ull(c.offset), ull(c.nbytes),
                  ull(d.constants_blob_size));
  }
  if (!d.arena_bytes || !d.output_shapes || !d.run)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': missing descriptor function",
                model);
  if (d.num_errors < 0 || (d.num_errors > 0 && !d.error_messages) ||
      d.num_checks < 0 || (d.num_checks > 0 && !d.check_messages) ||
      (d.num_checks > 0 && !d.check_symbols))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': bad error or check tables",
                model);
  for (int32_t i = 0; i < d.num_errors; ++i)
    if (!d.error_messages[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': null error message", model);
  for (int32_t i = 0; i < d.num_checks; ++i)
    if (!d.check_messages[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': null check message", model);
  if (d.num_input_slots < 0 || (d.num_input_slots > 0 && !d.input_slots) ||
      (d.num_input_slots > 0 && d.num_input_slots <= d.num_inputs))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': bad input slot table",
                model);
  std::vector<int> slotOfInput(d.num_inputs, 0);
  for (int32_t i = 0; i < d.num_input_slots; ++i) {
    const AotcInputSlotDesc &slot = d.input_slots[i];
    bool required = slot.kind == AOTC_SLOT_REQUIRED;
    bool known = required || slot.kind == AOTC_SLOT_DEFAULT ||
                 slot.kind == AOTC_SLOT_FIXED;
    int32_t count = required ? d.num_inputs : d.num_constants;
    if (!slot.name || !known || slot.index < 0 || slot.index >= count ||
        (required && slotOfInput[slot.index]++ > 0) ||
        (slot.kind == AOTC_SLOT_FIXED &&
         (slot.nbytes != d.constants[slot.index].nbytes ||
          (slot.nbytes > 0 && !slot.data))))
      return fail(AOTC_ERROR_INTERNAL, "model '%s': bad input slot %d", model,
                  i);
  }
  for (int32_t i = 0; i < d.num_inputs && d.num_input_slots > 0; ++i)
    if (slotOfInput[i] != 1)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': input %d has no input slot", model, i);
  inputInfos_.resize(d.num_inputs);
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    AOTC_RT_RETURN_IF_ERROR(
        describeTensor("input", d.inputs[i], inputInfos_[i]));
    for (int32_t k = 0; k < d.inputs[i].rank; ++k) {
      const AotcDimDesc &dim = d.inputs[i].dims[k];
      if (dim.symbol < 0 && dim.value < 0)
        return fail(AOTC_ERROR_INTERNAL,
                    "model '%s': input '%s' dim %d is neither static nor a "
                    "symbol",
                    model, d.inputs[i].name, k);
    }
  }
  outputInfos_.resize(d.num_outputs);
  for (int32_t i = 0; i < d.num_outputs; ++i)
    AOTC_RT_RETURN_IF_ERROR(
        describeTensor("output", d.outputs[i], outputInfos_[i]));
  return AOTC_OK;
}

aotc_status_t Container::createInstance(Instance &instance) {
  cl_int err = CL_SUCCESS;
  instance.queue = clCreateCommandQueue(
      context_, device_.device, profiling() ? CL_QUEUE_PROFILING_ENABLE : 0,
      &err);
  if (err != CL_SUCCESS || !instance.queue)
    return fail(statusForClError(err), "clCreateCommandQueue on '%s': %s",
                device_.fullName.c_str(), clErrorName(err));
  instance.kernels.assign(kernels_.size(), nullptr);
  for (size_t k = 0; k < kernels_.size(); ++k) {
    instance.kernels[k] =
        clCreateKernel(program_, kernels_[k].name.c_str(), &err);
    if (err != CL_SUCCESS || !instance.kernels[k])
      return fail(err == CL_INVALID_KERNEL_NAME ? AOTC_ERROR_INTERNAL
                                                : statusForClError(err),
                  "model '%s': creating kernel '%s' failed: %s",
                  desc_->model_name, kernels_[k].name.c_str(),
                  clErrorName(err));
  }
  instance.inputs = std::vector<DeviceBuffer>(desc_->num_inputs);
  instance.outputs = std::vector<DeviceBuffer>(desc_->num_outputs);
  if (desc_->num_input_slots > 0)
    instance.overrides = std::vector<DeviceBuffer>(desc_->num_constants);
  if (desc_->num_errors > 0)
    AOTC_RT_RETURN_IF_ERROR(
        instance.errors.ensure(context_, device_, CL_MEM_READ_WRITE,
                               sizeof(AotcErrorRecord), "the error record"));
  return AOTC_OK;
}

aotc_status_t Container::init(const AotcModelDesc *desc,
                              const aotc_container_options_t &options) {
  if (!desc)
    return fail(AOTC_ERROR_INTERNAL, "the model .so has no model descriptor");
  desc_ = desc;
  AOTC_RT_RETURN_IF_ERROR(validateDesc());
  if (options.num_instances == 0 || options.num_instances > kMaxInstances)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "num_instances must be in [1, %u], got %u", kMaxInstances,
                options.num_instances);
  AOTC_RT_RETURN_IF_ERROR(selectDevice(options.device, device_));

  cl_int err = CL_SUCCESS;
  cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM,
      reinterpret_cast<cl_context_properties>(device_.platform), 0};
  context_ =
      clCreateContext(properties, 1, &device_.device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS || !context_)
    return fail(statusForClError(err), "clCreateContext on '%s': %s",
                device_.fullName.c_str(), clErrorName(err));

  // The constants: uploaded once, shared by all instances.
  AOTC_RT_RETURN_IF_ERROR(constants.init(context_, device_, *desc_));

  // The program: one per container, from the cache or from source.
  kernels_.resize(desc_->num_kernels);
  if (desc_->num_kernels > 0) {
    ProgramRequest request;
    request.source = desc_->cl_source;
    request.sourceSize = desc_->cl_source_size;
    request.options = desc_->cl_build_options ? desc_->cl_build_options : "";
    request.modelName = desc_->model_name;
    request.cacheDirOption = options.cache_dir;
    ProgramResult program;
    AOTC_RT_RETURN_IF_ERROR(buildProgram(context_, device_, request, program));
    program_ = program.program;
    programFromCache_ = program.fromCache;
  }

  // Instances: a queue and every kernel each.
  for (int32_t k = 0; k < desc_->num_kernels; ++k)
    kernels_[k].name = desc_->kernel_names[k];
  instances_.reserve(options.num_instances);
  for (uint32_t i = 0; i < options.num_instances; ++i) {
    instances_.push_back(std::make_unique<Instance>());
    AOTC_RT_RETURN_IF_ERROR(createInstance(*instances_.back()));
    freeInstances_.push_back(instances_.back().get());
  }
  // Kernel limits, from the first instance's kernels.
  for (size_t k = 0; k < kernels_.size(); ++k) {
    KernelInfo &info = kernels_[k];
    cl_kernel kernel = instances_.front()->kernels[k];
    size_t wg = 0;
    if (clGetKernelWorkGroupInfo(kernel, device_.device,
                                 CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg,
                                 nullptr) != CL_SUCCESS ||
        wg == 0)
      wg = device_.maxWorkGroupSize;
    info.maxWorkGroupSize = std::min(wg, device_.maxWorkGroupSize);
    err = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(info.numArgs),
                          &info.numArgs, nullptr);
    if (err != CL_SUCCESS)
      return fail(AOTC_ERROR_DEVICE_ERROR,
                  "kernel '%s': CL_KERNEL_NUM_ARGS: %s", info.name.c_str(),
                  clErrorName(err));
    size_t local = device_.isCpu ? kDefaultLocalCpu : kDefaultLocalGpu;
    info.defaultLocalSize = std::max<size_t>(
        1,
        std::min({local, info.maxWorkGroupSize, device_.maxWorkItemSizes[0]}));
  }
  return AOTC_OK;
}

//===----------------------------------------------------------------------===//
// Validation and shapes
//===----------------------------------------------------------------------===//

aotc_status_t Container::bindInputs(const aotc_tensor_t *inputs,
                                    size_t numInputs, bool checkData,
                                    Binding &out) const {
  const AotcModelDesc &d = *desc_;
  AOTC_RT_RETURN_IF_ERROR(matchInputSlots(inputs, numInputs, checkData, out));
  out.symbols.assign(d.num_symbols, -1);
  out.inputBytes.assign(d.num_inputs, 0);
  // Where each symbol was bound, for messages.
  std::vector<std::pair<int32_t, int32_t>> &boundAt = out.boundAt;
  boundAt.assign(d.num_symbols, {-1, -1});
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    const AotcTensorDesc &want = d.inputs[i];
    const aotc_tensor_t &got = *out.inputs[i];
    if (got.dtype != want.dtype)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': expected dtype %s, got %s (%d)", want.name,
                  dtypeName(want.dtype), dtypeName(got.dtype), got.dtype);
    if (got.rank != want.rank)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': expected rank %d, got %d", want.name, want.rank,
                  got.rank);
    for (int32_t k = 0; k < want.rank; ++k) {
      const AotcDimDesc &dim = want.dims[k];
      int64_t size = got.shape[k];
      if (size < 0)
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "input '%s' dim %d: negative size %lld", want.name, k,
                    ll(size));
      if (dim.symbol < 0) {
        if (size != dim.value)
          return fail(AOTC_ERROR_INVALID_ARGUMENT,
                      "input '%s' dim %d: expected %lld, got %lld", want.name,
                      k, ll(dim.value), ll(size));
        continue;
      }
      const AotcSymbolDesc &sym = d.symbols[dim.symbol];
      int64_t &value = out.symbols[dim.symbol];
      if (value < 0) {
        if (size < sym.min || size > sym.max)
          return fail(AOTC_ERROR_INVALID_ARGUMENT,
                      "input '%s' dim %d: %s = %lld is outside its range "
                      "[%lld, %lld]",
                      want.name, k, sym.name, ll(size), ll(sym.min),
                      ll(sym.max));
        value = size;
        boundAt[dim.symbol] = {i, k};
      } else if (size != value) {
        auto [bi, bk] = boundAt[dim.symbol];
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "input '%s' dim %d: expected %s = %lld (as bound by input "
                    "'%s' dim %d), got %lld",
                    want.name, k, sym.name, ll(value), d.inputs[bi].name, bk,
                    ll(size));
      }
    }
    uint64_t bytes = 0;
    if (!tensorBytes(want.dtype, want.rank, got.shape, bytes))
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': shape %s is too large", want.name,
                  shapeString(want.rank, got.shape).c_str());
    out.inputBytes[i] = bytes;
    if (!checkData)
      continue;
    if (got.nbytes < bytes)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': buffer holds %llu bytes, shape %s %s needs %llu",
                  want.name, ull(got.nbytes),
                  shapeString(want.rank, got.shape).c_str(),
                  dtypeName(want.dtype), ull(bytes));
    if (bytes > 0 && !got.data)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': data is null but %llu bytes are needed",
                  want.name, ull(bytes));
  }
  for (int32_t s = 0; s < d.num_symbols; ++s)
    if (out.symbols[s] < 0)
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "model '%s': symbol '%s' is not bound by any input",
                  d.model_name, d.symbols[s].name);
  return checkSymbols(out.symbols.data(), &out);
}

aotc_status_t Container::matchInputSlots(const aotc_tensor_t *inputs,
                                         size_t numInputs, bool checkData,
                                         Binding &out) const {
  const AotcModelDesc &d = *desc_;
  bool all = d.num_input_slots > 0 &&
             numInputs == static_cast<size_t>(d.num_input_slots);
  if (numInputs != static_cast<size_t>(d.num_inputs) && !all) {
    if (d.num_input_slots > 0)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "model '%s' takes %d input(s), or %d with the defaults the "
                  "ONNX graph lists as inputs, got %zu",
                  d.model_name, d.num_inputs, d.num_input_slots, numInputs);
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s' takes %d input(s), got %zu", d.model_name,
                d.num_inputs, numInputs);
  }
  if (numInputs > 0 && !inputs)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "inputs is null");
  out.inputs.assign(d.num_inputs, nullptr);
  out.overrides.clear();
  if (!all) {
    for (int32_t i = 0; i < d.num_inputs; ++i)
      out.inputs[i] = &inputs[i];
    return AOTC_OK;
  }
  for (int32_t i = 0; i < d.num_input_slots; ++i) {
    const AotcInputSlotDesc &slot = d.input_slots[i];
    const aotc_tensor_t &got = inputs[i];
    if (slot.kind == AOTC_SLOT_REQUIRED) {
      out.inputs[slot.index] = &got;
      continue;
    }
    // A default's value: exactly the constant's dtype and shape.
    const AotcConstantDesc &c = d.constants[slot.index];
    bool same = got.dtype == c.dtype && got.rank == c.rank &&
                got.rank >= 0 && got.rank <= AOTC_MAX_RANK;
    for (int32_t k = 0; same && k < c.rank; ++k)
      same = got.shape[k] == c.shape[k];
    if (!same)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s' (a default): expected %s %s, got %s %s",
                  slot.name, dtypeName(c.dtype),
                  shapeString(c.rank, c.shape).c_str(), dtypeName(got.dtype),
                  got.rank >= 0 && got.rank <= AOTC_MAX_RANK
                      ? shapeString(got.rank, got.shape).c_str()
                      : "of a bad rank");
    if (!checkData)
      continue;
    if (got.nbytes < c.nbytes || (c.nbytes > 0 && !got.data))
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': buffer holds %llu bytes, %s needs %llu",
                  slot.name, ull(got.data ? got.nbytes : 0),
                  shapeString(c.rank, c.shape).c_str(), ull(c.nbytes));
    if (slot.kind == AOTC_SLOT_FIXED) {
      // Compiled into the code as shape data: only its default will do.
      if (c.nbytes > 0 && std::memcmp(got.data, slot.data, c.nbytes) != 0)
        return fail(AOTC_ERROR_UNSUPPORTED,
                    "input '%s': the model was compiled with this default's "
                    "value (it decides sizes), so a run cannot change it",
                    slot.name);
      continue;
    }
    out.overrides.emplace_back(slot.index, &got);
  }
  return AOTC_OK;
}

aotc_status_t Container::checkSymbols(const int64_t *symbols,
                                      const Binding *binding) const {
  const AotcModelDesc &d = *desc_;
  if (!d.check_symbols)
    return AOTC_OK;
  int32_t failed = d.check_symbols(symbols);
  if (failed < 0)
    return AOTC_OK;
  if (failed >= d.num_checks)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': check %d of %d failed",
                d.model_name, failed, d.num_checks);
  std::string values;
  for (int32_t s = 0; s < d.num_symbols; ++s) {
    values += formatString("%s%s = %lld", s ? ", " : "", d.symbols[s].name,
                           ll(symbols[s]));
    if (binding && binding->boundAt[s].first >= 0)
      values += formatString(" (input '%s' dim %d)",
                             d.inputs[binding->boundAt[s].first].name,
                             binding->boundAt[s].second);
  }
  return fail(AOTC_ERROR_INVALID_ARGUMENT, "model '%s': %s, with %s",
              d.model_name, d.check_messages[failed], values.c_str());
}

aotc_status_t Container::reportError(const AotcErrorRecord &record) const {
  const AotcModelDesc &d = *desc_;
  if (record.code < 1 || record.code > d.num_errors)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': a kernel recorded unknown error %d", d.model_name,
                record.code);
  std::string msg = d.error_messages[record.code - 1];
  auto replaceAll = [&](const std::string &key, const std::string &value) {
    for (size_t p = msg.find(key); p != std::string::npos;
         p = msg.find(key, p + value.size()))
      msg.replace(p, key.size(), value);
  };
  replaceAll("{value}", std::to_string(record.value));
  replaceAll("{extent}", std::to_string(record.extent));
  return fail(AOTC_ERROR_INVALID_ARGUMENT, "model '%s': %s", d.model_name,
              msg.c_str());
}

aotc_status_t
Container::fillOutputShapes(const Binding &binding, aotc_tensor_t *outputs,
                            size_t numOutputs,
                            std::vector<uint64_t> &outBytes) const {
  const AotcModelDesc &d = *desc_;
  if (numOutputs != static_cast<size_t>(d.num_outputs))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s' has %d output(s), got %zu", d.model_name,
                d.num_outputs, numOutputs);
  if (numOutputs > 0 && !outputs)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "outputs is null");
  size_t totalRank = 0;
  for (int32_t i = 0; i < d.num_outputs; ++i)
    totalRank += d.outputs[i].rank;
  // One spare element: output_shapes may be called with no rank at all.
  std::vector<int64_t> dims(totalRank + 1, -1);
  d.output_shapes(binding.symbols.data(), dims.data());
  outBytes.assign(numOutputs, 0);
  const int64_t *next = dims.data();
  for (size_t i = 0; i < numOutputs; ++i) {
    const AotcTensorDesc &want = d.outputs[i];
    aotc_tensor_t &o = outputs[i];
    o.dtype = want.dtype;
    o.rank = want.rank;
    std::memset(o.shape, 0, sizeof(o.shape));
    std::copy(next, next + want.rank, o.shape);
    next += want.rank;
    if (!tensorBytes(want.dtype, want.rank, o.shape, outBytes[i]))
      return fail(AOTC_ERROR_INTERNAL,
                  "output '%s': the model computed an invalid shape %s",
                  want.name, shapeString(want.rank, o.shape).c_str());
  }
  return AOTC_OK;
}

aotc_status_t Container::outputShapes(const aotc_tensor_t *inputs,
                                      size_t numInputs, aotc_tensor_t *outputs,
                                      size_t numOutputs) const {
  Binding binding;
  AOTC_RT_RETURN_IF_ERROR(bindInputs(inputs, numInputs, false, binding));
  std::vector<uint64_t> bytes;
  return fillOutputShapes(binding, outputs, numOutputs, bytes);
}

aotc_status_t Container::arenaBytes(const int64_t *symbols, size_t numSymbols,
                                    uint64_t *outBytes) const {
  const AotcModelDesc &d = *desc_;
  if (numSymbols != static_cast<size_t>(d.num_symbols))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s' has %d symbol(s), got %zu values", d.model_name,
                d.num_symbols, numSymbols);
  if (numSymbols > 0 && !symbols)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "symbol_values is null");
  for (size_t s = 0; s < numSymbols; ++s) {
    const AotcSymbolDesc &sym = d.symbols[s];
    if (symbols[s] < sym.min || symbols[s] > sym.max)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "symbol '%s': %lld is outside its range [%lld, %lld]",
                  sym.name, ll(symbols[s]), ll(sym.min), ll(sym.max));
  }
  AOTC_RT_RETURN_IF_ERROR(checkSymbols(symbols, nullptr));
  int64_t bytes = d.arena_bytes(symbols);
  if (bytes < 0)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': negative arena size %lld",
                d.model_name, ll(bytes));
  *outBytes = static_cast<uint64_t>(bytes);
  return AOTC_OK;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

aotc_status_t Container::run(const aotc_tensor_t *inputs, size_t numInputs,
                             aotc_tensor_t *outputs, size_t numOutputs) {
  const AotcModelDesc &d = *desc_;
  uint64_t startNs = hostNowNs();
  Binding binding;
  AOTC_RT_RETURN_IF_ERROR(bindInputs(inputs, numInputs, true, binding));
  std::vector<uint64_t> outputBytes;
  AOTC_RT_RETURN_IF_ERROR(
      fillOutputShapes(binding, outputs, numOutputs, outputBytes));
  // Every output's shape is filled before reporting a too-small buffer.
  for (size_t i = 0; i < numOutputs; ++i) {
    const aotc_tensor_t &o = outputs[i];
    if (o.nbytes < outputBytes[i])
      return fail(AOTC_ERROR_BUFFER_TOO_SMALL,
                  "output '%s': buffer holds %llu bytes, shape %s %s needs "
                  "%llu",
                  d.outputs[i].name, ull(o.nbytes),
                  shapeString(o.rank, o.shape).c_str(),
                  dtypeName(d.outputs[i].dtype), ull(outputBytes[i]));
    if (outputBytes[i] > 0 && !o.data)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "output '%s': data is null but nbytes is %llu",
                  d.outputs[i].name, ull(o.nbytes));
  }

  InstanceLease lease(*this);
  std::shared_ptr<const ConstantSet> set = constants.active();
  if (set->numMissing > 0)
    for (int32_t c = 0; c < d.num_constants; ++c)
      if (set->missing[c])
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "model '%s': constant '%s' has no value (a weightless "
                    "model takes every weight through "
                    "aotc_container_update_constants before its first run; "
                    "%zu missing)",
                    d.model_name, d.constants[c].onnx_name, set->numMissing);
  Instance &instance = lease.get();
  // Fixed while this run holds an instance (setProfiling takes them all).
  const bool profiling = this->profiling();
  if (profiling)
    instance.profile.begin(startNs);
  aotc_status_t status = enqueueRun(instance, *set, binding, inputs,
                                    outputs, outputBytes);
  if (profiling) {
    std::vector<aotc_profile_record_t> records;
    if (status == AOTC_OK)
      records = instance.profile.finish(hostNowNs());
    instance.profile.clear();
    if (status == AOTC_OK) {
      std::lock_guard<std::mutex> lock(profileMutex_);
      lastProfile_ = std::move(records);
    }
  }
  return status;
}

aotc_status_t Container::setProfiling(bool on) {
  // Take every instance, as runs release them; new runs wait meanwhile.
  std::vector<Instance *> held;
  {
    std::unique_lock<std::mutex> lock(instancesMutex_);
    while (held.size() < instances_.size()) {
      instanceFree_.wait(lock, [&] { return !freeInstances_.empty(); });
      held.insert(held.end(), freeInstances_.begin(), freeInstances_.end());
      freeInstances_.clear();
    }
  }
  aotc_status_t status = AOTC_OK;
  if (on != profiling()) {
    // New queues first, so that a failure changes nothing.
    std::vector<cl_command_queue> queues;
    for (size_t i = 0; i < held.size() && status == AOTC_OK; ++i) {
      cl_int err = CL_SUCCESS;
      cl_command_queue q = clCreateCommandQueue(
          context_, device_.device, on ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
      if (err != CL_SUCCESS || !q)
        status = fail(statusForClError(err),
                      "clCreateCommandQueue (profiling %s) on '%s': %s",
                      on ? "on" : "off", device_.fullName.c_str(),
                      clErrorName(err));
      else
        queues.push_back(q);
    }
    if (status == AOTC_OK) {
      for (size_t i = 0; i < held.size(); ++i) {
        clFinish(held[i]->queue);
        clReleaseCommandQueue(held[i]->queue);
        held[i]->queue = queues[i];
      }
      profiling_.store(on);
      if (!on) {
        std::lock_guard<std::mutex> lock(profileMutex_);
        lastProfile_.clear();
      }
    } else {
      for (cl_command_queue q : queues)
        clReleaseCommandQueue(q);
    }
  }
  {
    std::lock_guard<std::mutex> lock(instancesMutex_);
    freeInstances_.insert(freeInstances_.end(), held.begin(), held.end());
  }
  instanceFree_.notify_all();
  return status;
}

std::vector<aotc_profile_record_t> Container::lastProfile() const {
  std::lock_guard<std::mutex> lock(profileMutex_);
  return lastProfile_;
}

aotc_status_t Container::enqueueRun(Instance &instance,
                                    const ConstantSet &constants,
                                    const Binding &binding,
                                    const aotc_tensor_t *inputs,
                                    aotc_tensor_t *outputs,
                                    const std::vector<uint64_t> &outputBytes) {
  const AotcModelDesc &d = *desc_;
  int64_t arena = d.arena_bytes(binding.symbols.data());
  if (arena < 0)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': negative arena size %lld",
                d.model_name, ll(arena));
  std::string what = formatString("the arena of model '%s'", d.model_name);
  AOTC_RT_RETURN_IF_ERROR(
      instance.arena.ensure(context_, device_, CL_MEM_READ_WRITE,
                            static_cast<uint64_t>(arena), what.c_str()));
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    what = formatString("input '%s'", d.inputs[i].name);
    AOTC_RT_RETURN_IF_ERROR(
        instance.inputs[i].ensure(context_, device_, CL_MEM_READ_ONLY,
                                  binding.inputBytes[i], what.c_str()));
  }
  for (const auto &[c, tensor] : binding.overrides) {
    what = formatString("the value of default '%s'", d.constants[c].name);
    AOTC_RT_RETURN_IF_ERROR(
        instance.overrides[c].ensure(context_, device_, CL_MEM_READ_ONLY,
                                     d.constants[c].nbytes, what.c_str()));
  }
  for (int32_t i = 0; i < d.num_outputs; ++i) {
    what = formatString("output '%s'", d.outputs[i].name);
    AOTC_RT_RETURN_IF_ERROR(instance.outputs[i].ensure(
        context_, device_, CL_MEM_READ_WRITE, outputBytes[i], what.c_str()));
  }

  // From here on commands are in flight: always finish before returning, so
  // the caller's host memory is never touched after the call.
  aotc_status_t status = AOTC_OK;
  static const AotcErrorRecord kNoError = {0, 0, 0, 0, 0};
  AotcErrorRecord record = kNoError;
  bool checksErrors = d.num_errors > 0;
  if (checksErrors) {
    cl_int err = clEnqueueWriteBuffer(
        instance.queue, instance.errors.mem(), CL_FALSE, 0, sizeof(kNoError),
        &kNoError, 0, nullptr, instance.profile.next(profiling()));
    if (err != CL_SUCCESS)
      status = fail(statusForClError(err), "clearing the error record: %s",
                    clErrorName(err));
    else
      instance.profile.add(AOTC_PROFILE_COPY_IN, -1, 0, sizeof(kNoError));
  }
  for (int32_t i = 0; i < d.num_inputs && status == AOTC_OK; ++i) {
    if (binding.inputBytes[i] == 0)
      continue;
    cl_int err = clEnqueueWriteBuffer(
        instance.queue, instance.inputs[i].mem(), CL_FALSE, 0,
        static_cast<size_t>(binding.inputBytes[i]), binding.inputs[i]->data, 0,
        nullptr, instance.profile.next(profiling()));
    if (err != CL_SUCCESS)
      status =
          fail(statusForClError(err), "copying input '%s' to '%s': %s",
               d.inputs[i].name, device_.fullName.c_str(), clErrorName(err));
    else
      instance.profile.add(AOTC_PROFILE_COPY_IN, i, 0,
                           static_cast<double>(binding.inputBytes[i]));
  }
  for (const auto &[c, tensor] : binding.overrides) {
    if (status != AOTC_OK || d.constants[c].nbytes == 0)
      continue;
    cl_int err = clEnqueueWriteBuffer(
        instance.queue, instance.overrides[c].mem(), CL_FALSE, 0,
        static_cast<size_t>(d.constants[c].nbytes), tensor->data, 0, nullptr,
        instance.profile.next(profiling()));
    if (err != CL_SUCCESS)
      status = fail(statusForClError(err), "copying input '%s' to '%s': %s",
                    d.constants[c].name, device_.fullName.c_str(),
                    clErrorName(err));
    else
      instance.profile.add(AOTC_PROFILE_COPY_IN, -2 - c, 0,
                           static_cast<double>(d.constants[c].nbytes));
  }
  if (status == AOTC_OK) {
    AotcRunCtx ctx;
    ctx.container = this;
    ctx.instance = &instance;
    ctx.constants = &constants;
    if (!binding.overrides.empty()) {
      ctx.overrides.assign(d.num_constants, nullptr);
      for (const auto &override : binding.overrides)
        ctx.overrides[override.first] = instance.overrides[override.first].mem();
    }
    if (profiling() && d.kernel_costs && d.num_kernels > 0) {
      ctx.costs.assign(2 * static_cast<size_t>(d.num_kernels), 0.0);
      d.kernel_costs(binding.symbols.data(), ctx.costs.data());
    }
    uint64_t enqueueStart = hostNowNs();
    int32_t result = d.run(&ctx, binding.symbols.data());
    if (profiling())
      instance.profile.setEnqueue(enqueueStart, hostNowNs());
    if (result != 0) {
      status = ctx.status != AOTC_OK ? ctx.status
                                     : fail(AOTC_ERROR_INTERNAL,
                                            "model '%s': run failed with "
                                            "status %d",
                                            d.model_name, result);
    }
  }
  for (int32_t i = 0; i < d.num_outputs && status == AOTC_OK; ++i) {
    if (outputBytes[i] == 0)
      continue;
    cl_int err =
        clEnqueueReadBuffer(instance.queue, instance.outputs[i].mem(), CL_FALSE,
                            0, static_cast<size_t>(outputBytes[i]),
                            outputs[i].data, 0, nullptr,
                            instance.profile.next(profiling()));
    if (err != CL_SUCCESS)
      status =
          fail(statusForClError(err), "copying output '%s' from '%s': %s",
               d.outputs[i].name, device_.fullName.c_str(), clErrorName(err));
    else
      instance.profile.add(AOTC_PROFILE_COPY_OUT, i, 0,
                           static_cast<double>(outputBytes[i]));
  }
  if (checksErrors && status == AOTC_OK) {
    cl_int err =
        clEnqueueReadBuffer(instance.queue, instance.errors.mem(), CL_FALSE, 0,
                            sizeof(record), &record, 0, nullptr,
                            instance.profile.next(profiling()));
    if (err != CL_SUCCESS)
      status = fail(statusForClError(err), "reading the error record: %s",
                    clErrorName(err));
    else
      instance.profile.add(AOTC_PROFILE_COPY_OUT, -1, 0, sizeof(record));
  }
  cl_int err = clFinish(instance.queue);
  if (status == AOTC_OK && err != CL_SUCCESS)
    status = fail(statusForClError(err), "model '%s' on '%s': clFinish: %s",
                  d.model_name, device_.fullName.c_str(), clErrorName(err));
  if (status == AOTC_OK && record.code != 0)
    status = reportError(record);
  return status;
}

aotc_status_t Container::launch(AotcRunCtx &ctx, int32_t kernel,
                                const AotcArg *args, int32_t nargs,
                                int32_t dims, const uint64_t *global,
                                const uint64_t *local) const {
  const AotcModelDesc &d = *desc_;
  if (kernel < 0 || kernel >= d.num_kernels)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': launch of kernel %d of %d",
                d.model_name, kernel, d.num_kernels);
  const KernelInfo &info = kernels_[kernel];
  const char *name = info.name.c_str();
  if (nargs < 0 || (nargs > 0 && !args) || dims < 1 || dims > 3 || !global)
    return fail(AOTC_ERROR_INTERNAL,
                "kernel '%s': bad launch (%d args, %d dims, global %p)", name,
                nargs, dims, static_cast<const void *>(global));

  // A buffer argument is two OpenCL arguments: the cl_mem and a byte offset.
  cl_uint clArgs = 0;
  for (int32_t a = 0; a < nargs; ++a)
    clArgs +=
        (args[a].kind == AOTC_ARG_I64 || args[a].kind == AOTC_ARG_I32) ? 1 : 2;
  if (clArgs != info.numArgs)
    return fail(AOTC_ERROR_INTERNAL,
                "kernel '%s' takes %u OpenCL arguments, the wrapper passed %u",
                name, info.numArgs, clArgs);

  Instance &instance = *ctx.instance;
  cl_kernel k = instance.kernels[kernel];
  cl_uint index = 0;
  for (int32_t a = 0; a < nargs; ++a) {
    const AotcArg &arg = args[a];
    cl_mem mem = nullptr;
    uint64_t capacity = 0;
    const char *kind = "";
    int64_t byteOffset = arg.value;
    switch (arg.kind) {
    case AOTC_ARG_INPUT:
    case AOTC_ARG_OUTPUT: {
      bool isInput = arg.kind == AOTC_ARG_INPUT;
      int32_t count = isInput ? d.num_inputs : d.num_outputs;
      kind = isInput ? "input" : "output";
      if (arg.index < 0 || arg.index >= count)
        return fail(AOTC_ERROR_INTERNAL, "kernel '%s' argument %d: %s %d of %d",
                    name, a, kind, arg.index, count);
      const DeviceBuffer &buffer =
          isInput ? instance.inputs[arg.index] : instance.outputs[arg.index];
      mem = buffer.mem();
      capacity = buffer.capacity();
      break;
    }
    case AOTC_ARG_CONSTANT: {
      kind = "constants";
      mem = ctx.constants->blob.get();
      capacity = ctx.constants->blobBytes;
      if (arg.index < 0 || arg.index >= d.num_constants)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d: constant %d of %d", name, a,
                    arg.index, d.num_constants);
      // A default replaced in this run, or a constant updated in this set:
      // its own buffer, at offset 0.
      cl_mem own = !ctx.overrides.empty() && ctx.overrides[arg.index]
                       ? ctx.overrides[arg.index]
                       : ctx.constants->own[arg.index].get();
      if (!own)
        break;
      const AotcConstantDesc &c = d.constants[arg.index];
      if (arg.value != static_cast<int64_t>(c.offset))
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d: constant '%s' at offset %lld, "
                    "not %llu",
                    name, a, c.name, ll(arg.value), ull(c.offset));
      mem = own;
      capacity = c.nbytes;
      byteOffset = 0;
      kind = "updated constant's";
      break;
    }
    case AOTC_ARG_ARENA:
      kind = "arena";
      mem = instance.arena.mem();
      capacity = instance.arena.capacity();
      break;
    case AOTC_ARG_ERRORS:
      kind = "error record";
      mem = instance.errors.mem();
      capacity = instance.errors.capacity();
      if (!mem)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' records errors but the model declares none",
                    name);
      break;
    case AOTC_ARG_I64: {
      cl_long value = arg.value;
      cl_int err = clSetKernelArg(k, index++, sizeof(value), &value);
      if (err != CL_SUCCESS)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d (long): clSetKernelArg: %s", name,
                    a, clErrorName(err));
      continue;
    }
    case AOTC_ARG_I32: {
      if (arg.value < INT32_MIN || arg.value > INT32_MAX)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d: %lld does not fit an int", name,
                    a, ll(arg.value));
      cl_int value = static_cast<cl_int>(arg.value);
      cl_int err = clSetKernelArg(k, index++, sizeof(value), &value);
      if (err != CL_SUCCESS)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d (int): clSetKernelArg: %s", name,
                    a, clErrorName(err));
      continue;
    }
    default:
      return fail(AOTC_ERROR_INTERNAL,
                  "kernel '%s' argument %d: unknown kind %d", name, a,
                  arg.kind);
    }
    if (byteOffset < 0 || static_cast<uint64_t>(byteOffset) > capacity)
      return fail(AOTC_ERROR_INTERNAL,
                  "kernel '%s' argument %d: offset %lld is outside the %s "
                  "buffer (%llu bytes)",
                  name, a, ll(byteOffset), kind, ull(capacity));
    cl_ulong offset = static_cast<cl_ulong>(byteOffset);
    cl_int err = clSetKernelArg(k, index++, sizeof(cl_mem), &mem);
    if (err == CL_SUCCESS)
      err = clSetKernelArg(k, index++, sizeof(offset), &offset);
    if (err != CL_SUCCESS)
      return fail(AOTC_ERROR_INTERNAL,
                  "kernel '%s' argument %d (%s buffer): clSetKernelArg: %s",
                  name, a, kind, clErrorName(err));
  }

  size_t g[3] = {1, 1, 1};
  size_t l[3] = {1, 1, 1};
  for (int32_t i = 0; i < dims; ++i)
    if (global[i] == 0)
      return AOTC_OK; // Nothing to do: OpenCL 1.2 rejects empty ranges.
  if (local) {
    uint64_t product = 1;
    for (int32_t i = 0; i < dims; ++i) {
      if (local[i] == 0 || local[i] > device_.maxWorkItemSizes[i])
        return fail(AOTC_ERROR_UNSUPPORTED,
                    "kernel '%s': local size %llu in dim %d is not in [1, "
                    "%zu] on '%s'",
                    name, ull(local[i]), i, device_.maxWorkItemSizes[i],
                    device_.fullName.c_str());
      product *= local[i];
      l[i] = static_cast<size_t>(local[i]);
    }
    if (product > info.maxWorkGroupSize)
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "kernel '%s': work-group of %llu work-items exceeds its "
                  "limit of %zu on '%s'",
                  name, ull(product), info.maxWorkGroupSize,
                  device_.fullName.c_str());
  } else {
    l[0] = info.defaultLocalSize;
  }
  for (int32_t i = 0; i < dims; ++i) {
    uint64_t rounded = 0;
    if (__builtin_add_overflow(global[i], l[i] - 1, &rounded))
      return fail(AOTC_ERROR_UNSUPPORTED, "kernel '%s': global size overflow",
                  name);
    g[i] = static_cast<size_t>(rounded / l[i] * l[i]);
  }
  cl_int err = clEnqueueNDRangeKernel(
      instance.queue, k, static_cast<cl_uint>(dims), nullptr, g, l, 0, nullptr,
      instance.profile.next(profiling()));
  if (err != CL_SUCCESS)
    return fail(statusForClError(err),
                "enqueueing kernel '%s' (global [%zu,%zu,%zu], local "
                "[%zu,%zu,%zu]) on '%s' failed: %s",
                name, g[0], g[1], g[2], l[0], l[1], l[2],
                device_.fullName.c_str(), clErrorName(err));
  size_t c = 2 * static_cast<size_t>(kernel);
  bool costs = c + 1 < ctx.costs.size();
  instance.profile.add(AOTC_PROFILE_KERNEL, kernel, costs ? ctx.costs[c] : 0,
                       costs ? ctx.costs[c + 1] : 0);
  return AOTC_OK;
}

} // namespace aotc::rt

/// Called by the generated wrapper; hidden, never exported from the .so.
extern "C" __attribute__((visibility("hidden"))) int32_t
aotc_rt_launch(AotcRunCtx *ctx, int32_t kernel, const AotcArg *args,
               int32_t nargs, int32_t dims, const uint64_t *global,
               const uint64_t *local) {
  using namespace aotc::rt;
  if (!ctx || !ctx->container || !ctx->instance)
    return fail(AOTC_ERROR_INTERNAL, "aotc_rt_launch: null run context");
  if (ctx->status != AOTC_OK)
    return ctx->status;
  aotc_status_t status = AOTC_OK;
  try {
    status =
        ctx->container->launch(*ctx, kernel, args, nargs, dims, global, local);
  } catch (const std::bad_alloc &) {
    status = fail(AOTC_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (...) {
    status = fail(AOTC_ERROR_INTERNAL, "aotc_rt_launch: unexpected exception");
  }
  ctx->status = status;
  return status;
}

/// \file
/// The model container: loading a model onto a device (program, instances),
/// and running on a free instance. Input binding lives in binding.cpp, the
/// launch path in launch.cpp, the constant sets in constants.cpp, the
/// descriptor's checks in validate_desc.cpp.
#include "container.h"

#include "program_cache.h"
#include "util.h"

#include <algorithm>
#include <cstring>

namespace aotc::rt {
namespace {

/// The smallest device buffer (OpenCL forbids empty ones).
constexpr uint64_t kMinBufferBytes = 64;
/// Buffers grow in multiples of this.
constexpr uint64_t kBufferGranule = 256;
/// Default work-group sizes (dimension 0; the others get 1). GPUs: 64, two
/// warps or one wavefront, fine for coalesced pointwise kernels. CPUs
/// (PoCL): at most 256, a work-group function that PoCL vectorizes across
/// work-items; a launch too small for 8 groups of 256 per compute unit
/// takes smaller groups (cpuLocalSize in launch.cpp). Kernels that want
/// other work-groups pass their local size explicitly.
constexpr size_t kDefaultLocalGpu = 64;
constexpr size_t kDefaultLocalCpu = 256;

constexpr uint32_t kMaxInstances = 1024;

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
                              const aotc_container_options_t &options,
                              const WeightsSource &weights) {
  if (!desc)
    return fail(AOTC_ERROR_INTERNAL, "the model .so has no model descriptor");
  desc_ = desc;
  AOTC_RT_RETURN_IF_ERROR(validateDesc());
  if (options.num_instances == 0 || options.num_instances > kMaxInstances)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "num_instances must be in [1, %u], got %u", kMaxInstances,
                options.num_instances);
  AOTC_RT_RETURN_IF_ERROR(selectDevice(options.device, device_));
  AOTC_RT_RETURN_IF_ERROR(checkDeviceExtensions());
  preferPrebuiltWorkGroups(device_);

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
  AOTC_RT_RETURN_IF_ERROR(constants.init(context_, device_, *desc_, weights));

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
  // The folding program computes the first set's computed constants, now
  // that the kernels and their limits are known (a weightless model's wait
  // for its weights).
  constants.setFoldRunner(
      [this](const ConstantSet &set) { return runFold(set); });
  AOTC_RT_RETURN_IF_ERROR(constants.runConstFold(/*useInactive=*/false));
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
  AOTC_RT_RETURN_IF_ERROR(fillOutputShapes(binding.symbols.data(), outputs,
                                           numOutputs, outputBytes));
  // Every output's shape is filled before reporting a too-small buffer; an
  // output sized by a count is checked when the run has read it.
  for (size_t i = 0; i < numOutputs; ++i)
    if (outputBytes[i] != kUnknownBytes)
      AOTC_RT_RETURN_IF_ERROR(
          checkOutputCapacity(outputs[i], i, outputBytes[i]));
  (void)d;
  return runOnInstance(binding, outputs, outputBytes, nullptr, startNs);
}

aotc_status_t Container::checkOutputCapacity(const aotc_tensor_t &o, size_t i,
                                             uint64_t bytes) const {
  const AotcModelDesc &d = *desc_;
  if (o.nbytes < bytes)
    return fail(AOTC_ERROR_BUFFER_TOO_SMALL,
                "output '%s': buffer holds %llu bytes, shape %s %s needs "
                "%llu",
                d.outputs[i].name, ull(o.nbytes),
                shapeString(o.rank, o.shape).c_str(),
                dtypeName(d.outputs[i].dtype), ull(bytes));
  if (bytes > 0 && !o.data)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "output '%s': data is null but nbytes is %llu",
                d.outputs[i].name, ull(o.nbytes));
  return AOTC_OK;
}

aotc_status_t Container::checkDeviceTensor(
    const char *kind, const char *name, const aotc_device_tensor_t &t) const {
  if (!t.buffer)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "%s '%s': buffer is null", kind,
                name);
  if (t.offset % 256 != 0)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "%s '%s': offset %llu is not a multiple of 256", kind, name,
                ull(t.offset));
  cl_mem mem = static_cast<cl_mem>(t.buffer);
  cl_context owner = nullptr;
  size_t size = 0;
  cl_int err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(owner), &owner,
                                  nullptr);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
  if (err != CL_SUCCESS)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "%s '%s': not an OpenCL buffer (%s)", kind, name,
                clErrorName(err));
  if (owner != context_)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "%s '%s': the buffer belongs to another OpenCL context (use "
                "aotc_container_opencl_handles)",
                kind, name);
  if (t.offset > size || t.nbytes > size - t.offset)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "%s '%s': %llu bytes at offset %llu pass the end of the "
                "%zu-byte buffer",
                kind, name, ull(t.nbytes), ull(t.offset), size);
  return AOTC_OK;
}

aotc_status_t Container::runDevice(const aotc_device_tensor_t *inputs,
                                   size_t numInputs,
                                   aotc_device_tensor_t *outputs,
                                   size_t numOutputs) {
  uint64_t startNs = hostNowNs();
  DeviceRunPlan plan;
  AOTC_RT_RETURN_IF_ERROR(
      prepareDeviceRun(inputs, numInputs, outputs, numOutputs, plan));
  return runOnInstance(plan.binding, nullptr, plan.outputBytes, &plan.io,
                       startNs);
}

aotc_status_t Container::runDeviceAsync(const aotc_device_tensor_t *inputs,
                                        size_t numInputs,
                                        aotc_device_tensor_t *outputs,
                                        size_t numOutputs,
                                        cl_command_queue queue,
                                        aotc_run_t *&out) {
  const AotcModelDesc &d = *desc_;
  out = nullptr;
  if (!queue)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "queue is null");
  cl_context queueContext = nullptr;
  cl_device_id queueDevice = nullptr;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(queueContext),
                            &queueContext, nullptr) != CL_SUCCESS ||
      clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(queueDevice),
                            &queueDevice, nullptr) != CL_SUCCESS)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': the queue is not a valid cl_command_queue",
                d.model_name);
  if (queueContext != context_ || queueDevice != device_.device)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': the queue belongs to another context or device "
                "than the container's (aotc_container_opencl_handles)",
                d.model_name);
  if (profiling())
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': a profiling container runs synchronously "
                "(aotc_container_run_device)",
                d.model_name);
  DeviceRunPlan plan;
  AOTC_RT_RETURN_IF_ERROR(
      prepareDeviceRun(inputs, numInputs, outputs, numOutputs, plan));
  auto run = std::make_unique<aotc_run_t>();
  run->container = this;
  run->constants = constants.active();
  AOTC_RT_RETURN_IF_ERROR(checkWeightsPresent(*run->constants));
  // The instance is held only while the run is enqueued: its queue is in
  // order, so a later run on it (this thread's next call, or another
  // thread's) starts after this one, and OpenCL took the kernels' arguments
  // at enqueue. (Holding it until a completion callback cost about 20 ms a
  // run on NVIDIA's driver, whose callbacks come late.)
  InstanceLease lease(*this);
  Instance *instance = &lease.get();
  // Behind everything already on the caller's queue. (A command that waits
  // for an event of another queue needs that queue flushed: NVIDIA's driver
  // otherwise submits the marker only at its next flush, about 20 ms later.)
  cl_event ready = nullptr;
  cl_int err = clEnqueueMarkerWithWaitList(queue, 0, nullptr, &ready);
  if (err == CL_SUCCESS)
    err = clFlush(queue);
  if (err == CL_SUCCESS) {
    err = clEnqueueBarrierWithWaitList(instance->queue, 1, &ready, nullptr);
    clReleaseEvent(ready);
  }
  if (err != CL_SUCCESS) {
    clFinish(instance->queue);
    return fail(statusForClError(err),
                "model '%s': ordering the run after the caller's queue: %s",
                d.model_name, clErrorName(err));
  }
  AOTC_RT_RETURN_IF_ERROR(enqueueRun(*instance, *run->constants, plan.binding,
                                     nullptr, plan.outputBytes, &plan.io,
                                     run->record, /*wait=*/false));
  // The caller's later work waits for the run.
  err = clEnqueueMarkerWithWaitList(instance->queue, 0, nullptr, &run->done);
  if (err == CL_SUCCESS)
    err = clEnqueueBarrierWithWaitList(queue, 1, &run->done, nullptr);
  if (err == CL_SUCCESS)
    err = clFlush(instance->queue);
  if (err != CL_SUCCESS) {
    clFinish(instance->queue);
    if (run->done)
      clReleaseEvent(run->done);
    return fail(statusForClError(err),
                "model '%s': ordering the caller's queue after the run: %s",
                d.model_name, clErrorName(err));
  }
  out = run.release();
  return AOTC_OK;
}

aotc_status_t Container::waitRun(aotc_run_t *run) {
  const AotcModelDesc &d = *desc_;
  cl_int err = clWaitForEvents(1, &run->done);
  aotc_status_t status = AOTC_OK;
  if (err != CL_SUCCESS) {
    status = fail(statusForClError(err), "model '%s' on '%s': the run: %s",
                  d.model_name, device_.fullName.c_str(), clErrorName(err));
  } else if (run->record.code != 0) {
    status = reportError(run->record);
  }
  clReleaseEvent(run->done);
  delete run;
  return status;
}

aotc_status_t Container::prepareDeviceRun(const aotc_device_tensor_t *inputs,
                                          size_t numInputs,
                                          aotc_device_tensor_t *outputs,
                                          size_t numOutputs,
                                          DeviceRunPlan &plan) {
  const AotcModelDesc &d = *desc_;
  Binding &binding = plan.binding;
  std::vector<uint64_t> &outputBytes = plan.outputBytes;
  DeviceIO &io = plan.io;
  if ((numInputs > 0 && !inputs) || (numOutputs > 0 && !outputs))
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "inputs or outputs is null");
  if (numInputs != static_cast<size_t>(d.num_inputs))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': a device run takes the %d required inputs, got "
                "%zu",
                d.model_name, d.num_inputs, numInputs);
  // The caller's tensors as host tensors whose data is the buffer handle:
  // the same validation and binding as a host run.
  std::vector<aotc_tensor_t> in(numInputs), out(numOutputs);
  for (size_t i = 0; i < numInputs; ++i) {
    in[i].data = inputs[i].buffer;
    in[i].nbytes = inputs[i].nbytes;
    in[i].dtype = inputs[i].dtype;
    in[i].rank = inputs[i].rank;
    std::copy(inputs[i].shape, inputs[i].shape + AOTC_MAX_RANK, in[i].shape);
  }
  AOTC_RT_RETURN_IF_ERROR(
      bindInputs(in.data(), numInputs, true, binding, /*deviceData=*/true));
  for (size_t i = 0; i < numOutputs; ++i) {
    out[i].data = outputs[i].buffer;
    out[i].nbytes = outputs[i].nbytes;
  }
  if (d.num_syncs > 0)
    return fail(AOTC_ERROR_UNSUPPORTED,
                "model '%s' sizes outputs by counts it computes while it runs "
                "(NonZero, Compress): run it with aotc_container_run, which "
                "reads them back; nothing ran",
                d.model_name);
  AOTC_RT_RETURN_IF_ERROR(fillOutputShapes(binding.symbols.data(), out.data(),
                                           numOutputs, outputBytes));
  for (size_t i = 0; i < numOutputs; ++i) {
    outputs[i].dtype = out[i].dtype;
    outputs[i].rank = out[i].rank;
    std::copy(out[i].shape, out[i].shape + AOTC_MAX_RANK, outputs[i].shape);
  }
  for (size_t i = 0; i < numOutputs; ++i)
    if (outputs[i].nbytes < outputBytes[i])
      return fail(AOTC_ERROR_BUFFER_TOO_SMALL,
                  "output '%s': the buffer range holds %llu bytes, shape %s "
                  "%s needs %llu",
                  d.outputs[i].name, ull(outputs[i].nbytes),
                  shapeString(outputs[i].rank, outputs[i].shape).c_str(),
                  dtypeName(d.outputs[i].dtype), ull(outputBytes[i]));
  for (size_t i = 0; i < numInputs; ++i) {
    if (binding.inputBytes[i] > 0)
      AOTC_RT_RETURN_IF_ERROR(
          checkDeviceTensor("input", d.inputs[i].name, inputs[i]));
    io.inputs.push_back(static_cast<cl_mem>(inputs[i].buffer));
    io.inputOffsets.push_back(inputs[i].offset);
    io.inputBytes.push_back(inputs[i].nbytes);
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    if (outputBytes[i] > 0)
      AOTC_RT_RETURN_IF_ERROR(
          checkDeviceTensor("output", d.outputs[i].name, outputs[i]));
    io.outputs.push_back(static_cast<cl_mem>(outputs[i].buffer));
    io.outputOffsets.push_back(outputs[i].offset);
    io.outputBytes.push_back(outputs[i].nbytes);
  }
  // An output may not overlap another output or an input.
  for (size_t i = 0; i < numOutputs; ++i) {
    if (outputBytes[i] == 0)
      continue;
    auto overlaps = [&](cl_mem mem, uint64_t off, uint64_t bytes) {
      return mem == io.outputs[i] && bytes > 0 &&
             off < io.outputOffsets[i] + outputBytes[i] &&
             io.outputOffsets[i] < off + bytes;
    };
    for (size_t j = 0; j < numInputs; ++j)
      if (overlaps(io.inputs[j], io.inputOffsets[j], binding.inputBytes[j]))
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "output '%s' overlaps input '%s'", d.outputs[i].name,
                    d.inputs[j].name);
    for (size_t j = 0; j < i; ++j)
      if (overlaps(io.outputs[j], io.outputOffsets[j], outputBytes[j]))
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "output '%s' overlaps output '%s'", d.outputs[i].name,
                    d.outputs[j].name);
  }
  return AOTC_OK;
}

aotc_status_t Container::runFold(const ConstantSet &set) {
  const AotcModelDesc &d = *desc_;
  if (!d.run_fold)
    return AOTC_OK;
  InstanceLease lease(*this);
  Instance &instance = lease.get();
  std::string what =
      formatString("the folding program's arena of model '%s'", d.model_name);
  AOTC_RT_RETURN_IF_ERROR(instance.arena.ensure(
      context_, device_, CL_MEM_READ_WRITE, d.fold_arena_bytes, what.c_str()));
  // Its kernels check their indices like the model's (a Gather of weights
  // by weights): the same error record.
  AotcErrorRecord record = {0, 0, 0, 0, 0};
  bool checksErrors = d.num_errors > 0;
  aotc_status_t status =
      checksErrors ? clearErrorRecord(instance, /*profiled=*/false) : AOTC_OK;
  if (status == AOTC_OK) {
    AotcRunCtx ctx;
    ctx.container = this;
    ctx.instance = &instance;
    ctx.constants = &set;
    ctx.profiled = false;
    int32_t result = d.run_fold(&ctx);
    if (result != 0)
      status = ctx.status != AOTC_OK
                   ? ctx.status
                   : fail(AOTC_ERROR_INTERNAL,
                          "model '%s': the folding program failed with "
                          "status %d",
                          d.model_name, result);
  }
  if (checksErrors && status == AOTC_OK)
    status = readErrorRecord(instance, record, /*profiled=*/false);
  // Always finished before the set is published or dropped.
  cl_int err = clFinish(instance.queue);
  if (status == AOTC_OK && err != CL_SUCCESS)
    status = fail(statusForClError(err),
                  "model '%s' on '%s': clFinish after the folding program: %s",
                  d.model_name, device_.fullName.c_str(), clErrorName(err));
  if (status == AOTC_OK && record.code != 0)
    status = reportError(record);
  return status;
}

aotc_status_t Container::checkWeightsPresent(const ConstantSet &set) const {
  const AotcModelDesc &d = *desc_;
  if (set.numMissing > 0)
    for (int32_t c = 0; c < d.num_constants; ++c)
      if (set.missing[c])
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "model '%s': weight '%s' has no value: a weightless "
                    "model takes its weights through "
                    "aotc_container_update_constants before its first run "
                    "(%zu constants missing)",
                    d.model_name, constants.initializerOf(c), set.numMissing);
  return AOTC_OK;
}

aotc_status_t Container::runOnInstance(const Binding &binding,
                                       aotc_tensor_t *outputs,
                                       const std::vector<uint64_t> &outputBytes,
                                       const DeviceIO *io, uint64_t startNs) {
  InstanceLease lease(*this);
  std::shared_ptr<const ConstantSet> set = constants.active();
  AOTC_RT_RETURN_IF_ERROR(checkWeightsPresent(*set));
  Instance &instance = lease.get();
  // Fixed while this run holds an instance (setProfiling takes them all).
  const bool profiling = this->profiling();
  if (profiling)
    instance.profile.begin(startNs);
  AotcErrorRecord record = {0, 0, 0, 0, 0};
  aotc_status_t status = enqueueRun(instance, *set, binding, outputs,
                                    outputBytes, io, record, /*wait=*/true);
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

aotc_status_t Container::clearErrorRecord(Instance &instance,
                                          bool profiled) const {
  static const AotcErrorRecord kNoError = {0, 0, 0, 0, 0};
  cl_int err = clEnqueueWriteBuffer(
      instance.queue, instance.errors.mem(), CL_FALSE, 0, sizeof(kNoError),
      &kNoError, 0, nullptr, instance.profile.next(profiled && profiling()));
  if (err != CL_SUCCESS)
    return fail(statusForClError(err), "clearing the error record: %s",
                clErrorName(err));
  instance.profile.add(AOTC_PROFILE_COPY_IN, -1, 0, sizeof(kNoError));
  return AOTC_OK;
}

aotc_status_t Container::readErrorRecord(Instance &instance,
                                         AotcErrorRecord &record,
                                         bool profiled) const {
  cl_int err = clEnqueueReadBuffer(
      instance.queue, instance.errors.mem(), CL_FALSE, 0, sizeof(record),
      &record, 0, nullptr, instance.profile.next(profiled && profiling()));
  if (err != CL_SUCCESS)
    return fail(statusForClError(err), "reading the error record: %s",
                clErrorName(err));
  instance.profile.add(AOTC_PROFILE_COPY_OUT, -1, 0, sizeof(record));
  return AOTC_OK;
}

aotc_status_t Container::enqueueRun(Instance &instance,
                                    const ConstantSet &constants,
                                    const Binding &binding,
                                    aotc_tensor_t *outputs,
                                    const std::vector<uint64_t> &outputBytes,
                                    const DeviceIO *io,
                                    AotcErrorRecord &record, bool wait) {
  const AotcModelDesc &d = *desc_;
  int64_t arena = d.arena_bytes(binding.symbols.data());
  if (arena < 0)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': negative arena size %lld",
                d.model_name, ll(arena));
  std::string what = formatString("the arena of model '%s'", d.model_name);
  AOTC_RT_RETURN_IF_ERROR(
      instance.arena.ensure(context_, device_, CL_MEM_READ_WRITE,
                            static_cast<uint64_t>(arena), what.c_str()));
  for (int32_t i = 0; i < d.num_inputs && !io; ++i) {
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
  // An output sized by a count gets its buffer at the sync that reads it.
  for (int32_t i = 0; i < d.num_outputs && !io; ++i) {
    if (outputBytes[i] == kUnknownBytes)
      continue;
    what = formatString("output '%s'", d.outputs[i].name);
    AOTC_RT_RETURN_IF_ERROR(instance.outputs[i].ensure(
        context_, device_, CL_MEM_READ_WRITE, outputBytes[i], what.c_str()));
  }
  // The sync points bind counts here and size the outputs they decide.
  std::vector<int64_t> symbols = binding.symbols;
  std::vector<uint64_t> bytes = outputBytes;

  // From here on commands are in flight: always finish before returning
  // (unless asked not to, and all went well), so the caller's host memory is
  // never touched after the call.
  record = {0, 0, 0, 0, 0};
  bool checksErrors = d.num_errors > 0;
  aotc_status_t status =
      checksErrors ? clearErrorRecord(instance, /*profiled=*/true) : AOTC_OK;
  for (int32_t i = 0; i < d.num_inputs && status == AOTC_OK && !io; ++i) {
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
    ctx.io = io;
    ctx.symbols = &symbols;
    ctx.outputs = outputs;
    ctx.outputBytes = &bytes;
    if (!binding.overrides.empty()) {
      ctx.overrides.assign(d.num_constants, nullptr);
      for (const auto &override : binding.overrides)
        ctx.overrides[override.first] = instance.overrides[override.first].mem();
    }
    if (profiling() && d.kernel_costs && d.num_kernels > 0) {
      ctx.costs.assign(2 * static_cast<size_t>(d.num_kernels), 0.0);
      d.kernel_costs(symbols.data(), ctx.costs.data());
    }
    uint64_t enqueueStart = hostNowNs();
    int32_t result = d.run(&ctx, symbols.data());
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
  for (int32_t i = 0; i < d.num_outputs && status == AOTC_OK && !io; ++i) {
    if (bytes[i] == kUnknownBytes) {
      status = fail(AOTC_ERROR_INTERNAL,
                    "model '%s': output '%s' was never sized (no sync)",
                    d.model_name, d.outputs[i].name);
      break;
    }
    if (bytes[i] == 0)
      continue;
    cl_int err =
        clEnqueueReadBuffer(instance.queue, instance.outputs[i].mem(), CL_FALSE,
                            0, static_cast<size_t>(bytes[i]),
                            outputs[i].data, 0, nullptr,
                            instance.profile.next(profiling()));
    if (err != CL_SUCCESS)
      status =
          fail(statusForClError(err), "copying output '%s' from '%s': %s",
               d.outputs[i].name, device_.fullName.c_str(), clErrorName(err));
    else
      instance.profile.add(AOTC_PROFILE_COPY_OUT, i, 0,
                           static_cast<double>(bytes[i]));
  }
  if (checksErrors && status == AOTC_OK)
    status = readErrorRecord(instance, record, /*profiled=*/true);
  if (!wait && status == AOTC_OK)
    return AOTC_OK;
  cl_int err = clFinish(instance.queue);
  if (status == AOTC_OK && err != CL_SUCCESS)
    status = fail(statusForClError(err), "model '%s' on '%s': clFinish: %s",
                  d.model_name, device_.fullName.c_str(), clErrorName(err));
  if (status == AOTC_OK && record.code != 0)
    status = reportError(record);
  return status;
}

} // namespace aotc::rt

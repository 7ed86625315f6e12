/// \file
/// The model container: loading a model onto a device (program, instances,
/// buffers), profiling, and the folding program's runs for the constant
/// sets. A run's commands live in run.cpp, device-buffer runs in
/// device_run.cpp, input binding in binding.cpp, the launch path and sync
/// points in launch.cpp, the constant sets in constants.cpp, the
/// descriptor's checks in validate_desc.cpp.
#include "container.h"
#include "host_pages.h"

#include "program_cache.h"
#include "program_split.h"
#include "util.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

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
  cl_mem mem = nullptr;
  if (wantsHostPages(device, wanted))
    mem = createHostPagesBuffer(context, flags, wanted, err);
  if (!mem)
    mem = clCreateBuffer(context, flags, static_cast<size_t>(wanted), nullptr,
                         &err);
  if (err != CL_SUCCESS || !mem)
    return fail(statusForClError(err),
                "allocating %llu bytes for %s on '%s' failed: %s", ull(wanted),
                what, device.fullName.c_str(), clErrorName(err));
  mem_ = mem;
  capacity_ = wanted;
  id_.renew();
  return AOTC_OK;
}

void DeviceBuffer::release() {
  if (mem_)
    clReleaseMemObject(mem_);
  mem_ = nullptr;
  capacity_ = 0;
  id_.renew();
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

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Container::~Container() {
  // Instances first: they finish their queues and hold kernels of programs_.
  instances_.clear();
  freeInstances_.clear();
  for (cl_program program : programs_)
    clReleaseProgram(program);
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
    if (!kernels_[k].built)
      continue;
    instance.kernels[k] =
        clCreateKernel(programs_[programOf_[k]], kernels_[k].function.c_str(),
                       &err);
    if (err != CL_SUCCESS || !instance.kernels[k])
      return fail(err == CL_INVALID_KERNEL_NAME ? AOTC_ERROR_INTERNAL
                                                : statusForClError(err),
                  "model '%s': creating kernel '%s' (function '%s') failed: "
                  "%s",
                  desc_->model_name, kernels_[k].name.c_str(),
                  kernels_[k].function.c_str(), clErrorName(err));
  }
  instance.inputs = std::vector<DeviceBuffer>(desc_->num_inputs);
  instance.outputs = std::vector<DeviceBuffer>(desc_->num_outputs);
  if (desc_->num_input_slots > 0)
    instance.overrides = std::vector<DeviceBuffer>(desc_->num_constants);
  if (desc_->num_errors > 0)
    AOTC_RT_RETURN_IF_ERROR(
        instance.errors.ensure(context_, device_, CL_MEM_READ_WRITE,
                               sizeof(AotcErrorRecord), "the error record"));
  if (desc_->counter_bytes > 0) {
    // Zero before any launch: a persistent kernel claims from them
    // (persistent_kernels.h), and leaves them zero again.
    AOTC_RT_RETURN_IF_ERROR(instance.counters.ensure(
        context_, device_, CL_MEM_READ_WRITE, desc_->counter_bytes,
        "the persistent kernels' counters"));
    std::vector<uint8_t> zeros(desc_->counter_bytes, 0);
    cl_int err = clEnqueueWriteBuffer(instance.queue, instance.counters.mem(),
                                      CL_TRUE, 0, zeros.size(), zeros.data(), 0,
                                      nullptr, nullptr);
    if (err != CL_SUCCESS)
      return fail(statusForClError(err),
                  "model '%s': zeroing the persistent kernels' counters: %s",
                  desc_->model_name, clErrorName(err));
  }
  return AOTC_OK;
}

aotc_status_t Container::useSharedContext(cl_context shared) {
  size_t bytes = 0;
  cl_int err = clGetContextInfo(shared, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
  if (err != CL_SUCCESS)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "options->cl_context: not an OpenCL context (%s)",
                clErrorName(err));
  std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
  err = clGetContextInfo(shared, CL_CONTEXT_DEVICES, bytes, devices.data(),
                         nullptr);
  if (err != CL_SUCCESS)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "options->cl_context: its devices: %s", clErrorName(err));
  if (std::find(devices.begin(), devices.end(), device_.device) ==
      devices.end())
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "options->cl_context does not hold the selected device '%s' "
                "(%zu device(s) in it)",
                device_.fullName.c_str(), devices.size());
  err = clRetainContext(shared);
  if (err != CL_SUCCESS)
    return fail(statusForClError(err), "clRetainContext: %s",
                clErrorName(err));
  context_ = shared;
  return AOTC_OK;
}

aotc_status_t Container::init(const AotcModelDesc *desc,
                              const aotc_container_options_t &options,
                              const WeightsSource &weights,
                              cl_context sharedContext) {
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
  // Persistent kernels on CPU devices (their parts one by one elsewhere, or
  // where AOTC_PERSISTENT=0: compiler/schedule/persistent_kernels.h).
  {
    const char *env = std::getenv("AOTC_PERSISTENT");
    runsPersistent_ = device_.isCpu && !(env && std::strcmp(env, "0") == 0);
  }

  cl_int err = CL_SUCCESS;
  if (sharedContext) {
    AOTC_RT_RETURN_IF_ERROR(useSharedContext(sharedContext));
  } else {
    cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM,
        reinterpret_cast<cl_context_properties>(device_.platform), 0};
    context_ = clCreateContext(properties, 1, &device_.device, nullptr,
                               nullptr, &err);
    if (err != CL_SUCCESS || !context_)
      return fail(statusForClError(err), "clCreateContext on '%s': %s",
                  device_.fullName.c_str(), clErrorName(err));
  }

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
    request.embedded = desc_->program_binaries;
    request.numEmbedded = desc_->num_program_binaries;
    // Only the kernels of the run() path this container takes: the
    // persistent kernels on a CPU device, their parts elsewhere.
    const int path =
        runsPersistent_ ? AOTC_KERNEL_PERSISTENT_PATH : AOTC_KERNEL_PARTS_PATH;
    // Each function once: kernels whose code is the same run one.
    std::map<std::string, size_t> functionIndex;
    std::vector<size_t> functionOf(desc_->num_kernels, 0);
    std::set<std::string> unused;
    for (int32_t k = 0; k < desc_->num_kernels; ++k) {
      KernelInfo &info = kernels_[k];
      info.name = desc_->kernel_names[k];
      info.function = desc_->kernel_functions ? desc_->kernel_functions[k]
                                              : desc_->kernel_names[k];
      const int kernelPath = desc_->kernel_paths
                                 ? static_cast<int>(desc_->kernel_paths[k])
                                 : static_cast<int>(AOTC_KERNEL_ANY_PATH);
      info.built = kernelPath == AOTC_KERNEL_ANY_PATH || kernelPath == path;
      if (!info.built) {
        unused.insert(info.function);
        continue;
      }
      auto [it, fresh] =
          functionIndex.emplace(info.function, request.kernelNames.size());
      if (fresh)
        request.kernelNames.push_back(info.function);
      functionOf[k] = it->second;
    }
    for (const auto &[function, index] : functionIndex)
      unused.erase(function);
    // The program without the other path's sections (PoCL compiles every
    // kernel of a program it builds: a part's code is in its persistent
    // kernel too). Binaries embedded at compile time hold every kernel.
    std::string kept;
    if (!unused.empty()) {
      if (!withoutKernels(desc_->cl_source, desc_->cl_source_size,
                          request.kernelNames, unused, kept))
        return fail(AOTC_ERROR_INTERNAL,
                    "model '%s': the OpenCL program does not define the "
                    "kernels of run()'s paths in sections of their own, as "
                    "its kernel table says (%zu kernels of the path not "
                    "taken)",
                    desc_->model_name, unused.size());
      request.source = kept.data();
      request.sourceSize = kept.size();
    }
    ProgramResult program;
    AOTC_RT_RETURN_IF_ERROR(buildProgram(context_, device_, request, program));
    programs_ = std::move(program.programs);
    programOf_.assign(desc_->num_kernels, 0);
    for (int32_t k = 0; k < desc_->num_kernels; ++k)
      if (kernels_[k].built)
        programOf_[k] = program.programOf[functionOf[k]];
    programOrigin_ = program.origin;
  }

  // Instances: a queue and every kernel each.
  instances_.reserve(options.num_instances);
  for (uint32_t i = 0; i < options.num_instances; ++i) {
    instances_.push_back(std::make_unique<Instance>());
    AOTC_RT_RETURN_IF_ERROR(createInstance(*instances_.back()));
    freeInstances_.push_back(instances_.back().get());
  }
  // Kernel limits, from the first instance's kernels.
  for (size_t k = 0; k < kernels_.size(); ++k) {
    KernelInfo &info = kernels_[k];
    if (!info.built)
      continue;
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
  // Every instance's argument slots (launch.cpp), now that the kernels'
  // argument counts are known.
  for (const std::unique_ptr<Instance> &instance : instances_) {
    instance->args.resize(kernels_.size());
    for (size_t k = 0; k < kernels_.size(); ++k)
      instance->args[k].assign(kernels_[k].numArgs, {});
  }
  // The folding program computes the first set's computed constants, now
  // that the kernels and their limits are known (a weightless model's wait
  // for its weights).
  constants.setFoldRunner(
      [this](const ConstantSet &set) { return runFold(set); });
  AOTC_RT_RETURN_IF_ERROR(constants.runConstFold(/*useInactive=*/false));
  warmUp();
  return AOTC_OK;
}

//===----------------------------------------------------------------------===//
// The folding program and profiling
//===----------------------------------------------------------------------===//

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

std::vector<Instance *> Container::takeAllInstances() {
  std::vector<Instance *> held;
  std::unique_lock<std::mutex> lock(instancesMutex_);
  while (held.size() < instances_.size()) {
    instanceFree_.wait(lock, [&] { return !freeInstances_.empty(); });
    held.insert(held.end(), freeInstances_.begin(), freeInstances_.end());
    freeInstances_.clear();
  }
  return held;
}

void Container::giveBackInstances(const std::vector<Instance *> &held) {
  {
    std::lock_guard<std::mutex> lock(instancesMutex_);
    freeInstances_.insert(freeInstances_.end(), held.begin(), held.end());
  }
  instanceFree_.notify_all();
}

aotc_status_t Container::reserve(const int64_t *symbols, size_t numSymbols) {
  uint64_t bytes = 0;
  AOTC_RT_RETURN_IF_ERROR(arenaBytes(symbols, numSymbols, &bytes));
  const std::string what =
      formatString("the arena of model '%s'", desc_->model_name);
  std::vector<Instance *> held = takeAllInstances();
  aotc_status_t status = AOTC_OK;
  // A model without an arena at these sizes still gets the run below.
  for (size_t i = 0; i < held.size() && bytes > 0 && status == AOTC_OK; ++i) {
    Instance &instance = *held[i];
    status = instance.arena.ensure(context_, device_, CL_MEM_READ_WRITE, bytes,
                                   what.c_str());
    if (status != AOTC_OK)
      break;
    // Written once, whole: the device's first touch of every page is here.
    const uint8_t zero = 0;
    cl_int err = clEnqueueFillBuffer(
        instance.queue, instance.arena.mem(), &zero, 1, 0,
        static_cast<size_t>(instance.arena.capacity()), 0, nullptr, nullptr);
    if (err == CL_SUCCESS)
      err = clFinish(instance.queue);
    if (err != CL_SUCCESS)
      status = fail(statusForClError(err), "writing %s (%llu bytes) on '%s': %s",
                    what.c_str(), ull(instance.arena.capacity()),
                    device_.fullName.c_str(), clErrorName(err));
  }
  // Then one run at these sizes: the kernels' first launches at them
  // (PoCL readies a work-group function per launch size; a size variant
  // planned for a larger batch is another kernel), the I/O buffers'.
  if (status == AOTC_OK) {
    std::vector<int64_t> all(symbols, symbols + numSymbols);
    runOnZeros(std::move(all), held);
  }
  giveBackInstances(held);
  return status;
}

aotc_status_t Container::setProfiling(bool on) {
  // Take every instance, as runs release them; new runs wait meanwhile.
  std::vector<Instance *> held = takeAllInstances();
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
  giveBackInstances(held);
  return status;
}

std::vector<aotc_profile_record_t> Container::lastProfile() const {
  std::lock_guard<std::mutex> lock(profileMutex_);
  return lastProfile_;
}

} // namespace aotc::rt

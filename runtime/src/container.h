/// \file
/// The model container behind aotc_container_t: one device, one program,
/// the shared constants and N model instances.
#ifndef AOTC_RUNTIME_SRC_CONTAINER_H
#define AOTC_RUNTIME_SRC_CONTAINER_H

#include "aotc/model_desc.h"
#include "constants.h"
#include "device.h"
#include "profile.h"
#include "program_cache.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct aotc_run_t;

namespace aotc::rt {

/// A device buffer that only grows.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { release(); }

  cl_mem mem() const { return mem_; }
  uint64_t capacity() const { return capacity_; }
  /// The current allocation's (renewed by every allocation and release).
  uint64_t id() const { return id_.value(); }
  /// Makes the buffer hold at least \p bytes (at least a small placeholder
  /// for 0 bytes, since OpenCL has no empty buffers). \p what names the
  /// buffer in error messages.
  aotc_status_t ensure(cl_context context, const DeviceInfo &device,
                       cl_mem_flags flags, uint64_t bytes, const char *what);
  void release();

private:
  cl_mem mem_ = nullptr;
  uint64_t capacity_ = 0;
  AllocationId id_;
};

/// What the runtime knows about a kernel (the same for every instance).
struct KernelInfo {
  std::string name;
  /// The program's function it runs: its own name, or the first kernel's
  /// whose code is the same (AotcModelDesc::kernel_functions).
  std::string function;
  size_t maxWorkGroupSize = 1;
  cl_uint numArgs = 0;
  /// The work-group size used for dimension 0 when the wrapper passes none.
  size_t defaultLocalSize = 1;
  /// False for a kernel of the run() path this container does not take
  /// (AotcModelDesc::kernel_paths): not built, no cl_kernel, never launched.
  bool built = true;
};

/// One model instance: what a single in-flight run uses exclusively.
struct Instance {
  cl_command_queue queue = nullptr;
  std::vector<cl_kernel> kernels;
  std::vector<DeviceBuffer> inputs;
  std::vector<DeviceBuffer> outputs;
  DeviceBuffer arena;
  /// The AotcErrorRecord kernels write when they meet bad data.
  DeviceBuffer errors;
  /// The counters of persistent kernels (AotcModelDesc::counter_bytes),
  /// zeroed at creation; each launch leaves its own zero.
  DeviceBuffer counters;
  /// Per constant: the caller's value of a default it replaced in a run.
  std::vector<DeviceBuffer> overrides;
  /// The events of the run in progress (profiling containers).
  RunProfile profile;
  /// Per kernel, per OpenCL argument: what the last launch set
  /// (launch.cpp), so that a run sets only the arguments that changed.
  /// Sized when the container is created, once the counts are known.
  struct ArgSlot {
    uint64_t bits = 0; ///< the value (a scalar, an offset, a cl_mem's address)
    uint64_t tag = 0;  ///< 0: not known; a buffer's allocation id; 1: scalar
  };
  std::vector<std::vector<ArgSlot>> args;
  Instance() = default;
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;
  ~Instance();
};

/// The caller's buffers of a device run (aotc_container_run_device): kernels
/// bind them instead of the instance's input and output buffers.
struct DeviceIO {
  std::vector<cl_mem> inputs, outputs;
  std::vector<uint64_t> inputOffsets, outputOffsets;
  std::vector<uint64_t> inputBytes, outputBytes; ///< usable from the offset
};

class Container;

/// A device run enqueued without waiting (aotc_container_run_device_async),
/// until aotc_run_wait: it holds the constant set it reads until then. Its
/// instance went back once its commands were enqueued: the instance's queue
/// is in order, so whatever runs on it next starts after this run.
struct AsyncRun {
  Container *container = nullptr;
  std::shared_ptr<const ConstantSet> constants;
  /// Target of the run's non-blocking read of its error record.
  AotcErrorRecord record = {0, 0, 0, 0, 0};
  /// Completes when the run's device work has finished.
  cl_event done = nullptr;
};

/// Inputs checked against the model, with the symbol values they bind.
struct Binding {
  std::vector<int64_t> symbols;
  /// The caller's tensor of each model input, in input order.
  std::vector<const aotc_tensor_t *> inputs;
  std::vector<uint64_t> inputBytes;
  /// Defaults the caller replaced: constant number and its new value.
  std::vector<std::pair<int32_t, const aotc_tensor_t *>> overrides;
  /// Where each symbol was bound: input number and dim.
  std::vector<std::pair<int32_t, int32_t>> boundAt;
};

class Container {
public:
  Container() = default;
  Container(const Container &) = delete;
  Container &operator=(const Container &) = delete;
  ~Container();

  /// Loads \p desc onto the device chosen by \p options; a weights side
  /// file comes from \p weights when its fd is >= 0. In \p sharedContext
  /// (the host's, retained) where it is not null, else in a new context.
  aotc_status_t init(const AotcModelDesc *desc,
                     const aotc_container_options_t &options,
                     const WeightsSource &weights,
                     cl_context sharedContext = nullptr);

  aotc_status_t run(const aotc_tensor_t *inputs, size_t numInputs,
                    aotc_tensor_t *outputs, size_t numOutputs);
  /// aotc_container_run_device.
  aotc_status_t runDevice(const aotc_device_tensor_t *inputs, size_t numInputs,
                          aotc_device_tensor_t *outputs, size_t numOutputs);
  /// aotc_container_run_device_async: enqueues behind the work on \p queue
  /// and makes \p queue's later work wait for the run; \p out is the run,
  /// for waitRun.
  aotc_status_t runDeviceAsync(const aotc_device_tensor_t *inputs,
                               size_t numInputs, aotc_device_tensor_t *outputs,
                               size_t numOutputs, cl_command_queue queue,
                               aotc_run_t *&out);
  /// aotc_run_wait: waits for \p run, reports its run-time checks and
  /// deletes it.
  aotc_status_t waitRun(aotc_run_t *run);
  cl_context context() const { return context_; }
  /// Makes \p shared (the options' cl_context) this container's context:
  /// it must hold the selected device; retained until the container goes.
  aotc_status_t useSharedContext(cl_context shared);
  aotc_status_t outputShapes(const aotc_tensor_t *inputs, size_t numInputs,
                             aotc_tensor_t *outputs, size_t numOutputs) const;
  aotc_status_t arenaBytes(const int64_t *symbols, size_t numSymbols,
                           uint64_t *outBytes) const;

  /// A sync point of a run (aotc_rt_sync): reads the count, binds it and
  /// sizes what follows.
  aotc_status_t sync(AotcRunCtx &ctx, int32_t sync, int32_t symbol,
                     uint64_t arenaOffset, int64_t bound) const;
  /// The bytes of an output whose size is not known yet.
  static constexpr uint64_t kUnknownBytes = ~uint64_t{0};

  /// Enqueues one kernel of a run (aotc_rt_launch).
  aotc_status_t launch(AotcRunCtx &ctx, int32_t kernel, const AotcArg *args,
                       int32_t nargs, int32_t dims, const uint64_t *global,
                       const uint64_t *local) const;
  /// Whether runs launch persistent kernels (aotc_rt_persistent): on a CPU
  /// device, unless the environment sets AOTC_PERSISTENT=0 when the
  /// container is created (then their parts run one by one, each timed in
  /// a profile).
  bool runsPersistent() const { return runsPersistent_; }
  /// Enqueues a persistent kernel of a run (aotc_rt_launch_persistent).
  aotc_status_t launchPersistent(AotcRunCtx &ctx, int32_t kernel,
                                 const AotcArg *args, int32_t nargs,
                                 int32_t nparts, const uint64_t *tiles) const;

  const AotcModelDesc &desc() const { return *desc_; }
  const DeviceInfo &device() const { return device_; }
  ProgramOrigin programOrigin() const { return programOrigin_; }
  bool profiling() const { return profiling_.load(); }
  /// aotc_container_set_profiling: holds every instance while it recreates
  /// their queues.
  aotc_status_t setProfiling(bool on);
  /// aotc_container_reserve: every instance's arena sized for \p symbols
  /// (as arenaBytes takes them) and written once.
  aotc_status_t reserve(const int64_t *symbols, size_t numSymbols);
  /// The records of the most recent successful run (profiling containers).
  std::vector<aotc_profile_record_t> lastProfile() const;
  size_t numInstances() const { return instances_.size(); }
  const std::vector<aotc_tensor_info_t> &inputInfos() const {
    return inputInfos_;
  }
  const std::vector<aotc_tensor_info_t> &outputInfos() const {
    return outputInfos_;
  }

private:
  friend class InstanceLease;

  /// The OpenCL extensions the kernels enable are the device's.
  aotc_status_t checkDeviceExtensions() const;
  aotc_status_t validateDesc();
  aotc_status_t describeTensor(const char *kind, const AotcTensorDesc &tensor,
                               aotc_tensor_info_t &out);
  aotc_status_t createInstance(Instance &instance);
  /// Takes every instance as runs release them (new runs wait meanwhile),
  /// for a change to all of them; giveBackInstances returns them.
  std::vector<Instance *> takeAllInstances();
  void giveBackInstances(const std::vector<Instance *> &held);
  /// \p deviceData: the tensors' data are cl_mem handles (a device run).
  aotc_status_t bindInputs(const aotc_tensor_t *inputs, size_t numInputs,
                           bool checkData, Binding &out,
                           bool deviceData = false) const;
  /// Matches the caller's tensors to the model inputs: the required inputs
  /// alone, or every input the ONNX graph lists (defaults included).
  aotc_status_t matchInputSlots(const aotc_tensor_t *inputs, size_t numInputs,
                                bool checkData, Binding &out) const;
  /// Computes the derived symbols into \p symbols (the others bound), then
  /// runs the model's check_symbols and checks the derived ones' ranges.
  aotc_status_t deriveAndCheckSymbols(int64_t *symbols,
                                      const Binding *binding) const;
  /// The message of a recorded run-time error.
  aotc_status_t reportError(const AotcErrorRecord &record) const;
  /// Writes every output's dtype, rank and shape for \p symbols, and its
  /// bytes to \p outBytes: kUnknownBytes (and -1 dims) for an output sized
  /// by a count the run has not read yet.
  aotc_status_t fillOutputShapes(const int64_t *symbols, aotc_tensor_t *outputs,
                                 size_t numOutputs,
                                 std::vector<uint64_t> &outBytes) const;
  /// A host run's output \p i takes \p bytes: its buffer holds them and
  /// its data is there (BUFFER_TOO_SMALL / INVALID_ARGUMENT otherwise).
  aotc_status_t checkOutputCapacity(const aotc_tensor_t &output, size_t i,
                                    uint64_t bytes) const;
  /// A device run's tensors, validated and bound.
  struct DeviceRunPlan {
    Binding binding;
    std::vector<uint64_t> outputBytes;
    DeviceIO io;
  };
  aotc_status_t prepareDeviceRun(const aotc_device_tensor_t *inputs,
                                 size_t numInputs,
                                 aotc_device_tensor_t *outputs,
                                 size_t numOutputs, DeviceRunPlan &plan);
  /// An error if \p set lacks a weight (a weightless model not yet given
  /// all of them).
  aotc_status_t checkWeightsPresent(const ConstantSet &set) const;
  /// Runs on a free instance with the active constants: host tensors, or
  /// the caller's device buffers when \p io is set.
  aotc_status_t runOnInstance(const Binding &binding, aotc_tensor_t *outputs,
                              const std::vector<uint64_t> &outputBytes,
                              const DeviceIO *io, uint64_t startNs);
  /// Enqueues a run's commands; with \p wait, finishes them and checks
  /// \p record, else leaves them in flight (the error record's read into
  /// \p record among them). On failure nothing is left in flight.
  aotc_status_t enqueueRun(Instance &instance, const ConstantSet &constants,
                           const Binding &binding, aotc_tensor_t *outputs,
                           const std::vector<uint64_t> &outputBytes,
                           const DeviceIO *io, AotcErrorRecord &record,
                           bool wait);
  /// One run on every instance at the smallest sizes and zero inputs, its
  /// errors ignored, so that first launches happen at load (warm_up.cpp);
  /// none when the environment sets AOTC_WARM_UP=0.
  void warmUp();
  /// One run of zero inputs at \p symbols (the given symbols; derived and
  /// data ones are computed) on each of \p instances, its failures (zeros a
  /// model refuses) left to the host's first run: PoCL readies each
  /// kernel's work-group function for the launch's sizes, and the arena's,
  /// constants' and buffers' pages are touched.
  void runOnZeros(std::vector<int64_t> symbols,
                  const std::vector<Instance *> &instances);
  /// Runs the folding program on \p set (ConstantStore's FoldRunner): its
  /// computed constants' buffers are allocated, the rest present.
  aotc_status_t runFold(const ConstantSet &set);
  /// Enqueue the zeroing of \p instance's error record before a run, and
  /// the non-blocking read of it into \p record after: a copy record of
  /// the run's profile when \p profiled and the container profiles.
  aotc_status_t clearErrorRecord(Instance &instance, bool profiled) const;
  aotc_status_t readErrorRecord(Instance &instance, AotcErrorRecord &record,
                                bool profiled) const;
  /// Checks one caller buffer of a device run.
  aotc_status_t checkDeviceTensor(const char *kind, const char *name,
                                  const aotc_device_tensor_t &t) const;

  const AotcModelDesc *desc_ = nullptr;
  DeviceInfo device_;
  bool runsPersistent_ = false; ///< runsPersistent()
  cl_context context_ = nullptr;
  /// The model's program, or its parts (program_split.h), and the one
  /// that defines each kernel's function (an index into programs_).
  std::vector<cl_program> programs_;
  std::vector<size_t> programOf_;
  ProgramOrigin programOrigin_ = ProgramOrigin::Source;
  /// Changes only while setProfiling holds every instance, so a run reads
  /// one value from start to end.
  std::atomic<bool> profiling_{false};
  std::vector<KernelInfo> kernels_;

  mutable std::mutex profileMutex_;
  std::vector<aotc_profile_record_t> lastProfile_;

public:
  /// The constant sets: update, swap, extract (aotc_container_*constant*).
  ConstantStore constants;

private:

  std::vector<std::unique_ptr<Instance>> instances_;
  std::mutex instancesMutex_;
  std::condition_variable instanceFree_;
  std::vector<Instance *> freeInstances_;

  std::vector<aotc_tensor_info_t> inputInfos_;
  std::vector<aotc_tensor_info_t> outputInfos_;
  /// Owns strings handed out through the ABI (stable addresses).
  std::deque<std::string> strings_;
};

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

} // namespace aotc::rt

/// One run on one instance; what the wrapper passes back to aotc_rt_launch.
struct AotcRunCtx {
  const aotc::rt::Container *container = nullptr;
  aotc::rt::Instance *instance = nullptr;
  const aotc::rt::ConstantSet *constants = nullptr;
  /// Per constant: the buffer replacing it in this run, or null.
  std::vector<cl_mem> overrides;
  /// The caller's buffers of a device run, or null.
  const aotc::rt::DeviceIO *io = nullptr;
  /// The first launch error (its message is already recorded).
  aotc_status_t status = AOTC_OK;
  /// False for the folding program: its launches are not a run's profile
  /// (no event is asked for, so RunProfile::add records nothing).
  bool profiled = true;
  /// Each kernel's estimated flops and bytes for this run (2 per kernel)
  /// where the run profiles or runs on a CPU, else empty.
  std::vector<double> costs;
  /// A host run: the symbol values run() reads (its syncs bind the data
  /// symbols here), the caller's outputs and each one's bytes (set by the
  /// sync that sizes it).
  std::vector<int64_t> *symbols = nullptr;
  aotc_tensor_t *outputs = nullptr;
  std::vector<uint64_t> *outputBytes = nullptr;
  /// Kernels enqueued so far in this run (Container::launch flushes the
  /// queue after the 1st, 2nd, 4th, 8th, ... on CPU devices).
  int32_t launches = 0;
};

/// The opaque handle of the C ABI.
struct aotc_container_t : aotc::rt::Container {};
struct aotc_run_t : aotc::rt::AsyncRun {};

#endif // AOTC_RUNTIME_SRC_CONTAINER_H

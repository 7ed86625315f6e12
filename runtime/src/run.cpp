/// \file
/// One run on one instance: the host run's entry (outputs sized, checked),
/// taking a free instance with the active constant set, and the run's
/// commands in order: the arena and I/O buffers, the error record, inputs
/// copied in, the wrapper's run() (its launches in launch.cpp, its sync
/// points reading counts back), outputs copied out, the checks read.
#include "container.h"
#include "host_io.h"

#include "util.h"

#include <algorithm>
#include <cstring>

namespace aotc::rt {

aotc_status_t Container::run(const aotc_tensor_t *inputs, size_t numInputs,
                             aotc_tensor_t *outputs, size_t numOutputs) {
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
  // On PoCL's CPU device the kernels use the caller's memory in place
  // where it allows (host_io.h): no copies in or out (gemm_1024: 0.30 ms
  // of 4.8 per run).
  HostIOBuffers host;
  if (host.wrap(context_, device_, *desc_, binding, outputs, outputBytes))
    return runOnInstance(binding, outputs, outputBytes, &host.io(), startNs);
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
    // The kernels' estimated costs: for the profile, and on a CPU for the
    // work-group sizes (launch_size.h), which balance heavy launches.
    if ((profiling() || device_.isCpu) && d.kernel_costs &&
        d.num_kernels > 0) {
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

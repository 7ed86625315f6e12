/// \file
/// Runs on the caller's device buffers (aotc_container_run_device and its
/// asynchronous form): checking the caller's cl_mem ranges, binding them
/// in place of the instance's input and output buffers, and waiting for an
/// asynchronous run.
#include "container.h"

#include "util.h"

#include <algorithm>
#include <cstring>

namespace aotc::rt {

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

} // namespace aotc::rt

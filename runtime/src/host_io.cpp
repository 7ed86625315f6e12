/// \file
/// HostIOBuffers: a host run's tensors used in place on PoCL's CPU device.
#include "host_io.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace aotc::rt {

namespace {

/// A caller's tensor: its memory range.
struct Range {
  uintptr_t begin, end;
  bool overlaps(const Range &o) const { return begin < o.end && o.begin < end; }
};

} // namespace

HostIOBuffers::~HostIOBuffers() {
  for (cl_mem m : owned_)
    clReleaseMemObject(m);
}

bool HostIOBuffers::wrap(cl_context context, const DeviceInfo &device,
                         const AotcModelDesc &desc, const Binding &binding,
                         const aotc_tensor_t *outputs,
                         const std::vector<uint64_t> &outputBytes) {
  if (!device.isPocl || !device.isCpu || desc.num_syncs > 0)
    return false;
  if (const char *v = std::getenv("AOTC_ZERO_COPY"); v && std::strcmp(v, "0") == 0)
    return false;
  const uintptr_t align =
      std::max<uintptr_t>(256, device.memBaseAddrAlignBits / 8);
  std::vector<Range> ins, outs;
  auto usable = [&](const void *data, uint64_t bytes, std::vector<Range> &to) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(data);
    if (!data || bytes == 0 || p % align != 0)
      return false;
    to.push_back(Range{p, p + bytes});
    return true;
  };
  for (int32_t i = 0; i < desc.num_inputs; ++i)
    if (!usable(binding.inputs[i]->data, binding.inputBytes[i], ins))
      return false;
  for (int32_t i = 0; i < desc.num_outputs; ++i)
    if (!usable(outputs[i].data, outputBytes[i], outs))
      return false;
  for (size_t i = 0; i < outs.size(); ++i) {
    for (const Range &r : ins)
      if (outs[i].overlaps(r))
        return false;
    for (size_t j = 0; j < i; ++j)
      if (outs[i].overlaps(outs[j]))
        return false;
  }
  for (size_t i = 0; i < ins.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (ins[i].overlaps(ins[j]))
        return false;

  auto make = [&](cl_mem_flags flags, void *data, uint64_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, flags | CL_MEM_USE_HOST_PTR,
                              static_cast<size_t>(bytes), data, &err);
    if (err != CL_SUCCESS || !m)
      return static_cast<cl_mem>(nullptr);
    owned_.push_back(m);
    return m;
  };
  for (int32_t i = 0; i < desc.num_inputs; ++i) {
    // Read only: the kernels never write it.
    cl_mem m = make(CL_MEM_READ_ONLY,
                    const_cast<void *>(binding.inputs[i]->data),
                    binding.inputBytes[i]);
    if (!m)
      break;
    io_.inputs.push_back(m);
    io_.inputOffsets.push_back(0);
    io_.inputBytes.push_back(binding.inputBytes[i]);
  }
  for (int32_t i = 0; i < desc.num_outputs; ++i) {
    cl_mem m = make(CL_MEM_READ_WRITE, outputs[i].data, outputBytes[i]);
    if (!m)
      break;
    io_.outputs.push_back(m);
    io_.outputOffsets.push_back(0);
    io_.outputBytes.push_back(outputBytes[i]);
  }
  if (io_.inputs.size() != static_cast<size_t>(desc.num_inputs) ||
      io_.outputs.size() != static_cast<size_t>(desc.num_outputs)) {
    for (cl_mem m : owned_)
      clReleaseMemObject(m);
    owned_.clear();
    io_ = DeviceIO();
    return false;
  }
  return true;
}

} // namespace aotc::rt

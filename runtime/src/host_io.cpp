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

HostIOBuffers::~HostIOBuffers() { release(); }

void HostIOBuffers::release() {
  for (cl_mem m : io_.inputs)
    clReleaseMemObject(m);
  for (cl_mem m : io_.outputs)
    clReleaseMemObject(m);
  io_ = DeviceIO();
}

bool HostIOBuffers::wrap(cl_context context, const DeviceInfo &device,
                         const AotcModelDesc &desc, const Binding &binding,
                         const aotc_tensor_t *outputs,
                         const std::vector<uint64_t> &outputBytes) {
  if (!device.isPocl || !device.isCpu || desc.num_syncs > 0)
    return false;
  if (const char *v = std::getenv("AOTC_ZERO_COPY");
      v && std::strcmp(v, "0") == 0)
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

  // One buffer over the caller's memory, added to \p mems with its offset
  // (0) and usable size; false where OpenCL refuses it.
  auto add = [&](cl_mem_flags flags, void *data, uint64_t bytes,
                 std::vector<cl_mem> &mems, std::vector<uint64_t> &offsets,
                 std::vector<uint64_t> &sizes) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, flags | CL_MEM_USE_HOST_PTR,
                              static_cast<size_t>(bytes), data, &err);
    if (err != CL_SUCCESS || !m)
      return false;
    mems.push_back(m);
    offsets.push_back(0);
    sizes.push_back(bytes);
    return true;
  };
  for (int32_t i = 0; i < desc.num_inputs; ++i)
    // Read only: the kernels never write an input.
    if (!add(CL_MEM_READ_ONLY, const_cast<void *>(binding.inputs[i]->data),
             binding.inputBytes[i], io_.inputs, io_.inputOffsets,
             io_.inputBytes)) {
      release();
      return false;
    }
  for (int32_t i = 0; i < desc.num_outputs; ++i)
    if (!add(CL_MEM_READ_WRITE, outputs[i].data, outputBytes[i], io_.outputs,
             io_.outputOffsets, io_.outputBytes)) {
      release();
      return false;
    }
  return true;
}

} // namespace aotc::rt

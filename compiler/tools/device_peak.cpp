/// \file
/// The device's limits, measured: FP32 FMA throughput and copy bandwidth of
/// one OpenCL device (`aotc run --profile --peak`), so that kernels' achieved
/// GFLOP/s and GB/s can be read against what the device can do.
#include "compiler/tools/device_peak.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <string>
#include <vector>

namespace aotc::cli {

namespace {

// Eight independent float16 FMA chains per work-item, `iters` times:
// 8 * 16 * 2 * iters flops. The result is stored so nothing is dead.
const char *kSource = R"CL(
__kernel void fma_peak(__global float *out, float a, float b, int iters) {
  float16 x0 = (float16)(get_global_id(0) * 1e-9f), x1 = x0 + 1.0f,
          x2 = x0 + 2.0f, x3 = x0 + 3.0f, x4 = x0 + 4.0f, x5 = x0 + 5.0f,
          x6 = x0 + 6.0f, x7 = x0 + 7.0f;
  for (int i = 0; i < iters; ++i) {
    x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b);
    x3 = fma(x3, a, b); x4 = fma(x4, a, b); x5 = fma(x5, a, b);
    x6 = fma(x6, a, b); x7 = fma(x7, a, b);
  }
  float16 s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  out[get_global_id(0)] = s.s0 + s.s5 + s.sa + s.sf;
}
__kernel void copy_peak(__global const float4 *in, __global float4 *out) {
  size_t i = get_global_id(0);
  out[i] = in[i];
}
)CL";

std::string str(cl_platform_id p, cl_platform_info w) {
  size_t n = 0;
  clGetPlatformInfo(p, w, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetPlatformInfo(p, w, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

std::string str(cl_device_id d, cl_device_info w) {
  size_t n = 0;
  clGetDeviceInfo(d, w, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetDeviceInfo(d, w, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

/// Releases OpenCL objects on every path.
struct Objects {
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_program prog = nullptr;
  std::vector<cl_kernel> kernels;
  std::vector<cl_mem> mems;
  ~Objects() {
    for (cl_mem m : mems)
      clReleaseMemObject(m);
    for (cl_kernel k : kernels)
      clReleaseKernel(k);
    if (prog)
      clReleaseProgram(prog);
    if (q)
      clReleaseCommandQueue(q);
    if (ctx)
      clReleaseContext(ctx);
  }
};

/// Best time in seconds of \p reps launches of \p k over \p global items.
double bestTime(cl_command_queue q, cl_kernel k, size_t global,
                const size_t *local, int reps) {
  double best = -1;
  for (int r = 0; r < reps; ++r) {
    cl_event e = nullptr;
    if (clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, local, 0, nullptr,
                               &e) != CL_SUCCESS)
      return -1;
    clWaitForEvents(1, &e);
    cl_ulong s = 0, t = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof s, &s,
                            nullptr);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr);
    clReleaseEvent(e);
    double sec = (t - s) * 1e-9;
    if (sec > 0 && (best < 0 || sec < best))
      best = sec;
  }
  return best;
}

} // namespace

bool measureDevicePeak(const std::string &fullName, DevicePeak &out,
                       std::string &error) {
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  if (np)
    clGetPlatformIDs(np, ps.data(), nullptr);
  cl_device_id dev = nullptr;
  for (cl_platform_id p : ps) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS)
      continue;
    std::vector<cl_device_id> ds(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
    for (cl_device_id d : ds)
      if (!dev && str(p, CL_PLATFORM_NAME) + " / " + str(d, CL_DEVICE_NAME) ==
                      fullName)
        dev = d;
  }
  if (!dev) {
    error = "device '" + fullName + "' not found";
    return false;
  }
  Objects o;
  cl_int err = CL_SUCCESS;
  o.ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  if (err == CL_SUCCESS)
    o.q = clCreateCommandQueue(o.ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err == CL_SUCCESS)
    o.prog = clCreateProgramWithSource(o.ctx, 1, &kSource, nullptr, &err);
  if (err == CL_SUCCESS)
    err = clBuildProgram(o.prog, 1, &dev, "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    error = "building the peak kernels failed (OpenCL error " +
            std::to_string(err) + ")";
    return false;
  }
  cl_kernel fma = clCreateKernel(o.prog, "fma_peak", &err);
  o.kernels.push_back(fma);
  cl_kernel copy = clCreateKernel(o.prog, "copy_peak", &err);
  o.kernels.push_back(copy);
  cl_uint cus = 1;
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, nullptr);
  cl_device_type type = 0;
  clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  bool gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  cl_ulong maxAlloc = 0;
  clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxAlloc, &maxAlloc,
                  nullptr);

  // FMA: enough work-items to fill every lane of every compute unit; on a
  // CPU one work-item per work-group (PoCL runs a work-group's items one
  // after another on one core, so one large group would use one core).
  size_t items = static_cast<size_t>(cus) * (gpu ? 4096 : 16);
  const size_t one = 1;
  const size_t *local = gpu ? nullptr : &one;
  cl_mem outBuf =
      clCreateBuffer(o.ctx, CL_MEM_WRITE_ONLY, items * sizeof(float), nullptr,
                     &err);
  o.mems.push_back(outBuf);
  float a = 0.999f, b = 1e-3f;
  cl_int iters = gpu ? 2048 : 16384;
  clSetKernelArg(fma, 0, sizeof outBuf, &outBuf);
  clSetKernelArg(fma, 1, sizeof a, &a);
  clSetKernelArg(fma, 2, sizeof b, &b);
  clSetKernelArg(fma, 3, sizeof iters, &iters);
  // Warm-up first: PoCL compiles on the first launch.
  bestTime(o.q, fma, items, local, 1);
  double t = bestTime(o.q, fma, items, local, 5);
  if (t <= 0) {
    error = "timing the FMA kernel failed";
    return false;
  }
  out.gflops = 8.0 * 16 * 2 * iters * items / t * 1e-9;

  // Copy: 256 MiB each way (less if the device allows less).
  size_t bytes = std::min<size_t>(size_t(256) << 20, maxAlloc / 2);
  bytes -= bytes % 16;
  cl_mem in = clCreateBuffer(o.ctx, CL_MEM_READ_ONLY, bytes, nullptr, &err);
  o.mems.push_back(in);
  cl_mem dst = clCreateBuffer(o.ctx, CL_MEM_WRITE_ONLY, bytes, nullptr, &err);
  o.mems.push_back(dst);
  if (err != CL_SUCCESS) {
    error = "allocating the copy buffers failed";
    return false;
  }
  clSetKernelArg(copy, 0, sizeof in, &in);
  clSetKernelArg(copy, 1, sizeof dst, &dst);
  bestTime(o.q, copy, bytes / 16, nullptr, 1);
  t = bestTime(o.q, copy, bytes / 16, nullptr, 5);
  if (t <= 0) {
    error = "timing the copy kernel failed";
    return false;
  }
  out.gbytesPerSecond = 2.0 * bytes / t * 1e-9;
  return true;
}

} // namespace aotc::cli

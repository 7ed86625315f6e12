/// \file
/// The OpenCL harness of cl_test_util.h.
#include "cl_test_util.h"

namespace aotc::test {

ClEnv &ClEnv::get() {
  static ClEnv env = [] {
    ClEnv e;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &e.platform, &n) != CL_SUCCESS || n == 0) {
      e.error = "no OpenCL platform";
      e.platform = nullptr;
      return e;
    }
    if (clGetDeviceIDs(e.platform, CL_DEVICE_TYPE_ALL, 1, &e.device, &n) !=
            CL_SUCCESS ||
        n == 0) {
      e.error = "no OpenCL device";
      e.device = nullptr;
      return e;
    }
    cl_int err = CL_SUCCESS;
    e.context = clCreateContext(nullptr, 1, &e.device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      e.error = "clCreateContext failed: " + std::to_string(err);
      e.context = nullptr;
      return e;
    }
    e.queue = clCreateCommandQueue(e.context, e.device, 0, &err);
    if (err != CL_SUCCESS) {
      e.error = "clCreateCommandQueue failed: " + std::to_string(err);
      e.queue = nullptr;
    }
    return e;
  }();
  return env;
}

cl_program buildProgram(const std::string &source, const std::string &options,
                        std::string &log) {
  ClEnv &env = ClEnv::get();
  if (!env.queue) {
    log = env.error;
    return nullptr;
  }
  const char *text = source.c_str();
  size_t size = source.size();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(env.context, 1, &text, &size, &err);
  if (err != CL_SUCCESS) {
    log = "clCreateProgramWithSource failed: " + std::to_string(err);
    return nullptr;
  }
  err = clBuildProgram(p, 1, &env.device, options.c_str(), nullptr, nullptr);
  if (err == CL_SUCCESS)
    return p;
  size_t n = 0;
  clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string buildLog(n, '\0');
  clGetProgramBuildInfo(p, env.device, CL_PROGRAM_BUILD_LOG, n, buildLog.data(),
                        nullptr);
  log = "clBuildProgram failed (" + std::to_string(err) + "):\n" + buildLog;
  clReleaseProgram(p);
  return nullptr;
}

cl_mem makeBuffer(size_t bytes, const void *init) {
  ClEnv &env = ClEnv::get();
  cl_int err = CL_SUCCESS;
  cl_mem_flags flags = CL_MEM_READ_WRITE;
  if (init)
    flags |= CL_MEM_COPY_HOST_PTR;
  return clCreateBuffer(env.context, flags, bytes ? bytes : 1,
                        const_cast<void *>(init), &err);
}

void readBuffer(cl_mem m, size_t offset, size_t bytes, void *out) {
  clEnqueueReadBuffer(ClEnv::get().queue, m, CL_TRUE, offset, bytes, out, 0,
                      nullptr, nullptr);
}

cl_int launch(cl_program program, const std::string &kernel,
              const std::vector<KernelArg> &args,
              const std::vector<size_t> &global) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program, kernel.c_str(), &err);
  if (err != CL_SUCCESS)
    return err;
  cl_uint n = 0;
  for (const KernelArg &a : args) {
    if (a.buffer) {
      cl_ulong off = a.offset;
      err = clSetKernelArg(k, n++, sizeof(cl_mem), &a.buffer);
      if (err == CL_SUCCESS)
        err = clSetKernelArg(k, n++, sizeof(cl_ulong), &off);
    } else {
      cl_long v = a.scalar;
      err = clSetKernelArg(k, n++, sizeof(cl_long), &v);
    }
    if (err != CL_SUCCESS) {
      clReleaseKernel(k);
      return err;
    }
  }
  cl_uint numArgs = 0;
  clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(numArgs), &numArgs, nullptr);
  if (numArgs != n) {
    clReleaseKernel(k);
    return CL_INVALID_KERNEL_ARGS;
  }
  ClEnv &env = ClEnv::get();
  err = clEnqueueNDRangeKernel(env.queue, k,
                               static_cast<cl_uint>(global.size()), nullptr,
                               global.data(), nullptr, 0, nullptr, nullptr);
  if (err == CL_SUCCESS)
    err = clFinish(env.queue);
  clReleaseKernel(k);
  return err;
}

} // namespace aotc::test

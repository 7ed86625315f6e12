// The launch path sets a kernel argument only when it changed since the
// instance last launched that kernel (runtime/src/launch.cpp): a run like the
// one before sets none; a run at another batch sets what the batch moves; a
// run after a buffer grew, after a weight update, or on the caller's device
// buffers sets what those changed; and every run's outputs stay right.
//
// Its own executable: it interposes clSetKernelArg (exported from the
// executable, which the model .so's references bind to before libOpenCL's)
// to count the calls, and forwards each to the real one.
#include "model_test_util.h"

#include <gtest/gtest.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>

#include <atomic>
#include <cmath>

namespace {
std::atomic<int64_t> gSetArgCalls{0};

// Host runs copy through the instance's own buffers here: a CPU device
// would otherwise use the runner's aligned host tensors in place, in
// buffers made per run, whose arguments every run sets (host_io.h;
// e2e.HostIO covers that path).
const bool kCopies = setenv("AOTC_ZERO_COPY", "0", 1) == 0;
} // namespace

extern "C" CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel,
                                                          cl_uint index,
                                                          size_t size,
                                                          const void *value) {
  using Fn = cl_int(CL_API_CALL *)(cl_kernel, cl_uint, size_t, const void *);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "clSetKernelArg"));
  gSetArgCalls.fetch_add(1);
  return real(kernel, index, size, value);
}

using namespace aotc::e2e;

namespace {

constexpr int64_t kIn = 6, kOut = 5;

std::vector<float> weights(float seed) {
  std::vector<float> w(kIn * kOut);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(seed * static_cast<float>(i + 1));
  return w;
}

/// y = Relu(x @ w + b), z = ReduceSum(x, axis 1): kernels reading the
/// input, a weight, the arena and the batch.
std::string buildModel() {
  ModelBuilder mb("launch_args");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", kIn});
  std::vector<float> b(kOut);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 0.1f * static_cast<float>(i) - 0.2f;
  mb.initializerF32("w", {kIn, kOut}, weights(0.4f));
  mb.initializerF32("b", {kOut}, b);
  mb.initializerI64("axes", {1}, {1});
  mb.node("MatMul", {"x", "w"}, {"m"});
  mb.node("Add", {"m", "b"}, {"a"});
  mb.node("Exp", {"a"}, {"e"}); // a second kernel between them
  mb.node("Log", {"e"}, {"l"});
  mb.node("Relu", {"l"}, {"y"});
  auto &r = mb.node("ReduceSum", {"x", "axes"}, {"z"});
  ModelBuilder::attrInt(r, "keepdims", 0);
  mb.output("y", onnx::TensorProto::FLOAT, {"N", kOut});
  mb.output("z", onnx::TensorProto::FLOAT, {"N"});
  return mb.bytes();
}

aotc::HostTensor input(int64_t n, float seed) {
  std::vector<float> x(static_cast<size_t>(n * kIn));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::cos(seed + 0.37f * static_cast<float>(i));
  return aotc::HostTensor::fromVector({n, kIn}, x);
}

/// Checks y and z against the host's computation with weights \p w.
void expectOutputs(const std::vector<aotc::HostTensor> &out,
                   const aotc::HostTensor &x, const std::vector<float> &w) {
  const int64_t n = x.shape()[0];
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, kOut}));
  ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{n}));
  const float *xs = x.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0;
    for (int64_t k = 0; k < kIn; ++k)
      sum += xs[i * kIn + k];
    EXPECT_NEAR(out[1].data<float>()[i], sum, 1e-5f) << "row " << i;
    for (int64_t j = 0; j < kOut; ++j) {
      float a = 0.1f * static_cast<float>(j) - 0.2f;
      for (int64_t k = 0; k < kIn; ++k)
        a += xs[i * kIn + k] * w[static_cast<size_t>(k * kOut + j)];
      EXPECT_NEAR(out[0].data<float>()[i * kOut + j], std::max(a, 0.0f),
                  1e-4f)
          << "row " << i << " column " << j;
    }
  }
}

class LaunchArgs : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Compiled c = compileModel(buildModel());
    ASSERT_EQ(c.exitCode, 0) << c.output;
    path_ = c.soPath;
  }
  /// The clSetKernelArg calls of one run.
  static int64_t callsOf(const aotc::Model &m, const aotc::HostTensor &x,
                         const std::vector<float> &w) {
    gSetArgCalls = 0;
    std::vector<aotc::HostTensor> out = m.run({x});
    int64_t calls = gSetArgCalls.load();
    expectOutputs(out, x, w);
    return calls;
  }
  static std::string path_;
};
std::string LaunchArgs::path_;

TEST_F(LaunchArgs, ARunSetsOnlyWhatChanged) {
  aotc::Model m = loadModel(path_);
  ASSERT_EQ(m.numInstances(), 1u);
  const std::vector<float> w = weights(0.4f);
  // The first run sets every argument (the warm-up at load may have set
  // some already: at least one per kernel is left, its batch).
  const int64_t first = callsOf(m, input(3, 0.0f), w);
  EXPECT_GT(first, 0);
  // The same batch again, other values: nothing changed.
  EXPECT_EQ(callsOf(m, input(3, 1.0f), w), 0);
  EXPECT_EQ(callsOf(m, input(3, 2.0f), w), 0);
  // A larger batch grows the buffers: new allocations are set again.
  const int64_t grown = callsOf(m, input(300, 3.0f), w);
  EXPECT_GT(grown, 0);
  EXPECT_EQ(callsOf(m, input(300, 4.0f), w), 0);
  // Back to 3 rows: the buffers are large enough; the batch changed (and
  // whatever offsets it moves), not the buffers.
  const int64_t back = callsOf(m, input(3, 5.0f), w);
  EXPECT_GT(back, 0);
  EXPECT_LT(back, grown);
  EXPECT_EQ(callsOf(m, input(3, 6.0f), w), 0);
  // Batch 0: no kernel runs; the next run is like the one before it.
  EXPECT_EQ(callsOf(m, input(0, 0.0f), w), 0);
  EXPECT_EQ(callsOf(m, input(3, 7.0f), w), 0);
}

TEST_F(LaunchArgs, UpdatedWeightsAreSetAgain) {
  aotc::Model m = loadModel(path_);
  std::vector<float> w = weights(0.4f);
  callsOf(m, input(4, 0.0f), w);
  EXPECT_EQ(callsOf(m, input(4, 1.0f), w), 0);
  // A new constant set: its buffers are other allocations, whatever their
  // handles (a released set's may come back).
  for (float seed : {1.3f, 2.9f, 0.7f}) {
    w = weights(seed);
    m.updateConstants({{"w", aotc::HostTensor::fromVector({kIn, kOut}, w)}});
    EXPECT_GT(callsOf(m, input(4, seed), w), 0) << seed;
    EXPECT_EQ(callsOf(m, input(4, seed + 1), w), 0) << seed;
  }
}

TEST_F(LaunchArgs, CallersDeviceBuffersAreSetEveryRun) {
  aotc::Model m = loadModel(path_);
  auto [ctx, dev] = m.openclHandles();
  cl_context context = static_cast<cl_context>(ctx);
  cl_device_id device = static_cast<cl_device_id>(dev);
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const std::vector<float> w = weights(0.4f);
  const int64_t n = 7;
  // New buffers each round, the old ones released first: a handle may come
  // back for another buffer, which the runtime cannot tell; it sets them.
  for (int round = 0; round < 6; ++round) {
    aotc::HostTensor x = input(n, static_cast<float>(round));
    cl_mem in = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               x.nbytes(), const_cast<void *>(x.raw()), &err);
    ASSERT_EQ(err, CL_SUCCESS);
    cl_mem y = clCreateBuffer(context, CL_MEM_READ_WRITE,
                              n * kOut * sizeof(float), nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    cl_mem z = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float),
                              nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    std::vector<aotc_device_tensor_t> ins(1), outs(2);
    ins[0].buffer = in;
    ins[0].nbytes = x.nbytes();
    ins[0].dtype = AOTC_DTYPE_FLOAT32;
    ins[0].rank = 2;
    ins[0].shape[0] = n;
    ins[0].shape[1] = kIn;
    outs[0].buffer = y;
    outs[0].nbytes = n * kOut * sizeof(float);
    outs[1].buffer = z;
    outs[1].nbytes = n * sizeof(float);
    gSetArgCalls = 0;
    m.runDevice(ins, outs);
    // Each kernel reads x or writes y or z: at least one call per kernel.
    EXPECT_GE(gSetArgCalls.load(), 2) << "round " << round;
    std::vector<aotc::HostTensor> out = {
        aotc::HostTensor(AOTC_DTYPE_FLOAT32, {n, kOut}),
        aotc::HostTensor(AOTC_DTYPE_FLOAT32, {n})};
    ASSERT_EQ(clEnqueueReadBuffer(queue, y, CL_TRUE, 0, out[0].nbytes(),
                                  out[0].raw(), 0, nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(queue, z, CL_TRUE, 0, out[1].nbytes(),
                                  out[1].raw(), 0, nullptr, nullptr),
              CL_SUCCESS);
    expectOutputs(out, x, w);
    clReleaseMemObject(in);
    clReleaseMemObject(y);
    clReleaseMemObject(z);
  }
  // A host run after device runs: the instance's own buffers again.
  EXPECT_GT(callsOf(m, input(n, 9.0f), w), 0);
  EXPECT_EQ(callsOf(m, input(n, 10.0f), w), 0);
  clReleaseCommandQueue(queue);
}

} // namespace

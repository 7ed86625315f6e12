// Device-resident inputs and outputs (aotc_container_run_device): the host
// allocates buffers in the container's OpenCL context, the kernels read and
// write them directly, and the results equal a host run's; bad buffers are
// errors that name the tensor, and run-time checks still report. Runs
// enqueued on the caller's command queue without waiting
// (aotc_container_run_device_async) are ordered with that queue's work both
// ways and report their run-time checks at aotc_run_wait.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <gtest/gtest.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cmath>

using namespace aotc::e2e;

namespace {

/// y = Relu(x @ w + b), z = ReduceSum(x, axis 1): two outputs, batch N.
std::string buildModel() {
  ModelBuilder mb("device_io");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", 6});
  std::vector<float> w(6 * 5), b(5);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.4f * static_cast<float>(i));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 0.1f * static_cast<float>(i) - 0.2f;
  mb.initializerF32("w", {6, 5}, w);
  mb.initializerF32("b", {5}, b);
  mb.initializerI64("axes", {1}, {1});
  mb.node("MatMul", {"x", "w"}, {"m"});
  mb.node("Add", {"m", "b"}, {"a"});
  mb.node("Relu", {"a"}, {"y"});
  auto &r = mb.node("ReduceSum", {"x", "axes"}, {"z"});
  ModelBuilder::attrInt(r, "keepdims", 0);
  mb.output("y", onnx::TensorProto::FLOAT, {"N", 5});
  mb.output("z", onnx::TensorProto::FLOAT, {"N"});
  return mb.bytes();
}

class DeviceIO : public ::testing::Test {
protected:
  void SetUp() override {
    Compiled c = compileModel(buildModel());
    ASSERT_EQ(c.exitCode, 0) << c.output;
    model_ = std::make_unique<aotc::Model>(loadModel(c.soPath));
    auto [ctx, dev] = model_->openclHandles();
    context_ = static_cast<cl_context>(ctx);
    device_ = static_cast<cl_device_id>(dev);
    ASSERT_NE(context_, nullptr);
    cl_int err = CL_SUCCESS;
    queue_ = clCreateCommandQueue(context_, device_, 0, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    for (cl_mem m : mems_)
      clReleaseMemObject(m);
    if (queue_)
      clReleaseCommandQueue(queue_);
  }
  cl_mem buffer(size_t bytes, cl_context in = nullptr) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(in ? in : context_, CL_MEM_READ_WRITE,
                              std::max<size_t>(bytes, 4), nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    mems_.push_back(m);
    return m;
  }
  void write(cl_mem m, size_t offset, const std::vector<float> &v) {
    ASSERT_EQ(clEnqueueWriteBuffer(queue_, m, CL_TRUE, offset,
                                   v.size() * sizeof(float), v.data(), 0,
                                   nullptr, nullptr),
              CL_SUCCESS);
  }
  std::vector<float> read(cl_mem m, size_t offset, size_t n) {
    std::vector<float> v(n);
    EXPECT_EQ(clEnqueueReadBuffer(queue_, m, CL_TRUE, offset,
                                  n * sizeof(float), v.data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
    return v;
  }
  static aotc_device_tensor_t tensor(cl_mem m, uint64_t offset,
                                     uint64_t bytes,
                                     std::vector<int64_t> shape = {}) {
    aotc_device_tensor_t t;
    std::memset(&t, 0, sizeof(t));
    t.buffer = m;
    t.offset = offset;
    t.nbytes = bytes;
    t.dtype = AOTC_DTYPE_FLOAT32;
    t.rank = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      t.shape[d] = shape[d];
    return t;
  }
  std::vector<float> input(int64_t n) {
    std::vector<float> x(n * 6);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(1.3f * static_cast<float>(i)) * 2.0f;
    return x;
  }

  std::unique_ptr<aotc::Model> model_;
  cl_context context_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_mem> mems_;
};

TEST_F(DeviceIO, MatchesAHostRunWithoutHostCopies) {
  for (int64_t n : {0, 1, 7}) {
    std::vector<float> x = input(n);
    auto host = model_->run({aotc::HostTensor::fromVector({n, 6}, x)});
    // The input at offset 256 of a larger buffer; outputs in one buffer.
    cl_mem in = buffer(256 + x.size() * 4);
    cl_mem out = buffer(512 + 256 + n * 5 * 4 + n * 4 + 256);
    if (n > 0)
      write(in, 256, x);
    std::vector<aotc_device_tensor_t> ins = {tensor(in, 256, x.size() * 4,
                                                    {n, 6})};
    uint64_t yOff = 512, zOff = 512 + ((n * 20 + 255) / 256) * 256;
    std::vector<aotc_device_tensor_t> outs = {tensor(out, yOff, n * 20),
                                              tensor(out, zOff, n * 4)};
    model_->runDevice(ins, outs);
    ASSERT_EQ(outs[0].rank, 2);
    EXPECT_EQ(outs[0].shape[0], n);
    EXPECT_EQ(outs[0].shape[1], 5);
    ASSERT_EQ(outs[1].rank, 1);
    EXPECT_EQ(outs[1].shape[0], n);
    if (n == 0)
      continue;
    EXPECT_EQ(read(out, yOff, n * 5), host[0].toVector<float>()) << n;
    EXPECT_EQ(read(out, zOff, n), host[1].toVector<float>()) << n;
  }
}

TEST_F(DeviceIO, BadBuffersAreErrorsNamingTheTensor) {
  std::vector<float> x = input(2);
  cl_mem in = buffer(x.size() * 4), out = buffer(1024);
  write(in, 0, x);
  auto expectError = [&](std::vector<aotc_device_tensor_t> ins,
                         std::vector<aotc_device_tensor_t> outs, int status,
                         const std::string &fragment) {
    EXPECT_TRUE(
        refused([&] { model_->runDevice(ins, outs); }, {fragment}, status))
        << "accepted: " << fragment;
  };
  auto goodIn = tensor(in, 0, x.size() * 4, {2, 6});
  auto outs = [&] {
    return std::vector<aotc_device_tensor_t>{tensor(out, 0, 40),
                                             tensor(out, 256, 8)};
  };
  // Too small: every shape is filled first.
  std::vector<aotc_device_tensor_t> small = {tensor(out, 0, 39),
                                             tensor(out, 256, 8)};
  EXPECT_TRUE(refused([&] { model_->runDevice({goodIn}, small); },
                      {"output 'y': the buffer range holds 39 bytes"},
                      AOTC_ERROR_BUFFER_TOO_SMALL))
      << "a too small output";
  EXPECT_EQ(small[1].rank, 1);
  EXPECT_EQ(small[1].shape[0], 2);
  expectError({tensor(in, 0, 40, {2, 6})}, outs(),
              AOTC_ERROR_INVALID_ARGUMENT, "input 'x'");
  expectError({tensor(in, 128, x.size() * 4, {2, 6})}, outs(),
              AOTC_ERROR_INVALID_ARGUMENT, "offset 128 is not a multiple");
  expectError({goodIn}, {tensor(out, 0, 40), tensor(out, 768, 512)},
              AOTC_ERROR_INVALID_ARGUMENT, "pass the end of the 1024-byte");
  expectError({goodIn}, {tensor(out, 0, 40), tensor(out, 0, 8)},
              AOTC_ERROR_INVALID_ARGUMENT, "output 'z' overlaps output 'y'");
  expectError({goodIn}, {tensor(in, 0, 48), tensor(out, 256, 8)},
              AOTC_ERROR_INVALID_ARGUMENT, "output 'y' overlaps input 'x'");
  expectError({goodIn}, {tensor(nullptr, 0, 40), tensor(out, 256, 8)},
              AOTC_ERROR_INVALID_ARGUMENT, "output 'y': buffer is null");
  // A buffer of another context.
  cl_int err = CL_SUCCESS;
  cl_context other =
      clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 1024, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  expectError({goodIn}, {tensor(foreign, 0, 40), tensor(out, 256, 8)},
              AOTC_ERROR_INVALID_ARGUMENT, "another OpenCL context");
  clReleaseMemObject(foreign);
  clReleaseContext(other);
  // Defaults cannot be replaced in a device run: the required inputs only.
  expectError({}, outs(), AOTC_ERROR_INVALID_ARGUMENT,
              "a device run takes the 1 required inputs, got 0");
  // And after all that, a good run still works.
  std::vector<aotc_device_tensor_t> o = outs();
  model_->runDevice({goodIn}, o);
  auto host = model_->run({aotc::HostTensor::fromVector({2, 6}, x)});
  EXPECT_EQ(read(out, 0, 10), host[0].toVector<float>());
}

// A model created in the host's own context (ModelOptions::clContext) runs
// on the host's buffers of that context, and keeps the context after the
// host lets go of it; two models of one context share it.
TEST_F(DeviceIO, ModelsCreatedInTheHostsContext) {
  cl_int err = CL_SUCCESS;
  cl_context host = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  aotc::ModelOptions opts = deviceOptions();
  opts.clContext = host;
  Compiled c = compileModel(buildModel());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model a = aotc::Model::load(c.soPath, opts);
  aotc::Model b = aotc::Model::load(c.soPath, opts);
  EXPECT_EQ(a.openclHandles().first, static_cast<void *>(host));
  EXPECT_EQ(b.openclHandles().first, static_cast<void *>(host));
  cl_command_queue q = clCreateCommandQueue(host, device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const int64_t n = 3;
  std::vector<float> x = input(n);
  cl_mem in = clCreateBuffer(host, CL_MEM_READ_WRITE, x.size() * 4, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem out = clCreateBuffer(host, CL_MEM_READ_WRITE, 512, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(clEnqueueWriteBuffer(q, in, CL_TRUE, 0, x.size() * 4, x.data(), 0,
                                 nullptr, nullptr),
            CL_SUCCESS);
  clReleaseCommandQueue(q);
  // The host's references go; the models hold the context.
  clReleaseContext(host);
  auto expected = a.run({aotc::HostTensor::fromVector({n, 6}, x)});
  std::vector<aotc_device_tensor_t> outs = {tensor(out, 0, n * 5 * 4, {n, 5}),
                                            tensor(out, 256, n * 4, {n})};
  b.runDevice({tensor(in, 0, x.size() * 4, {n, 6})}, outs);
  std::vector<float> y(n * 5), z(n);
  cl_command_queue q2 = clCreateCommandQueue(
      static_cast<cl_context>(b.openclHandles().first), device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q2, out, CL_TRUE, 0, y.size() * 4, y.data(), 0,
                                nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q2, out, CL_TRUE, 256, z.size() * 4, z.data(),
                                0, nullptr, nullptr),
            CL_SUCCESS);
  clReleaseCommandQueue(q2);
  EXPECT_EQ(y, expected[0].toVector<float>());
  EXPECT_EQ(z, expected[1].toVector<float>());
  clReleaseMemObject(in);
  clReleaseMemObject(out);
}

// The host writes inputs, runs and reads outputs on its own queue with no
// blocking call in between: non-blocking writes before the run and reads
// after it see the run's order (4 runs in flight on 1 and 2 instances, none
// waited for until the end, the input rewritten between runs); the results
// equal host runs.
TEST_F(DeviceIO, AsyncRunsAreOrderedWithTheCallersQueue) {
  for (int instances : {1, 2}) {
    aotc::ModelOptions opts = deviceOptions();
    opts.numInstances = instances;
    Compiled c = compileModel(buildModel());
    ASSERT_EQ(c.exitCode, 0) << c.output;
    aotc::Model m = aotc::Model::load(c.soPath, opts);
    auto [ctx, dev] = m.openclHandles();
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(
        static_cast<cl_context>(ctx), static_cast<cl_device_id>(dev), 0, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    const int64_t n = 5;
    const int runs = 4;
    std::vector<std::vector<float>> xs, ys(runs, std::vector<float>(n * 5)),
        zs(runs, std::vector<float>(n));
    std::vector<cl_mem> mems;
    auto mk = [&](size_t bytes) {
      cl_mem mem = clCreateBuffer(static_cast<cl_context>(ctx),
                                  CL_MEM_READ_WRITE, bytes, nullptr, &err);
      EXPECT_EQ(err, CL_SUCCESS);
      mems.push_back(mem);
      return mem;
    };
    // One input buffer shared by all runs: each write must wait for the
    // previous run and each run for its write.
    cl_mem in = mk(n * 6 * 4);
    std::vector<aotc::Model::DeviceRun> pending;
    for (int r = 0; r < runs; ++r) {
      std::vector<float> x = input(n);
      for (float &v : x)
        v += static_cast<float>(r);
      xs.push_back(x);
      ASSERT_EQ(clEnqueueWriteBuffer(q, in, CL_FALSE, 0, x.size() * 4,
                                     xs.back().data(), 0, nullptr, nullptr),
                CL_SUCCESS);
      cl_mem y = mk(n * 5 * 4), z = mk(n * 4);
      std::vector<aotc_device_tensor_t> outs = {tensor(y, 0, n * 20),
                                                tensor(z, 0, n * 4)};
      pending.push_back(m.runDeviceAsync({tensor(in, 0, n * 24, {n, 6})},
                                         outs, q));
      EXPECT_EQ(outs[0].shape[0], n);
      EXPECT_EQ(outs[1].shape[0], n);
      ASSERT_EQ(clEnqueueReadBuffer(q, y, CL_FALSE, 0, n * 20, ys[r].data(),
                                    0, nullptr, nullptr),
                CL_SUCCESS);
      ASSERT_EQ(clEnqueueReadBuffer(q, z, CL_FALSE, 0, n * 4, zs[r].data(), 0,
                                    nullptr, nullptr),
                CL_SUCCESS);
      // No wait here: a run holds its instance only while it is enqueued
      // (the instance's queue keeps the runs in order).
    }
    ASSERT_EQ(clFinish(q), CL_SUCCESS);
    for (auto &p : pending)
      p.wait();
    for (int r = 0; r < runs; ++r) {
      auto host = m.run({aotc::HostTensor::fromVector({n, 6}, xs[r])});
      EXPECT_EQ(ys[r], host[0].toVector<float>()) << instances << " " << r;
      EXPECT_EQ(zs[r], host[1].toVector<float>()) << instances << " " << r;
    }
    for (cl_mem mem : mems)
      clReleaseMemObject(mem);
    clReleaseCommandQueue(q);
  }
}

TEST_F(DeviceIO, AsyncRunsRefuseBadQueuesAndFreeNothingOnErrors) {
  std::vector<float> x = input(2);
  cl_mem in = buffer(x.size() * 4), out = buffer(1024);
  write(in, 0, x);
  std::vector<aotc_device_tensor_t> outs = {tensor(out, 0, 40),
                                            tensor(out, 256, 8)};
  auto expectError = [&](void *queue, std::vector<aotc_device_tensor_t> ins,
                         const std::string &fragment) {
    EXPECT_TRUE(refused([&] { model_->runDeviceAsync(ins, outs, queue); },
                        {fragment}, AOTC_ERROR_INVALID_ARGUMENT))
        << "accepted: " << fragment;
  };
  expectError(nullptr, {tensor(in, 0, 48, {2, 6})}, "queue is null");
  cl_int err = CL_SUCCESS;
  cl_context other =
      clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_command_queue foreign = clCreateCommandQueue(other, device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  expectError(foreign, {tensor(in, 0, 48, {2, 6})}, "another context");
  clReleaseCommandQueue(foreign);
  clReleaseContext(other);
  expectError(queue_, {tensor(in, 0, 40, {2, 6})}, "input 'x'");
  // Errors took no instance: the one instance still serves a run.
  aotc::Model::DeviceRun run =
      model_->runDeviceAsync({tensor(in, 0, 48, {2, 6})}, outs, queue_);
  EXPECT_TRUE(run.pending());
  run.wait();
  EXPECT_FALSE(run.pending());
  auto host = model_->run({aotc::HostTensor::fromVector({2, 6}, x)});
  EXPECT_EQ(read(out, 0, 10), host[0].toVector<float>());
  // Waiting twice, or for nothing, is an error, not a crash.
  EXPECT_THROW(run.wait(), aotc::Error);
  EXPECT_THROW(aotc::Model::DeviceRun().wait(), aotc::Error);
}

TEST(DeviceIOChecks, BadIndicesInDeviceInputsAreReported) {
  ModelBuilder mb("device_gather");
  mb.initializerF32("w", {3, 4}, std::vector<float>(12, 1.5f));
  mb.input("idx", onnx::TensorProto::INT64, {"n"});
  mb.node("Gather", {"w", "idx"}, {"y"}, "pick");
  mb.output("y", onnx::TensorProto::FLOAT, {"n", 4});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  auto [ctx, dev] = m.openclHandles();
  cl_int err = CL_SUCCESS;
  cl_context context = static_cast<cl_context>(ctx);
  cl_command_queue q = clCreateCommandQueue(
      context, static_cast<cl_device_id>(dev), 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<int64_t> idx = {0, 2, 7};
  cl_mem in = clCreateBuffer(context, CL_MEM_READ_WRITE, 24, nullptr, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 48, nullptr, &err);
  ASSERT_EQ(clEnqueueWriteBuffer(q, in, CL_TRUE, 0, 24, idx.data(), 0,
                                 nullptr, nullptr),
            CL_SUCCESS);
  aotc_device_tensor_t ti, to;
  std::memset(&ti, 0, sizeof(ti));
  std::memset(&to, 0, sizeof(to));
  ti.buffer = in;
  ti.nbytes = 24;
  ti.dtype = AOTC_DTYPE_INT64;
  ti.rank = 1;
  ti.shape[0] = 3;
  to.buffer = out;
  to.nbytes = 48;
  std::vector<aotc_device_tensor_t> outs = {to};
  EXPECT_TRUE(
      refused([&] { m.runDevice({ti}, outs); }, {"index 7 is out of range"}))
      << "index 7 of 3";
  // Enqueued without waiting: the check reports at the wait.
  aotc::Model::DeviceRun run = m.runDeviceAsync({ti}, outs, q);
  EXPECT_TRUE(refused([&] { run.wait(); }, {"index 7 is out of range"}))
      << "index 7 of 3 was accepted by an asynchronous run";
  // A good index after it: the instance was given back.
  idx[2] = 1;
  ASSERT_EQ(clEnqueueWriteBuffer(q, in, CL_TRUE, 0, 24, idx.data(), 0,
                                 nullptr, nullptr),
            CL_SUCCESS);
  m.runDeviceAsync({ti}, outs, q).wait();
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseCommandQueue(q);
}

} // namespace

// A host run on PoCL's CPU device uses the caller's tensors in place
// (runtime/src/host_io.h): where every input and output starts on a 256-byte
// boundary and none overlaps another, the kernels read and write them
// directly and the run's profile has no copies; otherwise (an output over
// its input, a misaligned tensor, AOTC_ZERO_COPY=0, an output sized by a
// count) the run copies as before. Every case checks all of its outputs
// against a reference computed on the host.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

using namespace aotc::e2e;

namespace {

constexpr int64_t kRows = 9, kDim = 64;

/// The model .so's own aotc_container_run and aotc_last_error (the runner
/// has the library loaded; a test that links no runtime finds them there).
struct CApi {
  decltype(&aotc_container_run) run = nullptr;
  decltype(&aotc_last_error) lastError = nullptr;
};
CApi capi;

std::vector<float> weights() {
  std::vector<float> w(kDim * kDim);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.37f * static_cast<float>(i)) * 0.25f;
  return w;
}

aotc::Model compileMatMul() {
  ModelBuilder mb("host_io");
  mb.input("x", onnx::TensorProto::FLOAT, {kRows, kDim});
  mb.initializerF32("w", {kDim, kDim}, weights());
  mb.node("MatMul", {"x", "w"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {kRows, kDim});
  Compiled comp = compileModel(mb.bytes());
  EXPECT_EQ(comp.exitCode, 0) << comp.output;
  aotc::Model m = loadModel(comp.soPath);
  // The runner's handle: this dlopen only adds a reference.
  void *so = dlopen(comp.soPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(so, nullptr) << dlerror();
  capi.run = reinterpret_cast<decltype(capi.run)>(dlsym(so, "aotc_container_run"));
  capi.lastError =
      reinterpret_cast<decltype(capi.lastError)>(dlsym(so, "aotc_last_error"));
  EXPECT_TRUE(capi.run && capi.lastError);
  return m;
}

/// 256-byte aligned memory for \p floats floats plus \p skew bytes, the
/// data starting \p skew bytes past the boundary.
struct Block {
  explicit Block(size_t floats, size_t skew = 0)
      : raw(static_cast<char *>(::operator new(floats * 4 + 512,
                                               std::align_val_t(256)))),
        data(reinterpret_cast<float *>(raw + skew)) {}
  ~Block() { ::operator delete(raw, std::align_val_t(256)); }
  char *raw;
  float *data;
};

std::vector<float> input() {
  std::vector<float> x(kRows * kDim);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::cos(0.11f * static_cast<float>(i)) - 0.3f;
  return x;
}

std::vector<float> reference(const std::vector<float> &x) {
  std::vector<float> w = weights(), y(kRows * kDim, 0.0f);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t k = 0; k < kDim; ++k)
      for (int64_t c = 0; c < kDim; ++c)
        y[r * kDim + c] += x[r * kDim + k] * w[k * kDim + c];
  return y;
}

aotc_tensor_t tensor(float *data) {
  aotc_tensor_t t{};
  t.data = data;
  t.nbytes = kRows * kDim * 4;
  t.dtype = AOTC_DTYPE_FLOAT32;
  t.rank = 2;
  t.shape[0] = kRows;
  t.shape[1] = kDim;
  return t;
}

/// Runs with input at \p in and output at \p out (they may be the same
/// memory); returns the number of copy records of the run's profile.
int runAndCountCopies(aotc::Model &m, float *in, float *out) {
  std::vector<float> x = input();
  std::memcpy(in, x.data(), x.size() * 4);
  if (out != in)
    for (int64_t i = 0; i < kRows * kDim; ++i)
      out[i] = std::nanf("");
  aotc_tensor_t ti = tensor(in), to = tensor(out);
  m.setProfiling(true);
  EXPECT_EQ(capi.run(m.handle(), &ti, 1, &to, 1), AOTC_OK)
      << capi.lastError();
  std::vector<float> want = reference(x);
  for (int64_t i = 0; i < kRows * kDim; ++i)
    EXPECT_NEAR(out[i], want[i], 1e-4f * (1 + std::fabs(want[i]))) << i;
  int copies = 0;
  for (const aotc_profile_record_t &r : m.lastProfile())
    copies += r.kind == AOTC_PROFILE_COPY_IN || r.kind == AOTC_PROFILE_COPY_OUT;
  return copies;
}

TEST(HostIO, AlignedTensorsAreUsedInPlace) {
  unsetenv("AOTC_ZERO_COPY");
  aotc::Model m = compileMatMul();
  Block in(kRows * kDim), out(kRows * kDim);
  int copies = runAndCountCopies(m, in.data, out.data);
  if (onPocl(m))
    EXPECT_EQ(copies, 0);
  else
    EXPECT_EQ(copies, 2) << "other devices copy: " << m.deviceName();
  // Again, into the same memory (the buffers are made per run).
  EXPECT_EQ(runAndCountCopies(m, in.data, out.data), copies);
}

TEST(HostIO, AnOutputOverItsInputIsCopied) {
  unsetenv("AOTC_ZERO_COPY");
  aotc::Model m = compileMatMul();
  Block both(kRows * kDim);
  // In place: the kernels would read rows of x that they have overwritten.
  EXPECT_EQ(runAndCountCopies(m, both.data, both.data), 2);
}

TEST(HostIO, MisalignedTensorsAreCopied) {
  unsetenv("AOTC_ZERO_COPY");
  aotc::Model m = compileMatMul();
  Block in(kRows * kDim, 4), out(kRows * kDim), in2(kRows * kDim),
      out2(kRows * kDim, 128);
  EXPECT_EQ(runAndCountCopies(m, in.data, out.data), 2);
  EXPECT_EQ(runAndCountCopies(m, in2.data, out2.data), 2);
}

TEST(HostIO, TheEnvironmentTurnsItOff) {
  setenv("AOTC_ZERO_COPY", "0", 1);
  aotc::Model m = compileMatMul();
  Block in(kRows * kDim), out(kRows * kDim);
  EXPECT_EQ(runAndCountCopies(m, in.data, out.data), 2);
  unsetenv("AOTC_ZERO_COPY");
}

TEST(HostIO, HostTensorsAreAlignedForIt) {
  aotc::HostTensor t(AOTC_DTYPE_FLOAT32, {3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 256, 0u);
  aotc::HostTensor big(AOTC_DTYPE_FLOAT32, {1 << 20});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.raw()) % 256, 0u);
}

} // namespace

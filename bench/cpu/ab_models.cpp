// Two builds of one model timed against each other in one process, in
// alternated blocks of runs: what changed between two compiles (a flag, a
// pass), measured where the VM's state moves by 20-40% between minutes
// (docs/PERFORMANCE.md, stops 64-68). Each block times RUNS runs of A and of
// B (which goes first alternates) and takes each one's median; the ratio
// B/A of the block medians, over all blocks, is the figure (median and
// quartiles).
//
//   c++ -O2 -std=c++17 -I runtime/include -o /tmp/ab_models
//   bench/cpu/ab_models.cpp -ldl /tmp/ab_models A.so B.so BLOCKS RUNS DIMS
//   [GAP_MS]
//
// GAP_MS: an untimed sleep before each run, as a host that serves requests
// apart leaves the device idle between them (the spinning threads of stop
// 68 were 1.3-2x slower so, not back to back).
//
// DIMS: the shape of the model's one float32 input, comma separated
// ("1,3,224,224"); filled with values in [-0.5, 0.5). With the prefix "i64:"
// ("i64:1,128") the input is int64, filled with values in [0, 1000) (token
// ids of BERT and GPT-2). Both models run on the CPU device (AOTC_DEVICE to
// change it). The input and the outputs start on 256-byte boundaries, so
// that the runtime uses them in place, as the benchmark's worker does.
#include "open_model.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// Storage of \p nbytes starting on a 256-byte boundary, where the runtime
// uses a host tensor in place instead of copying it (runtime/src/host_io.h),
// as the benchmark's worker and a careful C host align theirs.
void *aligned(std::vector<char> &storage, uint64_t nbytes) {
  storage.resize(nbytes + 256);
  const auto at = reinterpret_cast<uintptr_t>(storage.data());
  return storage.data() + ((256 - at % 256) % 256);
}

struct Loaded {
  decltype(&aotc_container_run) run = nullptr;
  aotc_container_t *container = nullptr;
  std::vector<aotc_tensor_t> outputs;
  std::vector<std::vector<char>> storage;
};

bool load(const char *path, const aotc_tensor_t &input, Loaded &out) {
  OpenedModel m;
  if (!openModel("ab_models", path, m))
    return false;
  out.run = m.run;
  out.container = m.container;
  size_t n = 0;
  m.numOutputs(out.container, &n);
  // A run with empty outputs sizes them (AOTC_ERROR_BUFFER_TOO_SMALL).
  out.outputs.assign(n, aotc_tensor_t{});
  out.run(out.container, &input, 1, out.outputs.data(), n);
  out.storage.resize(n);
  for (size_t i = 0; i < n; ++i) {
    aotc_tensor_t &t = out.outputs[i];
    uint64_t elements = 1;
    for (int32_t d = 0; d < t.rank; ++d)
      elements *= static_cast<uint64_t>(t.shape[d]);
    t.nbytes = std::max<uint64_t>(1, elements * 8);
    t.data = aligned(out.storage[i], t.nbytes);
  }
  if (out.run(out.container, &input, 1, out.outputs.data(), n) != AOTC_OK) {
    std::fprintf(stderr, "ab_models: %s: %s\n", path, m.lastError());
    return false;
  }
  return true;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr,
                 "usage: ab_models A.so B.so BLOCKS RUNS DIMS [GAP_MS]\n");
    return 2;
  }
  int blocks = std::atoi(argv[3]), runs = std::atoi(argv[4]);
  const int gapMs = argc == 7 ? std::atoi(argv[6]) : 0;
  aotc_tensor_t input{};
  input.dtype = AOTC_DTYPE_FLOAT32;
  char *dims = argv[5];
  const bool ids = std::strncmp(dims, "i64:", 4) == 0;
  if (ids) {
    input.dtype = AOTC_DTYPE_INT64;
    dims += 4;
  }
  uint64_t elements = 1;
  for (char *p = std::strtok(dims, ","); p && input.rank < AOTC_MAX_RANK;
       p = std::strtok(nullptr, ","))
    elements *=
        static_cast<uint64_t>(input.shape[input.rank++] = std::atoll(p));
  if (blocks < 1 || runs < 1 || input.rank == 0) {
    std::fprintf(stderr, "ab_models: BLOCKS and RUNS >= 1, DIMS a shape\n");
    return 2;
  }
  std::vector<char> storage;
  input.nbytes = elements * (ids ? sizeof(int64_t) : sizeof(float));
  input.data = aligned(storage, input.nbytes);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  for (uint64_t i = 0; i < elements; ++i)
    if (ids)
      static_cast<int64_t *>(input.data)[i] =
          static_cast<int64_t>(gen() % 1000);
    else
      static_cast<float *>(input.data)[i] = dist(gen);
  Loaded m[2];
  if (!load(argv[1], input, m[0]) || !load(argv[2], input, m[1]))
    return 1;
  std::vector<double> medians[2], ratios;
  for (int b = 0; b < blocks; ++b) {
    double med[2];
    for (int turn = 0; turn < 2; ++turn) {
      int which = b % 2 ? 1 - turn : turn;
      std::vector<double> t;
      for (int r = 0; r < runs + 2; ++r) {
        if (gapMs > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
        auto a = std::chrono::steady_clock::now();
        if (m[which].run(m[which].container, &input, 1, m[which].outputs.data(),
                         m[which].outputs.size()) != AOTC_OK) {
          std::fprintf(stderr, "ab_models: a run of %s failed\n",
                       argv[1 + which]);
          return 1;
        }
        auto e = std::chrono::steady_clock::now();
        if (r >= 2) // two untimed runs after the other build's block
          t.push_back(std::chrono::duration<double, std::milli>(e - a).count());
      }
      med[which] = quantile(t, 0.5);
    }
    medians[0].push_back(med[0]);
    medians[1].push_back(med[1]);
    ratios.push_back(med[1] / med[0]);
  }
  std::printf(
      "A %s: %.3f ms, B %s: %.3f ms (medians of %d block medians of "
      "%d runs%s); B/A %.3f (quartiles %.3f %.3f)\n",
      argv[1], quantile(medians[0], 0.5), argv[2], quantile(medians[1], 0.5),
      blocks, runs,
      gapMs > 0 ? (", " + std::to_string(gapMs) + " ms apart").c_str() : "",
      quantile(ratios, 0.5), quantile(ratios, 0.25), quantile(ratios, 0.75));
  return 0;
}

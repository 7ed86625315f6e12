// One model, run alternately with its input and output on 4 KB pages and on
// transparent huge pages (docs/PERFORMANCE.md, stop 77): how much of a GEMM's
// time is the activation's page walks, where the runtime uses the caller's
// memory in place (runtime/src/host_io.h). The input is an N x N float32
// matrix (the gemm_N benchmark models), filled with values in [-0.5, 0.5).
//
//   c++ -O2 -std=c++17 -I runtime/include -o /tmp/huge_input
//   bench/cpu/huge_input.cpp -ldl /tmp/huge_input gemm_1024.so 1024 8 10
//
// Prints the median over BLOCKS of each placement's median of RUNS runs.
#include "open_model.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

// \p bytes of zeroed memory on a 2 MB boundary, advised onto huge pages or
// kept off them; null if the mapping fails.
void *region(size_t bytes, bool huge) {
  const size_t align = size_t{2} << 20;
  const size_t size = (bytes + align - 1) / align * align + align;
  void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  auto at = (reinterpret_cast<uintptr_t>(p) + align - 1) / align * align;
  char *q = reinterpret_cast<char *>(at);
  madvise(q, size - align, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  std::memset(q, 0, bytes);
  return q;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: huge_input MODEL.so N BLOCKS RUNS\n");
    return 2;
  }
  const int64_t n = std::atoll(argv[2]);
  const int blocks = std::atoi(argv[3]), runs = std::atoi(argv[4]);
  OpenedModel m;
  if (n < 1 || blocks < 1 || runs < 1 || !openModel("huge_input", argv[1], m))
    return 1;
  aotc_container_t *c = m.container;
  const auto run = m.run;
  const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  aotc_tensor_t in[2], out[2];
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  for (int k = 0; k < 2; ++k) {
    in[k] = aotc_tensor_t{};
    in[k].dtype = AOTC_DTYPE_FLOAT32;
    in[k].rank = 2;
    in[k].shape[0] = in[k].shape[1] = n;
    in[k].nbytes = bytes;
    in[k].data = region(bytes, k == 1);
    out[k] = in[k];
    out[k].data = region(bytes, k == 1);
    if (!in[k].data || !out[k].data)
      return 1;
    for (int64_t i = 0; i < n * n; ++i)
      static_cast<float *>(in[k].data)[i] = dist(gen);
  }
  std::vector<double> medians[2];
  for (int b = 0; b < blocks; ++b)
    for (int turn = 0; turn < 2; ++turn) {
      const int k = b % 2 ? 1 - turn : turn;
      std::vector<double> t;
      for (int r = 0; r < runs; ++r) {
        auto a = std::chrono::steady_clock::now();
        if (run(c, &in[k], 1, &out[k], 1) != AOTC_OK) {
          std::fprintf(stderr, "huge_input: a run failed\n");
          return 1;
        }
        t.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - a)
                        .count());
      }
      std::sort(t.begin(), t.end());
      medians[k].push_back(t[t.size() / 2]);
    }
  for (int k = 0; k < 2; ++k) {
    std::sort(medians[k].begin(), medians[k].end());
    std::printf("%s pages: %.3f ms (median of %d block medians of %d runs)\n",
                k ? "huge" : "4 KB", medians[k][medians[k].size() / 2], blocks,
                runs);
  }
  return 0;
}

/* Whether part of a model's weights can stay in the last-level cache from
 * one run to the next, where the whole set is larger than the cache: what
 * the MLP at batch 1 (96 MiB of weights streamed by three GEMVs a run)
 * would gain from it. docs/PERFORMANCE.md (stop 83) has this VM's figures.
 *
 *   cc -O2 -mavx512f -fopenmp -o /tmp/residency_probe bench/cpu/residency_probe.c
 *   /tmp/residency_probe sweep          # read rate of a working set read
 *                                       # again and again, 1 to 64 MiB
 *   /tmp/residency_probe layers M1 M2 M3
 *       # 16, 64 and 16 MiB "layers" read in turn on 2 threads, a barrier
 *       # between them, as the MLP's persistent launch does; Mi is how
 *       # layer i is read: 0 plain loads, 1 plain loads with prefetchnta
 *       # 2 KiB ahead, 2 non-temporal loads (vmovntdqa). Prints each
 *       # layer's mean time: with layers 2 and 3 streamed non-temporally,
 *       # layer 1 is faster only where its lines survived the other 80 MiB.
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static float *filled(size_t n) {
  float *p = aligned_alloc(64, n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    p[i] = 1.0f;
  return p;
}

/* The sum of p[0, n) (n a multiple of 32) read as \p mode says. */
static float sum(const float *p, size_t n, int mode) {
  __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 32) {
    if (mode == 1)
      _mm_prefetch((const char *)(p + i + 512), _MM_HINT_NTA);
    if (mode == 2) {
      a = _mm512_add_ps(a, _mm512_castsi512_ps(_mm512_stream_load_si512((void *)(p + i))));
      b = _mm512_add_ps(b, _mm512_castsi512_ps(_mm512_stream_load_si512((void *)(p + i + 16))));
    } else {
      a = _mm512_add_ps(a, _mm512_load_ps(p + i));
      b = _mm512_add_ps(b, _mm512_load_ps(p + i + 16));
    }
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a, b));
}

static volatile float sink;

static void sweep(void) {
  const double mib[] = {1, 4, 8, 12, 16, 24, 32, 64};
  for (size_t k = 0; k < sizeof mib / sizeof mib[0]; ++k) {
    size_t n = (size_t)(mib[k] * (1 << 20)) / sizeof(float);
    float *w = filled(n);
    double total = 0;
    for (int r = 0; r < 60; ++r) {
      double t0 = now_ms();
#pragma omp parallel num_threads(2)
      {
        int t = omp_get_thread_num();
        sink = sum(w + t * (n / 2), n / 2, 0);
      }
      if (r >= 10)
        total += now_ms() - t0;
    }
    double ms = total / 50;
    printf("%5.0f MiB read again and again: %.3f ms, %.1f GB/s\n", mib[k], ms,
           n * sizeof(float) / ms / 1e6);
    free(w);
  }
}

static void layers(const int mode[3]) {
  const size_t mib = (1 << 20) / sizeof(float);
  const size_t n[3] = {16 * mib, 64 * mib, 16 * mib};
  float *w[3] = {filled(n[0]), filled(n[1]), filled(n[2])};
  enum { kRuns = 40, kWarm = 10 };
  double phase[kRuns][4];
  for (int r = 0; r < kRuns; ++r) {
    phase[r][0] = now_ms();
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      float s = 0;
      for (int l = 0; l < 3; ++l) {
        s += sum(w[l] + t * (n[l] / 2), n[l] / 2, mode[l]);
#pragma omp barrier
        if (t == 0)
          phase[r][l + 1] = now_ms();
      }
      sink = s;
    }
  }
  double mean[3] = {0, 0, 0}, total = 0;
  for (int r = kWarm; r < kRuns; ++r) {
    for (int l = 0; l < 3; ++l)
      mean[l] += (phase[r][l + 1] - phase[r][l]) / (kRuns - kWarm);
    total += (phase[r][3] - phase[r][0]) / (kRuns - kWarm);
  }
  printf("modes %d %d %d: layers %.3f %.3f %.3f ms, run %.3f ms\n", mode[0],
         mode[1], mode[2], mean[0], mean[1], mean[2], total);
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "sweep")) {
    sweep();
    return 0;
  }
  if (argc == 5 && !strcmp(argv[1], "layers")) {
    int mode[3] = {atoi(argv[2]), atoi(argv[3]), atoi(argv[4])};
    layers(mode);
    return 0;
  }
  fprintf(stderr, "usage: %s sweep | layers M1 M2 M3 (0 plain, 1 prefetchnta, 2 non-temporal)\n",
          argv[0]);
  return 2;
}

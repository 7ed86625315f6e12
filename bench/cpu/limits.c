/* The machine's limits for the CPU benchmark: FP32 FMA peak and copy bandwidth.
 *
 * Built by bench/cpu/limits.py with the system compiler:
 *   cc -O3 -march=native -pthread limits.c -o limits
 * Prints one JSON object.
 *
 * FMA peak: each thread runs 12 independent chains of a fused multiply-add on
 * the widest native float vector (AVX-512: 16 lanes, else AVX2: 8 lanes), so
 * that both FMA pipes stay busy whatever their latency. 2 FLOP per lane per
 * FMA. The best of several repetitions is the peak (a ceiling, not a typical
 * figure). Run on 1 and 2 threads.
 *
 * `limits THREADS ITERS fma` prints only the THREADS-thread FMA peak (best of
 * 3), {"fma_gflops": X}: run.py measures it beside each timed config, so that
 * a config's share of the peak compares it with the machine's state at the
 * time (this VM's speed drifts by 20% within minutes).
 *
 * Copy bandwidth: 2 threads each memcpy one half of a 256 MiB buffer into
 * another; bytes counted as in STREAM (read + write = 2 x 256 MiB, write-
 * allocate traffic not counted). Median and best over the repetitions.
 *
 * Read bandwidth: 2 threads each sum one half of a 256 MiB buffer with
 * vector loads (4 independent sums): the rate a memory-bound kernel that
 * only streams its operand (a GEMV over the MLP's weights at batch 1) can
 * reach, which the copy figure understates (measured here 61-127 GB/s read
 * beside 42-70 copy, minute to minute).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
#define VBYTES 64
#define ISA "avx512"
#elif defined(__AVX__)
#define VBYTES 32
#define ISA "avx2"
#else
#define VBYTES 16
#define ISA "sse"
#endif
#define LANES (VBYTES / 4)
#define CHAINS 12

typedef float vf __attribute__((vector_size(VBYTES)));

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- FMA peak ---- */

static long fma_iters = 100000000;
static volatile float sink;

static void *fma_thread(void *arg) {
  (void)arg;
  vf acc[CHAINS];
  vf a, b;
  for (int l = 0; l < LANES; ++l) {
    a[l] = 0.999999f;
    b[l] = 1e-7f;
  }
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < LANES; ++l) acc[c][l] = (float)(c + l);
  for (long i = 0; i < fma_iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * a + b;
    __asm__ volatile("" : "+x"(a)); /* keep a in a register, loop not folded */
  }
  float s = 0;
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < LANES; ++l) s += acc[c][l];
  sink = s;
  return NULL;
}

static double fma_gflops(int threads, int reps) {
  pthread_t t[64];
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, fma_thread, NULL);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    double dt = now() - t0;
    double flops = 2.0 * LANES * CHAINS * (double)fma_iters * threads;
    if (flops / dt / 1e9 > best) best = flops / dt / 1e9;
  }
  return best;
}

/* ---- copy bandwidth ---- */

struct copy_arg {
  char *dst;
  const char *src;
  size_t n;
};

static void *copy_thread(void *p) {
  struct copy_arg *a = p;
  memcpy(a->dst, a->src, a->n);
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void copy_gbs(int threads, int reps, double *median, double *best) {
  size_t bytes = (size_t)256 << 20;
  char *src = malloc(bytes), *dst = malloc(bytes);
  if (!src || !dst) {
    fprintf(stderr, "limits: out of memory\n");
    exit(1);
  }
  memset(src, 1, bytes);
  memset(dst, 2, bytes);
  double gbs[64];
  pthread_t t[64];
  struct copy_arg args[64];
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (int i = 0; i < threads; ++i) {
      args[i].n = bytes / threads;
      args[i].dst = dst + i * args[i].n;
      args[i].src = src + i * args[i].n;
      pthread_create(&t[i], NULL, copy_thread, &args[i]);
    }
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    gbs[r] = 2.0 * bytes / (now() - t0) / 1e9;
  }
  qsort(gbs, reps, sizeof gbs[0], cmp);
  *median = gbs[reps / 2];
  *best = gbs[reps - 1];
  sink = dst[12345];
  free(src);
  free(dst);
}

/* ---- read bandwidth ---- */

typedef float vfloat __attribute__((vector_size(VBYTES)));

struct read_arg {
  const vfloat *p;
  size_t n; /* vectors, a multiple of 4 */
  float sum;
};

static void *read_thread(void *p) {
  struct read_arg *a = p;
  vfloat s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  for (size_t i = 0; i < a->n; i += 4) {
    s0 += a->p[i];
    s1 += a->p[i + 1];
    s2 += a->p[i + 2];
    s3 += a->p[i + 3];
  }
  vfloat s = (s0 + s1) + (s2 + s3);
  a->sum = 0;
  for (int l = 0; l < LANES; ++l) a->sum += s[l];
  return NULL;
}

static void read_gbs(int threads, int reps, double *median, double *best) {
  size_t bytes = (size_t)256 << 20;
  vfloat *buf = aligned_alloc(VBYTES, bytes);
  if (!buf) {
    fprintf(stderr, "limits: out of memory\n");
    exit(1);
  }
  memset(buf, 0, bytes);
  double gbs[64];
  pthread_t t[64];
  struct read_arg args[64];
  size_t per = bytes / VBYTES / threads / 4 * 4;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (int i = 0; i < threads; ++i) {
      args[i].p = buf + i * per;
      args[i].n = per;
      pthread_create(&t[i], NULL, read_thread, &args[i]);
    }
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    gbs[r] = (double)per * VBYTES * threads / (now() - t0) / 1e9;
    sink = (char)args[0].sum;
  }
  qsort(gbs, reps, sizeof gbs[0], cmp);
  *median = gbs[reps / 2];
  *best = gbs[reps - 1];
  free(buf);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  if (threads < 1 || threads > 64) threads = 2;
  if (argc > 2) fma_iters = atol(argv[2]);
  if (argc > 3 && strcmp(argv[3], "fma") == 0) {
    printf("{\"fma_gflops\": %.1f}\n", fma_gflops(threads, 3));
    return 0;
  }
  double f1 = fma_gflops(1, 5);
  double fn = fma_gflops(threads, 5);
  double c1m, c1b, cnm, cnb;
  copy_gbs(1, 9, &c1m, &c1b);
  copy_gbs(threads, 9, &cnm, &cnb);
  double rnm, rnb;
  read_gbs(threads, 9, &rnm, &rnb);
  printf("{\"isa\": \"%s\", \"vector_lanes\": %d, \"threads\": %d, "
         "\"fma_gflops_1t\": %.1f, \"fma_gflops\": %.1f, "
         "\"copy_gbs_1t_median\": %.1f, \"copy_gbs_median\": %.1f, \"copy_gbs_best\": %.1f, "
         "\"read_gbs_median\": %.1f, \"read_gbs_best\": %.1f}\n",
         ISA, LANES, threads, f1, fn, c1m, cnm, cnb, rnm, rnb);
  return 0;
}

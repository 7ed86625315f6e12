/* Times one OpenCL kernel in isolation: a kernel variant edited by hand from
 * `aotc compile X.onnx --emit=cl`, beside the generated one, on the same
 * device and buffers (the per-kernel figures of docs/PERFORMANCE.md, stop 22).
 *
 *   cc -O2 -o /tmp/clbench bench/cpu/clbench.c -lOpenCL
 *   /tmp/clbench FILE.cl KERNEL GLOBAL LOCAL REPS NBUF FLOATS...
 *
 * The kernel's arguments must be aotc's: (buffer, ulong offset) pairs, one per
 * buffer, in the order of its signature, with no symbols; FLOATS gives each
 * buffer's size in floats. Buffers are filled with values in [-0.5, 0.5).
 * LOCAL 0 leaves the work-group size to the driver: PoCL then gives 112 or
 * 264 work-items a single group (its split in two needs a multiple of its
 * preferred 8), which runs on one core; give the size aotc's runtime picks
 * (runtime/src/launch_size.h: 4 for 112, 8 for a heavy 264) to time a
 * kernel as a model runs it. Prints the median and
 * minimum over REPS timed launches (after two untimed ones).
 *
 * CLBENCH_ROTATE=N allocates buffer 0 N times over and gives each launch the
 * next copy (through its offset argument): with N copies larger than the
 * caches, each launch reads its weights from memory, as a kernel does inside
 * a model whose other layers evicted them. CLBENCH_HUGE=1 puts every buffer
 * in the host's transparent huge pages (2 MB aligned, MADV_HUGEPAGE, wrapped
 * with CL_MEM_USE_HOST_PTR), as the runtime's arena is, instead of PoCL's
 * own allocation. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double nowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: clbench FILE.cl KERNEL GLOBAL LOCAL REPS NBUF FLOATS...\n");
    return 2;
  }
  int reps = atoi(argv[5]), nbuf = atoi(argv[6]);
  if (reps < 1 || reps > 10000 || nbuf < 0 || argc != 7 + nbuf) {
    fprintf(stderr, "clbench: REPS in 1..10000 and one FLOATS per buffer\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    fprintf(stderr, "clbench: cannot open %s\n", argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *src = malloc(n + 1);
  if (fread(src, 1, n, f) != (size_t)n) {
    fprintf(stderr, "clbench: cannot read %s\n", argv[1]);
    return 2;
  }
  src[n] = 0;
  fclose(f);
  size_t global = strtoull(argv[3], 0, 10), local = strtoull(argv[4], 0, 10);
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, 0) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, 0)) {
    fprintf(stderr, "clbench: no OpenCL device\n");
    return 2;
  }
  cl_context ctx = clCreateContext(0, 1, &d, 0, 0, &e);
  cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &e);
  cl_program pr = clCreateProgramWithSource(ctx, 1, (const char **)&src, 0, &e);
  if (clBuildProgram(pr, 1, &d, "-cl-std=CL1.2", 0, 0)) {
    static char log[1 << 16];
    clGetProgramBuildInfo(pr, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, 0);
    fprintf(stderr, "clbench: build failed:\n%s\n", log);
    return 1;
  }
  cl_kernel k = clCreateKernel(pr, argv[2], &e);
  if (e) {
    fprintf(stderr, "clbench: no kernel %s (%d)\n", argv[2], e);
    return 1;
  }
  const char *rot = getenv("CLBENCH_ROTATE");
  int copies = rot ? atoi(rot) : 1;
  if (copies < 1)
    copies = 1;
  const char *hugeEnv = getenv("CLBENCH_HUGE");
  int huge = hugeEnv && atoi(hugeEnv);
  size_t firstBytes = 0;
  for (int i = 0; i < nbuf; i++) {
    size_t s = strtoull(argv[7 + i], 0, 10);
    if (i == 0) {
      firstBytes = s * sizeof(float);
      s *= copies;
    }
    size_t bytes = s * sizeof(float), hugeBytes = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
    float *h = huge ? aligned_alloc(2u << 20, hugeBytes) : malloc(bytes);
    if (huge)
      madvise(h, hugeBytes, MADV_HUGEPAGE);
    for (size_t j = 0; j < s; j++)
      h[j] = rand() / (float)RAND_MAX - 0.5f;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (huge ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR),
                              bytes, h, &e);
    cl_ulong zero = 0;
    if (!huge)
      free(h); /* a huge-page buffer stays in use until the process ends */
    if (e || clSetKernelArg(k, 2 * i, sizeof m, &m) ||
        clSetKernelArg(k, 2 * i + 1, sizeof zero, &zero)) {
      fprintf(stderr, "clbench: buffer %d: error %d\n", i, e);
      return 1;
    }
  }
  double *t = malloc(reps * sizeof(double));
  for (int r = 0; r < reps + 2; r++) {
    cl_ulong off = (cl_ulong)(r % copies) * firstBytes;
    if (nbuf > 0 && clSetKernelArg(k, 1, sizeof off, &off)) {
      fprintf(stderr, "clbench: cannot set the offset of buffer 0\n");
      return 1;
    }
    double a = nowMs();
    e = clEnqueueNDRangeKernel(q, k, 1, 0, &global, local ? &local : 0, 0, 0, 0);
    clFinish(q);
    if (e) {
      fprintf(stderr, "clbench: launch failed (%d)\n", e);
      return 1;
    }
    if (r >= 2)
      t[r - 2] = nowMs() - a;
  }
  qsort(t, reps, sizeof(double), cmp);
  printf("%s: median %.3f ms, min %.3f ms over %d launches\n", argv[2], t[reps / 2], t[0], reps);
  return 0;
}

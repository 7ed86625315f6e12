/*
 * \file
 * Loads an aotc model .so with dlopen, prints its inputs and outputs, runs it
 * on random inputs and prints the first output values and the run time.
 *
 *   aotc_example_run_model_c MODEL.so [--device D] [--dim NAME=VALUE]...
 *                            [--instances N] [--repeat N] [--cache-dir DIR]
 *
 * Symbolic dims are set with --dim (default 1). Links only libdl: every ABI
 * function is resolved with dlsym through the *_fn types of aotc_runtime.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "aotc/aotc_runtime.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DIMS 16

typedef struct Api {
  aotc_abi_version_fn abi_version;
  aotc_last_error_fn last_error;
  aotc_status_name_fn status_name;
  aotc_dtype_name_fn dtype_name;
  aotc_dtype_size_fn dtype_size;
  aotc_container_options_init_fn options_init;
  aotc_container_create_fn create;
  aotc_container_delete_fn destroy;
  aotc_container_run_fn run;
  aotc_container_output_shapes_fn output_shapes;
  aotc_container_model_name_fn model_name;
  aotc_container_device_name_fn device_name;
  aotc_container_num_inputs_fn num_inputs;
  aotc_container_num_outputs_fn num_outputs;
  aotc_container_num_symbols_fn num_symbols;
  aotc_container_input_info_fn input_info;
  aotc_container_output_info_fn output_info;
  aotc_container_symbol_info_fn symbol_info;
  aotc_container_program_source_fn program_source;
} Api;

static void *resolve(void *lib, const char *name) {
  void *fn = dlsym(lib, name);
  if (!fn) {
    fprintf(stderr, "error: the model has no symbol %s\n", name);
    exit(1);
  }
  return fn;
}

/* Function pointers and void* are interchangeable on POSIX (dlsym's
 * contract); memcpy avoids the ISO C warning about the conversion. */
#define RESOLVE(field, name)                                                   \
  do {                                                                         \
    void *p_ = resolve(lib, name);                                             \
    memcpy(&api->field, &p_, sizeof(p_));                                      \
  } while (0)

static void loadApi(void *lib, Api *api) {
  RESOLVE(abi_version, "aotc_abi_version");
  RESOLVE(last_error, "aotc_last_error");
  RESOLVE(status_name, "aotc_status_name");
  RESOLVE(dtype_name, "aotc_dtype_name");
  RESOLVE(dtype_size, "aotc_dtype_size");
  RESOLVE(options_init, "aotc_container_options_init");
  RESOLVE(create, "aotc_container_create");
  RESOLVE(destroy, "aotc_container_delete");
  RESOLVE(run, "aotc_container_run");
  RESOLVE(output_shapes, "aotc_container_output_shapes");
  RESOLVE(model_name, "aotc_container_model_name");
  RESOLVE(device_name, "aotc_container_device_name");
  RESOLVE(num_inputs, "aotc_container_num_inputs");
  RESOLVE(num_outputs, "aotc_container_num_outputs");
  RESOLVE(num_symbols, "aotc_container_num_symbols");
  RESOLVE(input_info, "aotc_container_input_info");
  RESOLVE(output_info, "aotc_container_output_info");
  RESOLVE(symbol_info, "aotc_container_symbol_info");
  RESOLVE(program_source, "aotc_container_program_source");
}

static const Api *gApi;

static void check(aotc_status_t status, const char *what) {
  if (status == AOTC_OK)
    return;
  fflush(stdout);
  fprintf(stderr, "error: %s: %s: %s\n", what, gApi->status_name(status),
          gApi->last_error());
  exit(1);
}

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void printInfo(const char *kind, const aotc_tensor_info_t *info) {
  int32_t d;
  printf("  %s %-12s %-8s [", kind, info->name, gApi->dtype_name(info->dtype));
  for (d = 0; d < info->rank; ++d)
    printf("%s%s", d ? ", " : "", info->dim_texts[d]);
  printf("]\n");
}

/* A xorshift generator, so that runs are reproducible. */
static uint32_t gRandom = 2463534242u;
static uint32_t nextRandom(void) {
  gRandom ^= gRandom << 13;
  gRandom ^= gRandom >> 17;
  gRandom ^= gRandom << 5;
  return gRandom;
}

static void fillRandom(aotc_tensor_t *t, uint64_t numel) {
  uint64_t i;
  for (i = 0; i < numel; ++i) {
    double u = (double)(nextRandom() % 2001) / 1000.0 - 1.0; /* [-1, 1] */
    switch (t->dtype) {
    case AOTC_DTYPE_FLOAT32:
      ((float *)t->data)[i] = (float)u;
      break;
    case AOTC_DTYPE_FLOAT64:
      ((double *)t->data)[i] = u;
      break;
    case AOTC_DTYPE_INT32:
      ((int32_t *)t->data)[i] = (int32_t)(nextRandom() % 10);
      break;
    case AOTC_DTYPE_INT64:
      ((int64_t *)t->data)[i] = (int64_t)(nextRandom() % 10);
      break;
    case AOTC_DTYPE_BOOL:
      ((uint8_t *)t->data)[i] = (uint8_t)(nextRandom() & 1);
      break;
    case AOTC_DTYPE_INT16:
    case AOTC_DTYPE_UINT16:
      ((uint16_t *)t->data)[i] = (uint16_t)(nextRandom() % 10);
      break;
    case AOTC_DTYPE_UINT32:
      ((uint32_t *)t->data)[i] = (uint32_t)(nextRandom() % 10);
      break;
    case AOTC_DTYPE_FLOAT16: { /* IEEE binary16 bits: -1, -0.5, 0, 0.5, 1 */
      static const uint16_t kHalves[5] = {0xbc00, 0xb800, 0, 0x3800, 0x3c00};
      ((uint16_t *)t->data)[i] = kHalves[nextRandom() % 5];
      break;
    }
    case AOTC_DTYPE_BFLOAT16: { /* a float's top half: -1, -0.5, 0, 0.5, 1 */
      static const uint16_t kBf16[5] = {0xbf80, 0xbf00, 0, 0x3f00, 0x3f80};
      ((uint16_t *)t->data)[i] = kBf16[nextRandom() % 5];
      break;
    }
    default: /* uint8, int8 */
      ((uint8_t *)t->data)[i] = (uint8_t)(nextRandom() % 10);
      break;
    }
  }
}

static void printValues(const aotc_tensor_t *t, uint64_t numel) {
  uint64_t i, n = numel < 8 ? numel : 8;
  for (i = 0; i < n; ++i) {
    switch (t->dtype) {
    case AOTC_DTYPE_FLOAT32:
      printf(" %g", ((const float *)t->data)[i]);
      break;
    case AOTC_DTYPE_FLOAT64:
      printf(" %g", ((const double *)t->data)[i]);
      break;
    case AOTC_DTYPE_INT32:
      printf(" %d", ((const int32_t *)t->data)[i]);
      break;
    case AOTC_DTYPE_INT64:
      printf(" %lld", (long long)((const int64_t *)t->data)[i]);
      break;
    case AOTC_DTYPE_INT8:
      printf(" %d", ((const int8_t *)t->data)[i]);
      break;
    case AOTC_DTYPE_INT16:
      printf(" %d", ((const int16_t *)t->data)[i]);
      break;
    case AOTC_DTYPE_UINT16:
      printf(" %u", ((const uint16_t *)t->data)[i]);
      break;
    case AOTC_DTYPE_UINT32:
      printf(" %u", ((const uint32_t *)t->data)[i]);
      break;
    case AOTC_DTYPE_FLOAT16: /* the bits; aotc/half.hpp converts in C++ */
    case AOTC_DTYPE_BFLOAT16:
      printf(" 0x%04x", ((const uint16_t *)t->data)[i]);
      break;
    default:
      printf(" %u", ((const uint8_t *)t->data)[i]);
      break;
    }
  }
  if (numel > n)
    printf(" ...");
}

static uint64_t numelOf(const aotc_tensor_t *t) {
  uint64_t n = 1;
  int32_t d;
  for (d = 0; d < t->rank; ++d)
    n *= (uint64_t)t->shape[d];
  return n;
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s MODEL.so [--device D] [--dim NAME=VALUE]... "
          "[--instances N] [--repeat N] [--cache-dir DIR]\n",
          argv0);
  exit(2);
}

int main(int argc, char **argv) {
  const char *path = NULL;
  const char *device = NULL;
  const char *cacheDir = NULL;
  const char *dimNames[MAX_DIMS];
  long long dimValues[MAX_DIMS];
  int numDims = 0, repeat = 10, instances = 1, i;
  Api api;
  void *lib;
  aotc_container_options_t options;
  aotc_container_t *container = NULL;
  size_t numInputs = 0, numOutputs = 0, numSymbols = 0, k;
  aotc_tensor_t *inputs, *outputs;
  const char *name = NULL, *deviceName = NULL;
  int32_t fromCache = 0;
  double start, first, total;

  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc) {
      cacheDir = argv[++i];
    } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--instances") == 0 && i + 1 < argc) {
      instances = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc) {
      char *eq = strchr(argv[++i], '=');
      if (!eq || numDims == MAX_DIMS)
        usage(argv[0]);
      *eq = '\0';
      dimNames[numDims] = argv[i];
      dimValues[numDims++] = atoll(eq + 1);
    } else if (argv[i][0] != '-' && !path) {
      path = argv[i];
    } else {
      usage(argv[0]);
    }
  }
  if (!path)
    usage(argv[0]);

  lib = dlopen(path, RTLD_LOCAL | RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 1;
  }
  loadApi(lib, &api);
  gApi = &api;
  if (api.abi_version() != AOTC_ABI_VERSION) {
    fprintf(stderr, "error: %s has ABI version %u, expected %d\n", path,
            api.abi_version(), AOTC_ABI_VERSION);
    return 1;
  }

  api.options_init(&options);
  options.device = device;
  options.cache_dir = cacheDir;
  options.num_instances = (uint32_t)instances;
  start = nowMs();
  check(api.create(&options, &container), "aotc_container_create");
  check(api.program_source(container, &fromCache), "program_source");
  check(api.model_name(container, &name), "model_name");
  check(api.device_name(container, &deviceName), "device_name");
  printf("model %s on %s (loaded in %.1f ms, program %s)\n", name, deviceName,
         nowMs() - start,
         fromCache == AOTC_PROGRAM_EMBEDDED ? "embedded in the .so"
         : fromCache == AOTC_PROGRAM_FROM_CACHE ? "from cache"
                                                : "built from source");

  check(api.num_inputs(container, &numInputs), "num_inputs");
  check(api.num_outputs(container, &numOutputs), "num_outputs");
  check(api.num_symbols(container, &numSymbols), "num_symbols");
  for (k = 0; k < numSymbols; ++k) {
    aotc_symbol_info_t s;
    check(api.symbol_info(container, k, &s), "symbol_info");
    printf("  symbol %s in [%lld, %lld]\n", s.name, (long long)s.min,
           (long long)s.max);
  }

  inputs = calloc(numInputs ? numInputs : 1, sizeof(aotc_tensor_t));
  outputs = calloc(numOutputs ? numOutputs : 1, sizeof(aotc_tensor_t));
  if (!inputs || !outputs)
    return 1;
  for (k = 0; k < numInputs; ++k) {
    aotc_tensor_info_t info;
    int32_t d;
    uint64_t numel;
    check(api.input_info(container, k, &info), "input_info");
    printInfo("input ", &info);
    inputs[k].dtype = info.dtype;
    inputs[k].rank = info.rank;
    for (d = 0; d < info.rank; ++d) {
      int64_t size = info.dims[d];
      if (size < 0) {
        int j;
        size = 1;
        for (j = 0; j < numDims; ++j)
          if (strcmp(dimNames[j], info.dim_texts[d]) == 0)
            size = dimValues[j];
      }
      inputs[k].shape[d] = size;
    }
    numel = numelOf(&inputs[k]);
    inputs[k].nbytes = numel * api.dtype_size(info.dtype);
    inputs[k].data = malloc(inputs[k].nbytes ? inputs[k].nbytes : 1);
    if (!inputs[k].data)
      return 1;
    fillRandom(&inputs[k], numel);
  }
  for (k = 0; k < numOutputs; ++k) {
    aotc_tensor_info_t info;
    check(api.output_info(container, k, &info), "output_info");
    printInfo("output", &info);
  }

  /* Output sizes for these inputs, then one buffer per output. */
  check(api.output_shapes(container, inputs, numInputs, outputs, numOutputs),
        "aotc_container_output_shapes");
  for (k = 0; k < numOutputs; ++k) {
    outputs[k].nbytes = numelOf(&outputs[k]) * api.dtype_size(outputs[k].dtype);
    outputs[k].data = malloc(outputs[k].nbytes ? outputs[k].nbytes : 1);
    if (!outputs[k].data)
      return 1;
  }

  start = nowMs();
  check(api.run(container, inputs, numInputs, outputs, numOutputs),
        "aotc_container_run");
  first = nowMs() - start;
  start = nowMs();
  for (i = 0; i < repeat; ++i)
    check(api.run(container, inputs, numInputs, outputs, numOutputs),
          "aotc_container_run");
  total = nowMs() - start;

  for (k = 0; k < numOutputs; ++k) {
    int32_t d;
    printf("output %zu [", k);
    for (d = 0; d < outputs[k].rank; ++d)
      printf("%s%lld", d ? "," : "", (long long)outputs[k].shape[d]);
    printf("]:");
    printValues(&outputs[k], numelOf(&outputs[k]));
    printf("\n");
  }
  printf("first run %.3f ms", first);
  if (repeat > 0)
    printf(", then %.3f ms per run (%d runs)", total / repeat, repeat);
  printf("\n");

  for (k = 0; k < numInputs; ++k)
    free(inputs[k].data);
  for (k = 0; k < numOutputs; ++k)
    free(outputs[k].data);
  free(inputs);
  free(outputs);
  api.destroy(container);
  dlclose(lib);
  return 0;
}

// A fake runtime for wrapper tests. wrapper_test.cpp compiles it with the
// host compiler together with an emitted wrapper into one executable; it
// defines the data object's symbols and an aotc_rt_launch that records every
// call, then prints the descriptor, arena_bytes(), output_shapes() and the
// launch sequence of run() in a line format the test compares exactly.
//
//   fake_runtime SYMBOL_VALUE... [--fail-at=N]
//
// --fail-at=N makes launch number N (0-based) return 42.
#include <aotc/model_desc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// `extern` because a namespace-scope const would have internal linkage.
extern "C" __attribute__((visibility("hidden"))) alignas(64) const uint8_t
    aotc_constants_blob[128] = {1, 2, 3};
extern "C" __attribute__((visibility("hidden")))
const char aotc_kernels_source[] = "// fake kernels";

struct AotcRunCtx {
  int magic;
};

namespace {

int gFailAt = -1;
int gLaunches = 0;

const char *where(const void *p, const void *fake) {
  return !p ? "null" : p == fake ? "fake" : "other";
}

std::string dims(const AotcTensorDesc &t) {
  std::string s = "[";
  for (int32_t d = 0; d < t.rank; ++d)
    s += (d ? "," : "") + std::to_string(t.dims[d].value) + "/" +
         std::to_string(t.dims[d].symbol) + "/" + t.dims[d].text;
  return s + "]";
}

} // namespace

extern "C" int32_t aotc_rt_launch(AotcRunCtx *ctx, int32_t kernel,
                                  const AotcArg *args, int32_t nargs,
                                  int32_t ndims, const uint64_t *global,
                                  const uint64_t *local) {
  std::printf("launch %d ctx=%d dims=%d global=", kernel, ctx->magic, ndims);
  for (int32_t d = 0; d < ndims; ++d)
    std::printf("%s%llu", d ? "," : "", (unsigned long long)global[d]);
  std::printf(" local=%s args=", local ? "set" : "null");
  for (int32_t a = 0; a < nargs; ++a)
    std::printf("%s%d:%d:%lld", a ? "," : "", args[a].kind, args[a].index,
                (long long)args[a].value);
  std::printf("\n");
  return gLaunches++ == gFailAt ? 42 : 0;
}

extern "C" int32_t aotc_rt_persistent(AotcRunCtx *) { return 1; }

extern "C" int32_t aotc_rt_launch_persistent(AotcRunCtx *ctx, int32_t kernel,
                                             const AotcArg *args, int32_t nargs,
                                             int32_t nparts,
                                             const uint64_t *tiles) {
  std::printf("launch persistent %d ctx=%d tiles=", kernel, ctx->magic);
  for (int32_t p = 0; p < nparts; ++p)
    std::printf("%s%llu", p ? "," : "", (unsigned long long)tiles[p]);
  std::printf(" args=");
  for (int32_t a = 0; a < nargs; ++a)
    std::printf("%s%d:%d:%lld", a ? "," : "", args[a].kind, args[a].index,
                (long long)args[a].value);
  std::printf("\n");
  return gLaunches++ == gFailAt ? 42 : 0;
}

int main(int argc, char **argv) {
  std::vector<int64_t> symbols;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--fail-at=", 10) == 0)
      gFailAt = std::atoi(argv[i] + 10);
    else
      symbols.push_back(std::atoll(argv[i]));
  }
  const AotcModelDesc *d = aotc_model_desc();
  std::printf("desc_version %u\n", d->desc_version);
  std::printf("model_name %s\n", d->model_name);
  std::printf("cl_source %s %llu\n", where(d->cl_source, aotc_kernels_source),
              (unsigned long long)d->cl_source_size);
  std::printf("cl_build_options %s\n", d->cl_build_options);
  for (int32_t i = 0; i < d->num_kernels; ++i)
    std::printf("kernel %d %s function %s\n", i, d->kernel_names[i],
                d->kernel_functions ? d->kernel_functions[i] : "(null)");
  for (int32_t i = 0; i < d->num_symbols; ++i)
    std::printf("symbol %d %s %lld %lld\n", i, d->symbols[i].name,
                (long long)d->symbols[i].min, (long long)d->symbols[i].max);
  for (int32_t i = 0; i < d->num_inputs; ++i)
    std::printf("input %d %s dtype=%d rank=%d dims=%s\n", i, d->inputs[i].name,
                d->inputs[i].dtype, d->inputs[i].rank,
                dims(d->inputs[i]).c_str());
  for (int32_t i = 0; i < d->num_input_slots; ++i)
    std::printf("input_slot %d %s kind=%d index=%d nbytes=%llu\n", i,
                d->input_slots[i].name, d->input_slots[i].kind,
                d->input_slots[i].index,
                (unsigned long long)d->input_slots[i].nbytes);
  for (int32_t i = 0; i < d->num_outputs; ++i)
    std::printf("output %d %s dtype=%d rank=%d dims=%s\n", i,
                d->outputs[i].name, d->outputs[i].dtype, d->outputs[i].rank,
                dims(d->outputs[i]).c_str());
  for (int32_t i = 0; i < d->num_constants; ++i) {
    const AotcConstantDesc &c = d->constants[i];
    std::string shape = "[";
    for (int32_t k = 0; k < c.rank; ++k)
      shape += (k ? "," : "") + std::to_string(c.shape[k]);
    std::printf("constant %d %s onnx=%s dtype=%d shape=%s offset=%llu "
                "nbytes=%llu folded=%d\n",
                i, c.name, c.onnx_name, c.dtype, (shape + "]").c_str(),
                (unsigned long long)c.offset, (unsigned long long)c.nbytes,
                c.folded);
  }
  std::printf("constants_blob %s %llu\n",
              where(d->constants_blob, aotc_constants_blob),
              (unsigned long long)d->constants_blob_size);
  for (int32_t i = 0; i < d->num_metadata; ++i)
    std::printf("metadata %s=%s\n", d->metadata[2 * i], d->metadata[2 * i + 1]);
  if (symbols.size() != static_cast<size_t>(d->num_symbols)) {
    std::printf("error: %zu symbol values for %d symbols\n", symbols.size(),
                d->num_symbols);
    return 1;
  }
  int32_t failed = d->check_symbols(symbols.data());
  std::printf("check_symbols %d of %d\n", failed, d->num_checks);
  if (failed >= 0) {
    std::printf("check failed: %s\n", d->check_messages[failed]);
    return 0; // nothing may be evaluated with these values
  }
  std::printf("arena_bytes %lld\n", (long long)d->arena_bytes(symbols.data()));
  size_t numDims = 0;
  for (int32_t i = 0; i < d->num_outputs; ++i)
    numDims += d->outputs[i].rank;
  std::vector<int64_t> shapes(numDims + 1, -7);
  d->output_shapes(symbols.data(), shapes.data());
  std::printf("output_shapes");
  for (int64_t v : shapes)
    std::printf(" %lld", (long long)v);
  std::printf("\n");
  AotcRunCtx ctx{1234};
  std::printf("run %d\n", d->run(&ctx, symbols.data()));
  return 0;
}

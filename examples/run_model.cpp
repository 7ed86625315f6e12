/// \file
/// Loads an aotc model .so through aotc/runner.hpp, prints its interface, runs
/// it on random inputs and prints the first output values and the run time.
///
///   aotc_example_run_model_cpp MODEL.so [--device D] [--dim NAME=VALUE]...
///                              [--repeat N] [--cache-dir DIR]
#include "aotc/runner.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

namespace {

std::string dimsText(const aotc::TensorInfo &info) {
  std::string text = "[";
  for (size_t d = 0; d < info.dimTexts.size(); ++d)
    text += (d ? ", " : "") + info.dimTexts[d];
  return text + "]";
}

template <typename T>
void fill(aotc::HostTensor &t, std::mt19937 &rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  T *p = reinterpret_cast<T *>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = static_cast<T>(dist(rng));
}

void fillRandom(aotc::HostTensor &t, std::mt19937 &rng) {
  switch (t.dtype()) {
  case AOTC_DTYPE_FLOAT32:
    return fill<float>(t, rng, -1, 1);
  case AOTC_DTYPE_FLOAT64:
    return fill<double>(t, rng, -1, 1);
  case AOTC_DTYPE_INT32:
    return fill<int32_t>(t, rng, 0, 10);
  case AOTC_DTYPE_INT64:
    return fill<int64_t>(t, rng, 0, 10);
  case AOTC_DTYPE_BOOL:
    return fill<uint8_t>(t, rng, 0, 2);
  case AOTC_DTYPE_UINT8:
  case AOTC_DTYPE_INT8:
    return fill<uint8_t>(t, rng, 0, 10);
  case AOTC_DTYPE_UINT16:
  case AOTC_DTYPE_INT16:
    return fill<uint16_t>(t, rng, 0, 10);
  case AOTC_DTYPE_UINT32:
    return fill<uint32_t>(t, rng, 0, 10);
  case AOTC_DTYPE_FLOAT16:
  case AOTC_DTYPE_BFLOAT16: { // the bits of each value (aotc/half.hpp)
    std::uniform_real_distribution<float> dist(-1, 1);
    uint16_t *p = static_cast<uint16_t *>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i)
      p[i] = t.dtype() == AOTC_DTYPE_FLOAT16 ? aotc::floatToHalf(dist(rng))
                                             : aotc::floatToBfloat16(dist(rng));
    return;
  }
  }
}

void printValues(const aotc::HostTensor &t) {
  int64_t n = std::min<int64_t>(t.numel(), 8);
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
    case AOTC_DTYPE_FLOAT32:
      std::cout << ' ' << t.data<float>()[i];
      break;
    case AOTC_DTYPE_FLOAT64:
      std::cout << ' ' << t.data<double>()[i];
      break;
    case AOTC_DTYPE_INT32:
      std::cout << ' ' << t.data<int32_t>()[i];
      break;
    case AOTC_DTYPE_INT64:
      std::cout << ' ' << t.data<int64_t>()[i];
      break;
    case AOTC_DTYPE_INT8:
      std::cout << ' ' << int(t.data<int8_t>()[i]);
      break;
    case AOTC_DTYPE_INT16:
      std::cout << ' ' << t.data<int16_t>()[i];
      break;
    case AOTC_DTYPE_UINT16:
      std::cout << ' ' << t.data<uint16_t>()[i];
      break;
    case AOTC_DTYPE_UINT32:
      std::cout << ' ' << t.data<uint32_t>()[i];
      break;
    case AOTC_DTYPE_UINT8:
    case AOTC_DTYPE_BOOL:
      std::cout << ' ' << unsigned(t.data<uint8_t>()[i]);
      break;
    case AOTC_DTYPE_FLOAT16:
      std::cout << ' '
                << aotc::halfToFloat(static_cast<const uint16_t *>(t.raw())[i]);
      break;
    case AOTC_DTYPE_BFLOAT16:
      std::cout << ' '
                << aotc::bfloat16ToFloat(
                       static_cast<const uint16_t *>(t.raw())[i]);
      break;
    }
  }
  if (t.numel() > n)
    std::cout << " ...";
}

[[noreturn]] void usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s MODEL.so [--device D] [--dim NAME=VALUE]... "
               "[--repeat N] [--cache-dir DIR]\n",
               argv0);
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  std::string path;
  aotc::ModelOptions options;
  std::map<std::string, int64_t> dims;
  int repeat = 10;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      options.device = argv[++i];
    } else if (arg == "--cache-dir" && i + 1 < argc) {
      options.cacheDir = argv[++i];
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (arg == "--dim" && i + 1 < argc) {
      std::string spec = argv[++i];
      size_t eq = spec.find('=');
      if (eq == std::string::npos)
        usage(argv[0]);
      dims[spec.substr(0, eq)] = std::atoll(spec.c_str() + eq + 1);
    } else if (arg[0] != '-' && path.empty()) {
      path = arg;
    } else {
      usage(argv[0]);
    }
  }
  if (path.empty())
    usage(argv[0]);

  try {
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    auto start = Clock::now();
    aotc::Model model = aotc::Model::load(path, options);
    std::cout << "model " << model.name() << " on " << model.deviceName()
              << " (loaded in " << ms(Clock::now() - start) << " ms, program "
              << (model.programSource() == AOTC_PROGRAM_EMBEDDED
                      ? "embedded in the .so"
                  : model.programFromCache() ? "from cache"
                                             : "built from source")
              << ")\n";
    for (const aotc::SymbolInfo &s : model.symbols())
      std::cout << "  symbol " << s.name << " in [" << s.min << ", " << s.max
                << "]\n";

    std::mt19937 rng(42);
    std::vector<aotc::HostTensor> inputs;
    for (const aotc::TensorInfo &info : model.inputs()) {
      std::cout << "  input  " << info.name << ' '
                << aotc::dtypeName(info.dtype) << ' ' << dimsText(info) << '\n';
      std::vector<int64_t> shape;
      for (size_t d = 0; d < info.dims.size(); ++d) {
        int64_t size = info.dims[d];
        if (size < 0) {
          auto it = dims.find(info.dimTexts[d]);
          size = it == dims.end() ? 1 : it->second;
        }
        shape.push_back(size);
      }
      inputs.emplace_back(info.dtype, shape);
      fillRandom(inputs.back(), rng);
    }
    for (const aotc::TensorInfo &info : model.outputs())
      std::cout << "  output " << info.name << ' '
                << aotc::dtypeName(info.dtype) << ' ' << dimsText(info) << '\n';

    std::vector<aotc::HostTensor> outputs;
    start = Clock::now();
    model.run(inputs, outputs);
    double first = ms(Clock::now() - start);
    start = Clock::now();
    for (int i = 0; i < repeat; ++i)
      model.run(inputs, outputs);
    double total = ms(Clock::now() - start);

    for (size_t k = 0; k < outputs.size(); ++k) {
      std::cout << "output " << k << " [";
      for (size_t d = 0; d < outputs[k].shape().size(); ++d)
        std::cout << (d ? "," : "") << outputs[k].shape()[d];
      std::cout << "]:";
      printValues(outputs[k]);
      std::cout << '\n';
    }
    std::cout << "first run " << first << " ms";
    if (repeat > 0)
      std::cout << ", then " << total / repeat << " ms per run (" << repeat
                << " runs)";
    std::cout << '\n';
  } catch (const aotc::Error &e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

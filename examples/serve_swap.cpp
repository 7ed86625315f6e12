/// \file
/// Serves a model from several threads and swaps its weights while it
/// serves: the way a host updates a model live.
///
///   aotc_example_serve_swap MODEL.so [--device D] [--threads N]
///       [--seconds S] [--swap-every MS] [--dim NAME=VALUE]...
///       [--cache-dir DIR]
///
/// Weight set A is the model's own; set B is A scaled by 0.5 (read back with
/// extractConstants, so any model with updatable weights works). Three
/// phases of S seconds each: before (A), during (a swapper thread writes
/// the other set into the inactive buffer, folds and swaps every MS
/// milliseconds) and after. For each phase it prints throughput and the
/// p50/p99 run latency; every output is compared with the outputs of A and
/// of B on the same input, and a run that matches neither (a mix of two
/// weight sets) is counted. Exits 1 if any was seen.
#include "aotc/runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void fillRandom(aotc::HostTensor &t, std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  auto *bytes = static_cast<uint8_t *>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(rng);
    switch (t.dtype()) {
    case AOTC_DTYPE_FLOAT32:
      reinterpret_cast<float *>(bytes)[i] = static_cast<float>(v);
      break;
    case AOTC_DTYPE_FLOAT64:
      reinterpret_cast<double *>(bytes)[i] = v;
      break;
    case AOTC_DTYPE_FLOAT16:
      reinterpret_cast<uint16_t *>(bytes)[i] =
          aotc::floatToHalf(static_cast<float>(v));
      break;
    case AOTC_DTYPE_BFLOAT16:
      reinterpret_cast<uint16_t *>(bytes)[i] =
          aotc::floatToBfloat16(static_cast<float>(v));
      break;
    case AOTC_DTYPE_INT64:
      reinterpret_cast<int64_t *>(bytes)[i] = static_cast<int64_t>(v * 4 + 4);
      break;
    case AOTC_DTYPE_INT32:
      reinterpret_cast<int32_t *>(bytes)[i] = static_cast<int32_t>(v * 4 + 4);
      break;
    default: // small integers and bool: 0 or 1 in the lowest byte
      std::memset(bytes + i * aotc::dtypeSize(t.dtype()), 0,
                  aotc::dtypeSize(t.dtype()));
      bytes[i * aotc::dtypeSize(t.dtype())] = v > 0;
    }
  }
}

/// The set B: every float constant of \p a halved.
aotc::Model::ConstantMap halved(const aotc::Model::ConstantMap &a) {
  aotc::Model::ConstantMap b = a;
  for (auto &[name, t] : b) {
    if (t.dtype() == AOTC_DTYPE_FLOAT32)
      for (int64_t i = 0; i < t.numel(); ++i)
        t.data<float>()[i] *= 0.5f;
    else if (t.dtype() == AOTC_DTYPE_FLOAT64)
      for (int64_t i = 0; i < t.numel(); ++i)
        t.data<double>()[i] *= 0.5;
  }
  return b;
}

bool sameBytes(const std::vector<aotc::HostTensor> &x,
               const std::vector<aotc::HostTensor> &y) {
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].shape() != y[i].shape() || x[i].nbytes() != y[i].nbytes() ||
        std::memcmp(x[i].raw(), y[i].raw(), x[i].nbytes()) != 0)
      return false;
  return true;
}

/// Resident memory of this process in MB (Linux), or -1.
double residentMB() {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  double mb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0)
      mb = std::atof(line + 6) / 1024.0;
  std::fclose(f);
  return mb;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s MODEL.so [--device D] [--threads N] [--seconds S] "
                 "[--swap-every MS] [--dim NAME=VALUE]... [--cache-dir DIR]\n",
                 argv[0]);
    return 2;
  }
  aotc::ModelOptions options;
  int threads = 4;
  double seconds = 2.0, swapEveryMs = 50;
  std::map<std::string, int64_t> dims;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    bool hasValue = i + 1 < argc;
    if (a == "--device" && hasValue)
      options.device = argv[++i];
    else if (a == "--threads" && hasValue)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--seconds" && hasValue)
      seconds = std::atof(argv[++i]);
    else if (a == "--swap-every" && hasValue)
      swapEveryMs = std::atof(argv[++i]);
    else if (a == "--cache-dir" && hasValue)
      options.cacheDir = argv[++i];
    else if (a == "--dim" && hasValue) {
      std::string spec = argv[++i];
      size_t eq = spec.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "bad --dim '%s'\n", spec.c_str());
        return 2;
      }
      dims[spec.substr(0, eq)] = std::atoll(spec.c_str() + eq + 1);
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  options.numInstances = static_cast<uint32_t>(threads);
  try {
    double rssStart = residentMB();
    aotc::Model model = aotc::Model::load(argv[1], options);
    double rssLoaded = residentMB();
    std::printf("model %s on %s, %d threads\n", model.name().c_str(),
                model.deviceName().c_str(), threads);
    std::vector<aotc::SymbolInfo> symbols = model.symbols();
    std::vector<aotc::HostTensor> inputs;
    std::mt19937 rng(1);
    for (const aotc::TensorInfo &info : model.inputs()) {
      std::vector<int64_t> shape;
      for (size_t d = 0; d < info.dims.size(); ++d) {
        int32_t s = info.dimSymbols[d];
        auto it = s >= 0 ? dims.find(symbols[s].name) : dims.end();
        shape.push_back(s < 0                ? info.dims[d]
                        : it != dims.end() ? it->second
                                           : std::max<int64_t>(1, symbols[s].min));
      }
      aotc::HostTensor t(info.dtype, shape);
      fillRandom(t, rng);
      inputs.push_back(std::move(t));
    }

    std::vector<aotc::HostTensor> refA = model.run(inputs);
    std::printf("resident memory: %.1f MB at start, %.1f MB after load, "
                "%.1f MB after a run\n",
                rssStart, rssLoaded, residentMB());
    aotc::Model::ConstantMap setA = model.extractConstants();
    if (setA.empty()) {
      std::fprintf(stderr, "the model has no updatable constants\n");
      return 1;
    }
    aotc::Model::ConstantMap setB = halved(setA);
    uint64_t weightBytes = 0;
    for (const auto &kv : setA)
      weightBytes += kv.second.nbytes();
    model.updateConstants(setB);
    std::vector<aotc::HostTensor> refB = model.run(inputs);
    model.updateConstants(setA);
    std::printf("%zu updatable constants, %.1f MB; outputs of A and B %s\n",
                setA.size(), static_cast<double>(weightBytes) / 1e6,
                sameBytes(refA, refB) ? "are equal (mixes cannot be seen)"
                                      : "differ");

    std::atomic<int64_t> mixed{0}, swaps{0};
    std::mutex latencyMutex;
    const char *phaseNames[3] = {"before", "during", "after"};
    int failures = 0;
    for (int phase = 0; phase < 3; ++phase) {
      std::atomic<bool> stop{false};
      std::vector<double> latencies;
      std::vector<std::thread> workers;
      int64_t swapsBefore = swaps.load();
      for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
          std::vector<aotc::HostTensor> out;
          std::vector<double> mine;
          while (!stop.load()) {
            auto start = Clock::now();
            model.run(inputs, out);
            mine.push_back(std::chrono::duration<double, std::milli>(
                               Clock::now() - start)
                               .count());
            if (!sameBytes(out, refA) && !sameBytes(out, refB))
              ++mixed;
          }
          std::lock_guard<std::mutex> lock(latencyMutex);
          latencies.insert(latencies.end(), mine.begin(), mine.end());
        });
      std::thread swapper;
      if (phase == 1)
        swapper = std::thread([&] {
          bool toB = true;
          while (!stop.load()) {
            model.updateConstants(toB ? setB : setA, /*useInactive=*/true,
                                  /*validateFull=*/true);
            model.runConstFold(true);
            model.swapConstantBuffer();
            ++swaps;
            toB = !toB;
            std::this_thread::sleep_for(
                std::chrono::duration<double, std::milli>(swapEveryMs));
          }
        });
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      stop = true;
      for (std::thread &w : workers)
        w.join();
      if (swapper.joinable())
        swapper.join();
      std::printf("%-6s %8.1f runs/s  p50 %8.3f ms  p99 %8.3f ms  (%zu runs, "
                  "%lld swaps)\n",
                  phaseNames[phase],
                  static_cast<double>(latencies.size()) / seconds,
                  percentile(latencies, 0.5), percentile(latencies, 0.99),
                  latencies.size(),
                  static_cast<long long>(swaps.load() - swapsBefore));
      // Between phases: back to A, the inactive set dropped.
      model.updateConstants(setA);
      model.freeInactiveConstantBuffer();
    }
    std::printf("mixed outputs: %lld\n", static_cast<long long>(mixed.load()));
    failures += mixed.load() > 0;
    return failures ? 1 : 0;
  } catch (const aotc::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

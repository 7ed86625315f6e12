/// \file
/// The aotc subcommands; each returns the process exit code.
#pragma once

#include "compiler/driver/pipeline.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aotc::cli {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs; ///< .pb TensorProto files
  std::string device;
  int repeat = 1;
  std::map<std::string, int64_t> dims; ///< symbol values for random inputs
  uint64_t seed = 1;
  std::string profile; ///< Chrome trace file; non-empty turns profiling on
  bool peak = false;   ///< measure the device's peak for the profile table
  /// Weights to load before running: an ONNX file or a folder of .pb files.
  std::string constants;
  /// Reserve the arena and ready the kernels for these sizes before the
  /// first run (aotc_container_reserve).
  bool reserve = false;
  /// Megabytes written between timed runs (untimed), so that every run
  /// starts with the caches holding other data, as in bench/cpu.sh where
  /// another system runs between two of ours; 0: runs back to back.
  int evictMb = 0;
};

struct TestArgs {
  std::vector<std::string> cases;
  std::string casesFrom; ///< a file listing case dirs, one a line
  std::string root;      ///< prefix for relative entries of casesFrom
  std::string device;
  double rtol = 1e-3;
  double atol = 1e-5;
  bool verbose = false;
  bool naiveKernels = false; ///< compile as `aotc compile --naive-kernels`
  bool fuseAttention = false; ///< compile as `aotc compile --fuse-attention`
  bool narrowIndices = false; ///< compile as `aotc compile --narrow-indices`
  bool noWinograd = false; ///< compile as `aotc compile --no-winograd`
  /// compile as `aotc compile --row-panels-always`
  bool rowPanelsAlways = false;
  /// compile as `aotc compile --device-profile`
  std::string deviceProfile = "generic-avx2";
  /// compile as `aotc compile --kernel-configs` (every case: the names are
  /// one model's kernels)
  std::string kernelConfigs;
};

struct BenchArgs {
  std::string model;                ///< the ONNX file
  std::string batches = "1,8";      ///< batch sizes (symbolic dims)
  std::vector<std::string> dims;    ///< NAME=VALUE for other symbolic dims
  std::string systems;              ///< aotc,ort,iree (default: all)
  double budget = 0;                ///< seconds of timed runs per system
  int threads = 0;                  ///< threads of every system (default 2)
};

/// `aotc compile --package`.
struct PackageArgs {
  std::string path;          ///< the .aotpkg to write; empty: none
  bool sources = false;      ///< --package-sources
  bool embedWeights = false; ///< --embed-weights: no side file
};

int compileCommand(CompileOptions opts, bool timePasses,
                   const PackageArgs &package = {});
int runCommand(const RunArgs &args);
int inspectCommand(const std::string &model, const std::string &device);
/// Without a profile spec, lists the devices; with one, prints that
/// DeviceProfile as JSON: an OpenCL device's (cpu, gpu, gpu:N, a name
/// substring), a built-in one by name, `host`, or a JSON file's.
int devicesCommand(const std::string &profileSpec);

/// The built-in profile for this machine's CPU: zen5-avx512 on AMD Zen 5
/// and later, generic-avx512 on another CPU with AVX-512F, else
/// generic-avx2 (`aotc compile --vector-lanes host`).
std::string hostCpuProfileName();
/// hostCpuProfileName()'s profile with this machine's last-level cache
/// size (DeviceProfile::cacheBytes; 0 if the system does not say) and
/// without row panels where its L1 data cache is 48 KiB or more
/// (rowPanelsForL1).
DeviceProfile hostCpuProfile();
/// The DeviceProfile OpenCL reports for device \p spec (as devicesCommand).
Expected<DeviceProfile> queryDeviceProfile(const std::string &spec);
/// A --device-profile argument: a built-in profile's name, a JSON file
/// (a path with '/' or ending in .json), or cl:DEVICE to query OpenCL.
Expected<DeviceProfile> resolveDeviceProfile(const std::string &spec);
int testCommand(const TestArgs &args);
int benchCommand(const BenchArgs &args);

/// The whole of text file \p path; nullopt if it cannot be opened.
std::optional<std::string> readTextFile(const std::string &path);
/// Reads a --kernel-configs file; errors name the file.
Expected<KernelConfigs> readKernelConfigs(const std::string &path);

/// Parses NAME=MIN:MAX (or NAME=VALUE) into a range.
bool parseDimRange(const std::string &s, std::string &name, Range &r);

} // namespace aotc::cli

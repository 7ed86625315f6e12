/// \file
/// The .aotpkg package: one zip file holding a model .so, its weights side
/// file, a manifest and optionally the generated sources (packaging/README.md
/// has the layout and the manifest's fields).
///
///   aotc::pkg::WriteRequest request;          // aotc compile --package
///   request.soPath = "model.so";
///   request.outputPath = "model.aotpkg";
///   aotc::pkg::writePackage(request);
///
///   aotc::Model m = aotc::Model::loadPackage("model.aotpkg");  // a host
///
/// Reading validates the whole archive before anything is used: the zip
/// structure (no entry outside the file or overlapping another or the
/// central directory), every entry's name against the package layout (no
/// absolute path, `..`, backslash, duplicate, symlink, directory or unknown
/// entry), the manifest (format version, every entry listed with its size
/// and CRC-32), and the CRC-32 of each entry as it is read. Every failure
/// throws aotc::Error with a message that names the package and the entry.
///
/// Threads: a Package is immutable after open(); its const methods may be
/// called from several threads (reads use pread, no shared file offset).
#ifndef AOTC_PACKAGE_HPP
#define AOTC_PACKAGE_HPP

#include "aotc/runner.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace aotc::pkg {

/// The package format this library writes; it reads this one and older.
constexpr int kFormatVersion = 1;

/// Limits of what a package may hold (a package has a handful of entries).
constexpr size_t kMaxEntries = 64;
constexpr size_t kMaxNameLength = 255;
constexpr uint64_t kMaxManifestBytes = 1 << 20;

/// The CPU architecture and OS of this build ("x86_64", "linux"): what a
/// package's target must say for this host to load it.
const char *hostArch();
const char *hostOs();
/// This aotc's version ("0.1.0").
const char *aotcVersion();

/// An input or output of the packaged model.
struct TensorSpec {
  std::string name;
  std::string dtype;              ///< "float32", ...
  std::vector<std::string> shape; ///< each dim as text: "4", "batch"
};

struct SymbolSpec {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
};

/// An OpenCL program binary the .so embeds (`aotc compile --prebuild`,
/// `--program-binary`): the devices that load without compiling. The parts
/// of a program built in parts are one entry each, with the same key. A
/// plain value, copied in and out of Manifest.
struct ProgramBinarySpec {
  /// "DEVICE NAME, driver VERSION: N bytes", with " (part I of N)" for a
  /// part
  std::string description;
  /// The runtime's device key it was built for (runtime/src/program_cache.h:
  /// platform, device, driver, address bits and, for a CPU, its ISA), whole:
  /// a deployment tool compares it with the target's `aotc devices` key.
  std::string deviceKey;
};

/// An entry as the manifest lists it.
struct ManifestEntry {
  std::string name; ///< path inside the zip, "model/mlp.so"
  std::string role; ///< "model", "weights" or "source"
  uint64_t size = 0;
  uint32_t crc32 = 0;
};

/// manifest.json, parsed.
struct Manifest {
  int formatVersion = kFormatVersion;
  std::string aotcVersion;
  std::string modelName;
  // The target the .so was built for.
  std::string arch;
  std::string os;
  uint32_t abiVersion = 0;  ///< AOTC_ABI_VERSION of the .so
  uint32_t descVersion = 0; ///< AOTC_MODEL_DESC_VERSION of the .so
  // What the device needs.
  std::string deviceProfile; ///< the profile compiled for, as JSON text
  std::string deviceProfileName;
  std::vector<std::string> deviceExtensions; ///< "cl_khr_fp64", ...
  /// The program binaries the .so embeds (device.program_binaries; absent
  /// in packages written before it, read as none).
  std::vector<ProgramBinarySpec> programBinaries;
  // The model.
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<SymbolSpec> symbols;
  int64_t numConstants = 0;
  uint64_t constantsBytes = 0;
  /// Where the weights are: "side-file" (a weights entry), "embedded" (in
  /// the .so) or "weightless" (given with update_constants before a run).
  std::string weights;
  std::vector<ManifestEntry> entries;

  /// The manifest as JSON (stable key order, pretty printed).
  std::string toJson() const;
  /// Parses and checks manifest.json; throws aotc::Error (INVALID_ARGUMENT)
  /// naming \p where for bad JSON or a missing or mistyped field, and
  /// (UNSUPPORTED) for a format version newer than kFormatVersion.
  static Manifest fromJson(const std::string &text, const std::string &where);

  /// The entry with \p role (the first), or null.
  const ManifestEntry *entry(const std::string &role) const;
};

/// An entry of the zip, as its central directory and local header say.
struct ZipEntry {
  std::string name;
  uint16_t method = 0; ///< 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressedSize = 0;
  uint64_t size = 0;
  uint64_t dataOffset = 0; ///< where its (compressed) bytes start
};

/// A validated package, open for reading. Movable.
class Package {
public:
  /// Opens and validates \p path (structure, names, manifest; entry data
  /// is checked as it is read). Does not check that this host can load it:
  /// see checkLoadable().
  static Package open(const std::string &path);

  Package(Package &&other) noexcept;
  Package &operator=(Package &&other) noexcept;
  Package(const Package &) = delete;
  Package &operator=(const Package &) = delete;
  ~Package();

  const std::string &path() const { return path_; }
  const Manifest &manifest() const { return manifest_; }
  const std::vector<ZipEntry> &entries() const { return entries_; }
  /// The zip entry of the manifest's entry with \p role, or null.
  const ZipEntry *find(const std::string &role) const;
  /// The open package file (for mapping a stored entry). Owned by the
  /// Package: valid while it lives, closed by its destructor; a caller
  /// must not close it (pass it to aotc_container_create_with_weights,
  /// which maps the range and keeps no reference to the descriptor).
  int fd() const { return fd_; }

  /// Throws aotc::Error (UNSUPPORTED) naming both values if this host
  /// cannot load the package: another CPU architecture or OS, or a C ABI or
  /// model descriptor version this runtime does not know.
  void checkLoadable() const;
  /// The uncompressed bytes of \p entry, CRC-checked (at most \p limit
  /// bytes of output, else an error).
  std::string read(const ZipEntry &entry, uint64_t limit = UINT64_MAX) const;
  /// Checks the CRC-32 of a stored entry by reading it (not holding it).
  void verifyStored(const ZipEntry &entry) const;

private:
  Package() = default;
  [[noreturn]] void error(aotc_status_t status, const std::string &what) const;
  void parse();

  std::string path_;
  int fd_ = -1;
  uint64_t fileSize_ = 0;
  std::vector<ZipEntry> entries_;
  Manifest manifest_;
};

/// What writePackage packs.
struct WriteRequest {
  /// The model .so.
  std::string soPath;
  /// Its weights side file, when the .so has one (model.weights is then
  /// "side-file"); else empty.
  std::string weightsPath;
  /// What the compile knows of the model: modelName, inputs, outputs,
  /// symbols, numConstants, constantsBytes, weights, deviceProfile(Name),
  /// deviceExtensions. The writer sets the versions, the target (the .so's
  /// ELF machine, this OS, the ABI and descriptor versions the .so was
  /// built with) and the entries.
  Manifest model;
  /// The package to write (replaced atomically: written beside it, then
  /// renamed).
  std::string outputPath;
  /// Optional sources (file name in sources/, text): the OpenCL C kernels
  /// and the wrapper C++.
  std::vector<std::pair<std::string, std::string>> sources;
};

/// Writes the package: stores the weights uncompressed at a page-aligned
/// offset so that a loader can map them, deflates the rest (a .so above
/// 64 MiB is stored), then opens the result with Package::open as a check.
/// Returns the manifest written. Throws aotc::Error naming the file on any
/// failure (and leaves no partial package). Ownership: the request is read
/// during the call only. Threads: any thread; concurrent calls must write
/// different output paths (each writes its own temporary file beside its
/// output).
Manifest writePackage(const WriteRequest &request);

} // namespace aotc::pkg

#endif // AOTC_PACKAGE_HPP

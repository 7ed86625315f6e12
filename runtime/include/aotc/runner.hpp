/// \file
/// Header-only C++ RAII wrapper over the aotc C ABI.
///
///   aotc::ModelOptions options;
///   options.device = "cpu";
///   aotc::Model model = aotc::Model::load("model.so", options);
///   std::vector<aotc::HostTensor> outputs = model.run({x});
///
/// Model::load dlopen()s the model .so with RTLD_LOCAL | RTLD_NOW and resolves
/// every ABI function with dlsym(), so several different models can be used in
/// one process; nothing needs to be linked but libdl (in libc on recent
/// glibc). Model::loadPackage loads a model from an .aotpkg package without
/// extracting it; it is defined in the aotc_package library
/// (packaging/README.md), which only hosts that call it link.
///
/// Errors: every failing operation throws aotc::Error, which carries the
/// aotc_status_t and the runtime's message. A Model is movable, not copyable;
/// its methods may be called concurrently from several threads (run() uses
/// one of the container's instances per call), except that destruction must
/// not race with other calls.
#ifndef AOTC_RUNNER_HPP
#define AOTC_RUNNER_HPP

#include "aotc/aotc_runtime.h"
#include "aotc/half.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aotc {

/// A failed aotc operation.
class Error : public std::runtime_error {
public:
  Error(aotc_status_t status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  aotc_status_t status() const { return status_; }

private:
  aotc_status_t status_;
};

/// The C++ type of each dtype, for HostTensor's typed accessors.
template <typename T> constexpr aotc_dtype_t dtypeOf();
template <> constexpr aotc_dtype_t dtypeOf<float>() {
  return AOTC_DTYPE_FLOAT32;
}
template <> constexpr aotc_dtype_t dtypeOf<double>() {
  return AOTC_DTYPE_FLOAT64;
}
template <> constexpr aotc_dtype_t dtypeOf<uint8_t>() {
  return AOTC_DTYPE_UINT8;
}
template <> constexpr aotc_dtype_t dtypeOf<int8_t>() { return AOTC_DTYPE_INT8; }
template <> constexpr aotc_dtype_t dtypeOf<uint16_t>() {
  return AOTC_DTYPE_UINT16;
}
template <> constexpr aotc_dtype_t dtypeOf<int16_t>() {
  return AOTC_DTYPE_INT16;
}
template <> constexpr aotc_dtype_t dtypeOf<uint32_t>() {
  return AOTC_DTYPE_UINT32;
}
template <> constexpr aotc_dtype_t dtypeOf<int32_t>() {
  return AOTC_DTYPE_INT32;
}
template <> constexpr aotc_dtype_t dtypeOf<int64_t>() {
  return AOTC_DTYPE_INT64;
}
template <> constexpr aotc_dtype_t dtypeOf<bool>() { return AOTC_DTYPE_BOOL; }

/// Bytes per element of \p dtype; 0 if unknown.
inline size_t dtypeSize(aotc_dtype_t dtype) {
  switch (dtype) {
  case AOTC_DTYPE_FLOAT32:
  case AOTC_DTYPE_INT32:
  case AOTC_DTYPE_UINT32:
    return 4;
  case AOTC_DTYPE_UINT16:
  case AOTC_DTYPE_INT16:
  case AOTC_DTYPE_FLOAT16:
  case AOTC_DTYPE_BFLOAT16:
    return 2;
  case AOTC_DTYPE_UINT8:
  case AOTC_DTYPE_INT8:
  case AOTC_DTYPE_BOOL:
    return 1;
  case AOTC_DTYPE_INT64:
  case AOTC_DTYPE_FLOAT64:
    return 8;
  }
  return 0;
}

/// The name of \p dtype ("float32"), or "unknown".
inline const char *dtypeName(aotc_dtype_t dtype) {
  switch (dtype) {
  case AOTC_DTYPE_FLOAT32:
    return "float32";
  case AOTC_DTYPE_UINT8:
    return "uint8";
  case AOTC_DTYPE_INT8:
    return "int8";
  case AOTC_DTYPE_UINT16:
    return "uint16";
  case AOTC_DTYPE_INT16:
    return "int16";
  case AOTC_DTYPE_UINT32:
    return "uint32";
  case AOTC_DTYPE_INT32:
    return "int32";
  case AOTC_DTYPE_INT64:
    return "int64";
  case AOTC_DTYPE_BOOL:
    return "bool";
  case AOTC_DTYPE_FLOAT64:
    return "float64";
  case AOTC_DTYPE_FLOAT16:
    return "float16";
  case AOTC_DTYPE_BFLOAT16:
    return "bfloat16";
  }
  return "unknown";
}

/// An allocator of memory aligned to 256 bytes: HostTensor's storage, which
/// a run on a CPU device (PoCL) then reads and writes in place instead of
/// copying (aotc_container_run). Stateless: any thread may allocate and
/// any may free what another allocated; memory from allocate() is the
/// caller's until it passes it to deallocate(). Failure: allocate() throws
/// std::bad_alloc (operator new), as std::allocator does.
template <typename T> struct Aligned256Allocator {
  using value_type = T;
  Aligned256Allocator() = default;
  template <typename U> Aligned256Allocator(const Aligned256Allocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(
        ::operator new(n * sizeof(T), std::align_val_t(256)));
  }
  void deallocate(T *p, size_t) {
    ::operator delete(p, std::align_val_t(256));
  }
  template <typename U> bool operator==(const Aligned256Allocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const Aligned256Allocator<U> &) const {
    return false;
  }
};

/// A dense row-major tensor that owns its host memory.
class HostTensor {
public:
  /// A float32 scalar (rank 0, one element) holding 0.
  HostTensor() { storage_.assign(nbytes(), 0); }
  /// A zero-filled tensor.
  HostTensor(aotc_dtype_t dtype, std::vector<int64_t> shape)
      : dtype_(dtype), shape_(std::move(shape)) {
    storage_.assign(nbytes(), 0);
  }
  /// A tensor holding \p values (numel must match \p shape).
  template <typename T>
  static HostTensor fromVector(std::vector<int64_t> shape,
                               const std::vector<T> &values) {
    HostTensor t(dtypeOf<T>(), std::move(shape));
    if (static_cast<size_t>(t.numel()) != values.size())
      throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                  "HostTensor::fromVector: shape and value count differ");
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i)
        t.storage_[i] = values[i] ? 1 : 0;
    } else if (!values.empty()) {
      std::memcpy(t.storage_.data(), values.data(), t.nbytes());
    }
    return t;
  }

  aotc_dtype_t dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape_)
      n *= d;
    return n;
  }
  size_t nbytes() const {
    return static_cast<size_t>(numel()) * dtypeSize(dtype_);
  }
  void *raw() { return storage_.data(); }
  const void *raw() const { return storage_.data(); }

  /// Typed element access; throws if T does not match the dtype.
  template <typename T> T *data() {
    checkType<T>();
    return reinterpret_cast<T *>(storage_.data());
  }
  template <typename T> const T *data() const {
    checkType<T>();
    return reinterpret_cast<const T *>(storage_.data());
  }
  template <typename T> std::vector<T> toVector() const {
    checkType<T>();
    std::vector<T> values(static_cast<size_t>(numel()));
    if (!values.empty())
      std::memcpy(values.data(), storage_.data(), nbytes());
    return values;
  }

  /// Reshapes (and reallocates) the storage; the contents become zero.
  void reset(aotc_dtype_t dtype, std::vector<int64_t> shape) {
    dtype_ = dtype;
    shape_ = std::move(shape);
    storage_.assign(nbytes(), 0);
  }

private:
  template <typename T> void checkType() const {
    static_assert(!std::is_same_v<T, bool>,
                  "read bool tensors as uint8_t (one byte per element)");
    if (dtypeOf<T>() != dtype_ &&
        !(dtype_ == AOTC_DTYPE_BOOL && std::is_same_v<T, uint8_t>))
      throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                  "HostTensor: element type does not match the dtype");
  }

  aotc_dtype_t dtype_ = AOTC_DTYPE_FLOAT32;
  std::vector<int64_t> shape_;
  /// Aligned to 256 bytes: every dtype's alignment, and a CPU device's for
  /// using it in place.
  std::vector<uint8_t, Aligned256Allocator<uint8_t>> storage_;
};

/// An input or output of a model.
struct TensorInfo {
  std::string name;
  aotc_dtype_t dtype = AOTC_DTYPE_FLOAT32;
  /// Static size per dim, -1 where symbolic.
  std::vector<int64_t> dims;
  /// Each dim as text ("4", "batch", "batch*2").
  std::vector<std::string> dimTexts;
  /// The symbol index of a dim that is exactly a symbol, else -1.
  std::vector<int32_t> dimSymbols;
};

struct ConstantInfo {
  std::string name;
  std::string onnxName;
  aotc_dtype_t dtype = AOTC_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  uint64_t nbytes = 0;
  bool folded = false;
  /// Whether Model::updateConstants takes it; if not, why.
  bool updatable = false;
  std::string notUpdatableReason;
};

/// An input as the ONNX graph lists it (Model::graphInputs).
struct GraphInputInfo {
  std::string name;
  /// AOTC_GRAPH_INPUT_REQUIRED, _DEFAULT (a run may replace it) or _FIXED.
  aotc_graph_input_kind_t kind = AOTC_GRAPH_INPUT_REQUIRED;
  /// The input number (required) or the constant number (a default).
  int32_t index = 0;
};

struct SymbolInfo {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
};

struct ModelOptions {
  /// Device string (see aotc_container_options_t); nullopt reads AOTC_DEVICE.
  std::optional<std::string> device;
  uint32_t numInstances = 1;
  /// Program-binary cache directory; empty for the default.
  std::string cacheDir;
  /// Time every kernel and copy of every run (Model::lastProfile()).
  bool profile = false;
  /// Read a weights side file from this open descriptor instead of beside
  /// the .so: the weightsSize bytes at weightsOffset (see
  /// aotc_container_create_with_weights). -1: beside the .so.
  /// Model::loadPackage sets these itself.
  /// An OpenCL context (cl_context) to create the model in, shared with the
  /// host and other models (aotc_container_create_in_context); nullptr: one
  /// of its own. The Model holds a reference to it until it is destroyed
  /// (the host may release its own); threads as Model::load. Model::load
  /// throws aotc::Error: AOTC_ERROR_UNSUPPORTED for a .so built before that
  /// function, AOTC_ERROR_INVALID_ARGUMENT for a context without the
  /// selected device.
  void *clContext = nullptr;
  int weightsFd = -1;
  uint64_t weightsOffset = 0;
  uint64_t weightsSize = 0;
  /// Model::loadPackage: check the CRC-32 of the weights entry before
  /// mapping it (reads it once; the .so and manifest are always checked).
  bool verifyWeights = true;
};

namespace detail {

#define AOTC_RUNNER_ABI_FUNCTIONS(X)                                           \
  X(aotc_abi_version)                                                          \
  X(aotc_last_error)                                                           \
  X(aotc_status_name)                                                          \
  X(aotc_container_options_init)                                               \
  X(aotc_container_create)                                                     \
  X(aotc_container_delete)                                                     \
  X(aotc_container_program_source)                                             \
  X(aotc_container_run)                                                        \
  X(aotc_container_output_shapes)                                              \
  X(aotc_container_model_name)                                                 \
  X(aotc_container_device_name)                                                \
  X(aotc_container_num_instances)                                              \
  X(aotc_container_num_inputs)                                                 \
  X(aotc_container_num_outputs)                                                \
  X(aotc_container_num_constants)                                              \
  X(aotc_container_num_symbols)                                                \
  X(aotc_container_num_kernels)                                                \
  X(aotc_container_num_metadata)                                               \
  X(aotc_container_input_info)                                                 \
  X(aotc_container_output_info)                                                \
  X(aotc_container_constant_info)                                              \
  X(aotc_container_symbol_info)                                                \
  X(aotc_container_kernel_name)                                                \
  X(aotc_container_metadata)                                                   \
  X(aotc_container_metadata_lookup)                                            \
  X(aotc_container_arena_bytes)

/// Functions a model .so built by an older aotc may lack (null then).
#define AOTC_RUNNER_OPTIONAL_FUNCTIONS(X)                                      \
  X(aotc_container_num_graph_inputs)                                           \
  X(aotc_container_graph_input_info)                                           \
  X(aotc_container_set_profiling)                                              \
  X(aotc_container_last_profile)                                               \
  X(aotc_container_kernel_summary)                                             \
  X(aotc_container_opencl_handles)                                             \
  X(aotc_container_run_device)                                                 \
  X(aotc_container_update_constants)                                           \
  X(aotc_container_update_user_managed_constants)                              \
  X(aotc_container_run_const_fold)                                             \
  X(aotc_container_swap_constant_buffer)                                       \
  X(aotc_container_free_inactive_constant_buffer)                              \
  X(aotc_container_extract_constants)                                          \
  X(aotc_container_constant_updatable)                                         \
  X(aotc_container_create_with_weights)                                         \
  X(aotc_container_create_in_context)                                          \
  X(aotc_container_run_device_async)                                           \
  X(aotc_run_wait)                                                             \
  X(aotc_container_reserve)

/// The ABI of one loaded model .so.
struct Library {
#define AOTC_RUNNER_MEMBER(name) name##_fn name = nullptr;
  AOTC_RUNNER_ABI_FUNCTIONS(AOTC_RUNNER_MEMBER)
  AOTC_RUNNER_OPTIONAL_FUNCTIONS(AOTC_RUNNER_MEMBER)
#undef AOTC_RUNNER_MEMBER
  void *handle = nullptr;
  std::string path;
  /// A descriptor closed after dlclose (the in-memory file of a package's
  /// .so: kept open while loaded, so that its /proc/self/fd path names no
  /// other file meanwhile), or -1.
  int fd = -1;

  Library() = default;
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;
  ~Library() {
    if (handle)
      dlclose(handle);
    if (fd >= 0)
      ::close(fd);
  }

  /// \p fn, a function a .so built by an older aotc may lack; where it is
  /// null, throws AOTC_ERROR_UNSUPPORTED saying that this model .so
  /// \p cannot.
  template <typename Fn> Fn need(Fn fn, const char *cannot) const {
    if (!fn)
      throw Error(AOTC_ERROR_UNSUPPORTED, path + ": this model .so " + cannot +
                                              " (built by an older aotc)");
    return fn;
  }

  /// Throws aotc::Error with the model's last error if \p status failed.
  void check(aotc_status_t status, const char *what) const {
    if (status == AOTC_OK)
      return;
    throw Error(status, path + ": " + what + ": " + aotc_last_error());
  }
};

/// True if the file at \p path starts like a zip archive (an .aotpkg).
inline bool looksLikePackage(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  char magic[4] = {};
  size_t n = std::fread(magic, 1, sizeof(magic), f);
  std::fclose(f);
  return n == sizeof(magic) && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

/// dlopen()s the model at \p path (or, when \p file is given, that file,
/// e.g. /proc/self/fd/N of a .so in memory, named \p path in messages).
inline std::shared_ptr<Library> openLibrary(const std::string &path,
                                            std::string file = "") {
  auto lib = std::make_shared<Library>();
  lib->path = path;
  // A bare file name that names a file in the current directory means that
  // file, as a user means it (dlopen alone would search the library path);
  // other bare names are left to the library search path.
  if (file.empty())
    file = path.find('/') == std::string::npos &&
                   ::access(path.c_str(), F_OK) == 0
               ? "./" + path
               : path;
  if (file == path && looksLikePackage(path))
    throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                "'" + path + "' is an aotc package, not a model .so: load it "
                "with aotc::Model::loadPackage (link the aotc_package "
                "library)");
  lib->handle = dlopen(file.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!lib->handle) {
    const char *why = dlerror();
    throw Error(AOTC_ERROR_NOT_FOUND,
                "cannot load model '" + path + "': " + (why ? why : "?"));
  }
#define AOTC_RUNNER_RESOLVE(name)                                              \
  lib->name = reinterpret_cast<name##_fn>(dlsym(lib->handle, #name));          \
  if (!lib->name)                                                              \
    throw Error(AOTC_ERROR_NOT_FOUND,                                          \
                "'" + path + "' is not an aotc model: no symbol " #name);
  AOTC_RUNNER_RESOLVE(aotc_abi_version)
  uint32_t version = lib->aotc_abi_version();
  if (version != AOTC_ABI_VERSION)
    throw Error(AOTC_ERROR_UNSUPPORTED, "'" + path + "' has aotc ABI version " +
                                            std::to_string(version) +
                                            ", this host expects " +
                                            std::to_string(AOTC_ABI_VERSION));
  AOTC_RUNNER_ABI_FUNCTIONS(AOTC_RUNNER_RESOLVE)
#undef AOTC_RUNNER_RESOLVE
#define AOTC_RUNNER_RESOLVE_OPTIONAL(name)                                     \
  lib->name = reinterpret_cast<name##_fn>(dlsym(lib->handle, #name));
  AOTC_RUNNER_OPTIONAL_FUNCTIONS(AOTC_RUNNER_RESOLVE_OPTIONAL)
#undef AOTC_RUNNER_RESOLVE_OPTIONAL
  return lib;
}

inline TensorInfo toTensorInfo(const aotc_tensor_info_t &info) {
  TensorInfo result;
  result.name = info.name;
  result.dtype = static_cast<aotc_dtype_t>(info.dtype);
  for (int32_t d = 0; d < info.rank; ++d) {
    result.dims.push_back(info.dims[d]);
    result.dimTexts.push_back(info.dim_texts[d] ? info.dim_texts[d] : "");
    result.dimSymbols.push_back(info.dim_symbols[d]);
  }
  return result;
}

} // namespace detail

/// A model .so loaded onto one device (one container).
class Model {
public:
  /// Loads the model .so at \p path and creates its container. Throws
  /// aotc::Error (NOT_FOUND for a missing file or device, UNSUPPORTED for an
  /// ABI version mismatch, ...).
  static Model load(const std::string &path, const ModelOptions &options = {}) {
    return create(detail::openLibrary(path), options);
  }

  /// Loads the model of the package (.aotpkg) at \p path without extracting
  /// it to disk: validates the archive and its manifest (this host's CPU
  /// architecture and OS, format, ABI and descriptor versions, every entry's
  /// name, size and CRC), dlopen()s the .so from an in-memory file
  /// (memfd_create) and maps the weights from the package file itself.
  /// Throws aotc::Error naming the package and what is wrong, leaving
  /// nothing open or mapped. Ownership: the Model keeps the in-memory .so
  /// (its descriptor closes after dlclose) and the runtime keeps the
  /// weights' mapping; the package file itself is closed before the call
  /// returns, so it may be replaced or deleted afterwards. Threads: any
  /// thread, also concurrently (each call opens its own descriptors), like
  /// Model::load. Defined in the aotc_package library (packaging/,
  /// aotc/package.hpp): a host that calls it links that library (and
  /// libzip, zlib); Model::load needs neither.
  static Model loadPackage(const std::string &path,
                           const ModelOptions &options = {});

private:
  /// Creates the container of an opened model library.
  static Model create(std::shared_ptr<detail::Library> lib,
                      const ModelOptions &options) {
    Model model;
    model.lib_ = std::move(lib);
    aotc_container_options_t opts;
    model.lib_->aotc_container_options_init(&opts);
    opts.device = options.device ? options.device->c_str() : nullptr;
    opts.num_instances = options.numInstances;
    opts.cache_dir =
        options.cacheDir.empty() ? nullptr : options.cacheDir.c_str();
    aotc_container_t *container = nullptr;
    if (options.clContext) {
      auto create = model.lib_->need(
          model.lib_->aotc_container_create_in_context,
          "cannot be created in a given OpenCL context");
      model.lib_->check(create(&opts, options.clContext, options.weightsFd,
                               options.weightsOffset, options.weightsSize,
                               &container),
                        "aotc_container_create_in_context");
    } else if (options.weightsFd >= 0) {
      auto create = model.lib_->need(
          model.lib_->aotc_container_create_with_weights,
          "cannot read its weights from a descriptor");
      model.lib_->check(create(&opts, options.weightsFd, options.weightsOffset,
                               options.weightsSize, &container),
                        "aotc_container_create_with_weights");
    } else {
      model.lib_->check(model.lib_->aotc_container_create(&opts, &container),
                        "aotc_container_create");
    }
    model.container_ = container;
    if (options.profile)
      model.setProfiling(true);
    return model;
  }

public:
  Model() = default;
  Model(Model &&other) noexcept
      : lib_(std::move(other.lib_)),
        container_(std::exchange(other.container_, nullptr)) {}
  Model &operator=(Model &&other) noexcept {
    if (this != &other) {
      reset();
      lib_ = std::move(other.lib_);
      container_ = std::exchange(other.container_, nullptr);
    }
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { reset(); }

  /// Runs the model; returns newly allocated outputs.
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs) const {
    std::vector<HostTensor> outputs;
    run(inputs, outputs);
    return outputs;
  }

  /// Runs the model into \p outputs, reusing their storage when the shapes
  /// did not change. An output sized by a count the model computes while
  /// it runs (NonZero, Compress: its shape has -1 dims until then) first
  /// gets the storage it had; if that is too small the run is repeated
  /// once with the size the first one reported. Threads: any, on one
  /// Model, as aotc_container_run (each call uses its own \p outputs).
  /// Failure: throws aotc::Error with the C ABI's status and message;
  /// \p outputs then hold unspecified data (their shapes may have changed).
  void run(const std::vector<HostTensor> &inputs,
           std::vector<HostTensor> &outputs) const {
    std::vector<aotc_tensor_t> in = toCTensors(inputs);
    std::vector<aotc_tensor_t> out(numOutputs());
    lib().check(lib().aotc_container_output_shapes(
                    container_, in.data(), in.size(), out.data(), out.size()),
                "aotc_container_output_shapes");
    outputs.resize(out.size());
    std::vector<bool> counted(out.size(), false);
    for (size_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> shape(out[i].shape, out[i].shape + out[i].rank);
      auto dtype = static_cast<aotc_dtype_t>(out[i].dtype);
      for (int64_t d : shape)
        counted[i] = counted[i] || d < 0;
      if (counted[i]) {
        if (outputs[i].dtype() != dtype)
          outputs[i].reset(dtype, std::vector<int64_t>(shape.size(), 0));
      } else if (outputs[i].dtype() != dtype || outputs[i].shape() != shape) {
        outputs[i].reset(dtype, std::move(shape));
      }
      out[i].data = outputs[i].raw();
      out[i].nbytes = outputs[i].nbytes();
    }
    aotc_status_t status = lib().aotc_container_run(
        container_, in.data(), in.size(), out.data(), out.size());
    bool retry = false;
    for (size_t i = 0; i < out.size() && status == AOTC_ERROR_BUFFER_TOO_SMALL;
         ++i) {
      std::vector<int64_t> shape(out[i].shape, out[i].shape + out[i].rank);
      bool known = true;
      for (int64_t d : shape)
        known = known && d >= 0;
      if (!counted[i] || !known)
        continue;
      HostTensor sized;
      sized.reset(static_cast<aotc_dtype_t>(out[i].dtype), shape);
      if (sized.nbytes() <= outputs[i].nbytes())
        continue;
      outputs[i] = std::move(sized);
      out[i].data = outputs[i].raw();
      out[i].nbytes = outputs[i].nbytes();
      retry = true;
    }
    if (retry)
      status = lib().aotc_container_run(container_, in.data(), in.size(),
                                        out.data(), out.size());
    lib().check(status, "aotc_container_run");
    // A counted output holds its data at the start of its storage.
    for (size_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> shape(out[i].shape, out[i].shape + out[i].rank);
      if (!counted[i] || outputs[i].shape() == shape)
        continue;
      HostTensor exact;
      exact.reset(static_cast<aotc_dtype_t>(out[i].dtype), shape);
      if (exact.nbytes() > 0)
        std::memcpy(exact.raw(), outputs[i].raw(), exact.nbytes());
      outputs[i] = std::move(exact);
    }
  }

  /// The output shapes for \p inputs, without running (-1 for a dim sized
  /// by a count the model computes while it runs).
  std::vector<std::vector<int64_t>>
  outputShapes(const std::vector<HostTensor> &inputs) const {
    std::vector<aotc_tensor_t> in = toCTensors(inputs);
    std::vector<aotc_tensor_t> out(numOutputs());
    lib().check(lib().aotc_container_output_shapes(
                    container_, in.data(), in.size(), out.data(), out.size()),
                "aotc_container_output_shapes");
    std::vector<std::vector<int64_t>> shapes;
    for (const aotc_tensor_t &t : out)
      shapes.emplace_back(t.shape, t.shape + t.rank);
    return shapes;
  }

  std::string name() const { return string(lib().aotc_container_model_name); }
  std::string deviceName() const {
    return string(lib().aotc_container_device_name);
  }
  /// Where the OpenCL program came from: AOTC_PROGRAM_FROM_SOURCE,
  /// AOTC_PROGRAM_FROM_CACHE or AOTC_PROGRAM_EMBEDDED (aotc_runtime.h).
  /// Any thread, concurrently with runs; throws aotc::Error only if the C
  /// call fails (a moved-from Model, which has no container).
  int32_t programSource() const {
    int32_t source = 0;
    lib().check(lib().aotc_container_program_source(container_, &source),
                "aotc_container_program_source");
    return source;
  }
  /// True if no OpenCL C was compiled at load: the program came from the
  /// binary cache or from a binary embedded in the .so. As programSource().
  bool programFromCache() const {
    return programSource() != AOTC_PROGRAM_FROM_SOURCE;
  }
  size_t numInstances() const {
    return count(lib().aotc_container_num_instances);
  }
  size_t numInputs() const { return count(lib().aotc_container_num_inputs); }
  size_t numOutputs() const { return count(lib().aotc_container_num_outputs); }

  std::vector<TensorInfo> inputs() const {
    return tensorInfos(numInputs(), lib().aotc_container_input_info);
  }
  std::vector<TensorInfo> outputs() const {
    return tensorInfos(numOutputs(), lib().aotc_container_output_info);
  }
  /// The inputs as the ONNX graph lists them: the inputs, and the defaults
  /// (initializers) it lists among them. run() takes either numInputs()
  /// tensors or one per graph input, in this order.
  std::vector<GraphInputInfo> graphInputs() const {
    std::vector<GraphInputInfo> result;
    if (!lib().aotc_container_num_graph_inputs ||
        !lib().aotc_container_graph_input_info) {
      std::vector<TensorInfo> ins = inputs();
      for (size_t i = 0; i < ins.size(); ++i)
        result.push_back({ins[i].name, AOTC_GRAPH_INPUT_REQUIRED,
                          static_cast<int32_t>(i)});
      return result;
    }
    size_t n = count(lib().aotc_container_num_graph_inputs);
    for (size_t i = 0; i < n; ++i) {
      aotc_graph_input_info_t g;
      lib().check(lib().aotc_container_graph_input_info(container_, i, &g),
                  "aotc_container_graph_input_info");
      result.push_back(
          {g.name, static_cast<aotc_graph_input_kind_t>(g.kind), g.index});
    }
    return result;
  }
  std::vector<ConstantInfo> constants() const {
    std::vector<ConstantInfo> result;
    size_t n = count(lib().aotc_container_num_constants);
    for (size_t i = 0; i < n; ++i) {
      aotc_constant_info_t c;
      lib().check(lib().aotc_container_constant_info(container_, i, &c),
                  "aotc_container_constant_info");
      ConstantInfo info;
      info.name = c.name;
      info.onnxName = c.onnx_name;
      info.dtype = static_cast<aotc_dtype_t>(c.dtype);
      info.shape.assign(c.shape, c.shape + c.rank);
      info.nbytes = c.nbytes;
      info.folded = c.folded != 0;
      if (lib().aotc_container_constant_updatable) {
        int32_t updatable = 0;
        const char *reason = nullptr;
        lib().check(lib().aotc_container_constant_updatable(
                        container_, i, &updatable, &reason),
                    "aotc_container_constant_updatable");
        info.updatable = updatable != 0;
        info.notUpdatableReason = reason ? reason : "";
      }
      result.push_back(std::move(info));
    }
    return result;
  }
  std::vector<SymbolInfo> symbols() const {
    std::vector<SymbolInfo> result;
    size_t n = count(lib().aotc_container_num_symbols);
    for (size_t i = 0; i < n; ++i) {
      aotc_symbol_info_t s;
      lib().check(lib().aotc_container_symbol_info(container_, i, &s),
                  "aotc_container_symbol_info");
      result.push_back({s.name, s.min, s.max});
    }
    return result;
  }
  std::vector<std::string> kernelNames() const {
    std::vector<std::string> result;
    size_t n = count(lib().aotc_container_num_kernels);
    for (size_t i = 0; i < n; ++i) {
      const char *name = nullptr;
      lib().check(lib().aotc_container_kernel_name(container_, i, &name),
                  "aotc_container_kernel_name");
      result.emplace_back(name);
    }
    return result;
  }
  /// What each kernel computes ("Conv+Relu -> f32[n,64,56,56]"); empty
  /// strings for a .so built before kernels had summaries.
  std::vector<std::string> kernelSummaries() const {
    std::vector<std::string> result;
    size_t n = count(lib().aotc_container_num_kernels);
    for (size_t i = 0; i < n; ++i) {
      const char *summary = "";
      if (lib().aotc_container_kernel_summary)
        lib().check(lib().aotc_container_kernel_summary(container_, i, &summary),
                    "aotc_container_kernel_summary");
      result.emplace_back(summary);
    }
    return result;
  }
  /// Turns per-run profiling on or off (aotc_container_set_profiling).
  void setProfiling(bool on) {
    lib().check(lib().need(lib().aotc_container_set_profiling,
                           "cannot profile")(container_, on ? 1 : 0),
                "aotc_container_set_profiling");
  }
  /// The timings of the most recent profiled run
  /// (aotc_container_last_profile); profiling must be on.
  std::vector<aotc_profile_record_t> lastProfile() const {
    lib().need(lib().aotc_container_last_profile, "cannot profile");
    size_t n = 0;
    lib().check(lib().aotc_container_last_profile(container_, nullptr, 0, &n),
                "aotc_container_last_profile");
    std::vector<aotc_profile_record_t> records(n);
    lib().check(lib().aotc_container_last_profile(container_, records.data(),
                                                  records.size(), &n),
                "aotc_container_last_profile");
    records.resize(std::min(n, records.size()));
    return records;
  }
  std::vector<std::pair<std::string, std::string>> metadata() const {
    std::vector<std::pair<std::string, std::string>> result;
    size_t n = count(lib().aotc_container_num_metadata);
    for (size_t i = 0; i < n; ++i) {
      const char *key = nullptr;
      const char *value = nullptr;
      lib().check(lib().aotc_container_metadata(container_, i, &key, &value),
                  "aotc_container_metadata");
      result.emplace_back(key, value);
    }
    return result;
  }
  /// The value of a metadata key, or nullopt.
  std::optional<std::string> metadata(const std::string &key) const {
    const char *value = nullptr;
    aotc_status_t status =
        lib().aotc_container_metadata_lookup(container_, key.c_str(), &value);
    if (status == AOTC_ERROR_NOT_FOUND)
      return std::nullopt;
    lib().check(status, "aotc_container_metadata_lookup");
    return std::string(value);
  }
  uint64_t arenaBytes(const std::vector<int64_t> &symbolValues) const {
    uint64_t bytes = 0;
    lib().check(lib().aotc_container_arena_bytes(container_,
                                                 symbolValues.data(),
                                                 symbolValues.size(), &bytes),
                "aotc_container_arena_bytes");
    return bytes;
  }

  /// Prepares every instance for runs with these symbol values
  /// (aotc_container_reserve: each arena sized and written, then one run on
  /// zeros at those sizes), so that their first run grows no arena and
  /// launches no kernel at new sizes. Any thread; waits for the runs in
  /// flight. Throws Error (its status as the C call's) on a value outside
  /// its symbol's range, a wrong count, or a device that cannot allocate;
  /// UNSUPPORTED for a .so built before the call existed.
  void reserve(const std::vector<int64_t> &symbolValues) {
    lib().need(lib().aotc_container_reserve, "cannot reserve");
    lib().check(lib().aotc_container_reserve(container_, symbolValues.data(),
                                             symbolValues.size()),
                "aotc_container_reserve");
  }

  /// The underlying C handle (owned by this Model).
  aotc_container_t *handle() const { return container_; }
  /// The message of the model's last failed call on this thread.
  std::string lastError() const { return lib().aotc_last_error(); }

  /// The container's cl_context and cl_device_id (as void *), for buffers
  /// that runDevice reads and writes. They stay the container's, valid
  /// while this Model lives: do not release them. Any thread. Throws
  /// aotc::Error, AOTC_ERROR_UNSUPPORTED for a .so built before the call.
  std::pair<void *, void *> openclHandles() const {
    void *context = nullptr, *device = nullptr;
    lib().check(lib().need(lib().aotc_container_opencl_handles,
                           "cannot give its OpenCL handles")(container_,
                                                             &context, &device),
                "aotc_container_opencl_handles");
    return {context, device};
  }
  /// Runs on tensors in the caller's OpenCL buffers (see
  /// aotc_container_run_device); fills each output's dtype and shape. The
  /// caller keeps the buffers; threads as run(). Throws aotc::Error with
  /// aotc_container_run_device's status, AOTC_ERROR_UNSUPPORTED for a .so
  /// built before the call.
  void runDevice(const std::vector<aotc_device_tensor_t> &inputs,
                 std::vector<aotc_device_tensor_t> &outputs) const {
    lib().check(lib().need(lib().aotc_container_run_device,
                           "cannot run on OpenCL buffers")(
                    container_, inputs.data(), inputs.size(), outputs.data(),
                    outputs.size()),
                "aotc_container_run_device");
  }

  /// A device run in flight (runDeviceAsync): wait() waits for it and
  /// throws its error (a run-time check); destroying one not waited for
  /// waits and drops the error. Keep it shorter-lived than its Model.
  class DeviceRun {
  public:
    DeviceRun() = default;
    DeviceRun(DeviceRun &&o) noexcept : lib_(o.lib_), run_(o.run_) {
      o.run_ = nullptr;
    }
    DeviceRun &operator=(DeviceRun &&o) noexcept {
      if (this != &o) {
        finish();
        lib_ = o.lib_;
        run_ = o.run_;
        o.run_ = nullptr;
      }
      return *this;
    }
    DeviceRun(const DeviceRun &) = delete;
    DeviceRun &operator=(const DeviceRun &) = delete;
    ~DeviceRun() { finish(); }
    /// True until waited for.
    bool pending() const { return run_ != nullptr; }
    void wait() {
      if (!run_)
        throw Error(AOTC_ERROR_INVALID_ARGUMENT, "DeviceRun: nothing to wait for");
      aotc_run_t *run = run_;
      run_ = nullptr;
      lib_->check(lib_->aotc_run_wait(run), "aotc_run_wait");
    }

  private:
    friend class Model;
    DeviceRun(const detail::Library *lib, aotc_run_t *run)
        : lib_(lib), run_(run) {}
    void finish() noexcept {
      if (run_)
        lib_->aotc_run_wait(run_);
      run_ = nullptr;
    }
    const detail::Library *lib_ = nullptr;
    aotc_run_t *run_ = nullptr;
  };
  /// Enqueues a device run in order with the caller's cl_command_queue
  /// \p queue and returns without waiting (see
  /// aotc_container_run_device_async); fills each output's dtype and shape.
  /// The caller keeps the queue and the buffers; threads as run(). Throws
  /// aotc::Error with that call's status, AOTC_ERROR_UNSUPPORTED for a .so
  /// built before it.
  DeviceRun runDeviceAsync(const std::vector<aotc_device_tensor_t> &inputs,
                           std::vector<aotc_device_tensor_t> &outputs,
                           void *queue) const {
    const char *cannot = "cannot run asynchronously";
    auto enqueue = lib().need(lib().aotc_container_run_device_async, cannot);
    lib().need(lib().aotc_run_wait, cannot); // DeviceRun's wait
    aotc_run_t *run = nullptr;
    lib().check(enqueue(container_, inputs.data(), inputs.size(),
                        outputs.data(), outputs.size(), queue, &run),
                "aotc_container_run_device_async");
    return DeviceRun(&lib(), run);
  }

  /// Weights by ONNX initializer name (see aotc_container_update_constants
  /// for the rules, ownership and threads; every failure throws and changes
  /// nothing). The calls below throw AOTC_ERROR_UNSUPPORTED ("cannot update
  /// its constants") for a .so built without constant updates.
  using ConstantMap = std::map<std::string, HostTensor>;

  /// Copies \p constants into the active set (\p useInactive false: the
  /// next run reads them) or the inactive one (seen after
  /// swapConstantBuffer). \p validateFull: every updatable constant must be
  /// given.
  void updateConstants(const ConstantMap &constants, bool useInactive = false,
                       bool validateFull = false) {
    std::vector<aotc_constant_entry_t> entries = toEntries(constants);
    lib().check(lib().need(lib().aotc_container_update_constants,
                           kCannotUpdate)(container_, entries.data(),
                                          entries.size(), useInactive,
                                          validateFull),
                "aotc_container_update_constants");
  }
  /// As updateConstants without a copy: \p constants must stay alive and
  /// unchanged while the set holding them can be read (see
  /// aotc_container_update_user_managed_constants).
  void updateUserManagedConstants(const ConstantMap &constants,
                                  bool useInactive = false,
                                  bool validateFull = false) {
    std::vector<aotc_constant_entry_t> entries = toEntries(constants);
    lib().check(lib().need(lib().aotc_container_update_user_managed_constants,
                           kCannotUpdate)(container_, entries.data(),
                                          entries.size(), useInactive,
                                          validateFull),
                "aotc_container_update_user_managed_constants");
  }
  /// Recomputes the folded constants of a set (aotc_container_run_const_fold:
  /// after editing user-managed memory in place).
  void runConstFold(bool useInactive = false) {
    lib().check(lib().need(lib().aotc_container_run_const_fold,
                           kCannotUpdate)(container_, useInactive),
                "aotc_container_run_const_fold");
  }
  /// Makes the inactive set active (aotc_container_swap_constant_buffer).
  void swapConstantBuffer() {
    lib().check(lib().need(lib().aotc_container_swap_constant_buffer,
                           kCannotUpdate)(container_),
                "aotc_container_swap_constant_buffer");
  }
  /// Frees the inactive set (aotc_container_free_inactive_constant_buffer).
  void freeInactiveConstantBuffer() {
    lib().check(lib().need(lib().aotc_container_free_inactive_constant_buffer,
                           kCannotUpdate)(container_),
                "aotc_container_free_inactive_constant_buffer");
  }
  /// The names updateConstants takes (the updatable initializers), in the
  /// model's order; reads no data.
  std::vector<std::string> updatableConstantNames() const {
    std::vector<std::string> names;
    for (const aotc_constant_entry_t &e : describeConstants(false))
      names.push_back(e.name);
    return names;
  }
  /// Reads back every updatable constant of the active or inactive set.
  ConstantMap extractConstants(bool useInactive = false) const {
    std::vector<aotc_constant_entry_t> entries = describeConstants(useInactive);
    size_t n = entries.size();
    auto fn = lib().aotc_container_extract_constants;
    ConstantMap result;
    for (aotc_constant_entry_t &e : entries) {
      HostTensor &t = result[e.name]; // map nodes do not move
      t.reset(
          static_cast<aotc_dtype_t>(e.tensor.dtype),
          std::vector<int64_t>(e.tensor.shape, e.tensor.shape + e.tensor.rank));
      e.tensor.data = t.raw();
      e.tensor.nbytes = t.nbytes();
    }
    lib().check(fn(container_, useInactive, entries.data(), n, &n),
                "aotc_container_extract_constants");
    return result;
  }

private:
  /// The updatable constants' names, dtypes and shapes (no data read).
  std::vector<aotc_constant_entry_t> describeConstants(bool useInactive) const {
    auto fn = lib().need(lib().aotc_container_extract_constants, kCannotUpdate);
    size_t n = 0;
    lib().check(fn(container_, useInactive, nullptr, 0, &n),
                "aotc_container_extract_constants");
    std::vector<aotc_constant_entry_t> entries(n);
    std::memset(entries.data(), 0, n * sizeof(aotc_constant_entry_t));
    lib().check(fn(container_, useInactive, entries.data(), n, &n),
                "aotc_container_extract_constants");
    return entries;
  }
  /// What a .so without constant updates cannot do (Library::need).
  static constexpr const char *kCannotUpdate = "cannot update its constants";
  static std::vector<aotc_constant_entry_t>
  toEntries(const ConstantMap &constants) {
    std::vector<aotc_constant_entry_t> entries;
    for (const auto &[name, tensor] : constants) {
      aotc_constant_entry_t e;
      std::memset(&e, 0, sizeof(e));
      e.name = name.c_str();
      e.tensor = toCTensor(tensor, name);
      entries.push_back(e);
    }
    return entries;
  }
  const detail::Library &lib() const {
    if (!lib_ || !container_)
      throw Error(AOTC_ERROR_INVALID_ARGUMENT, "aotc::Model is empty");
    return *lib_;
  }
  void reset() {
    if (lib_ && container_)
      lib_->aotc_container_delete(container_);
    container_ = nullptr;
    lib_.reset();
  }
  size_t count(aotc_container_count_fn fn) const {
    size_t n = 0;
    lib().check(fn(container_, &n), "introspection");
    return n;
  }
  std::string string(aotc_container_string_fn fn) const {
    const char *text = nullptr;
    lib().check(fn(container_, &text), "introspection");
    return text ? text : "";
  }
  std::vector<TensorInfo> tensorInfos(size_t n,
                                      aotc_container_input_info_fn fn) const {
    std::vector<TensorInfo> result;
    for (size_t i = 0; i < n; ++i) {
      aotc_tensor_info_t info;
      lib().check(fn(container_, i, &info), "tensor info");
      result.push_back(detail::toTensorInfo(info));
    }
    return result;
  }
  /// A view of \p t (its memory, not a copy's) for the C ABI.
  static aotc_tensor_t toCTensor(const HostTensor &t, const std::string &what) {
    if (t.rank() > AOTC_MAX_RANK)
      throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                  what + " has rank " + std::to_string(t.rank()) +
                      ", more than AOTC_MAX_RANK");
    aotc_tensor_t c;
    std::memset(&c, 0, sizeof(c));
    c.data = const_cast<void *>(t.raw());
    c.nbytes = t.nbytes();
    c.dtype = t.dtype();
    c.rank = static_cast<int32_t>(t.rank());
    for (int64_t d = 0; d < t.rank(); ++d)
      c.shape[d] = t.shape()[static_cast<size_t>(d)];
    return c;
  }
  static std::vector<aotc_tensor_t>
  toCTensors(const std::vector<HostTensor> &tensors) {
    std::vector<aotc_tensor_t> result;
    for (size_t i = 0; i < tensors.size(); ++i)
      result.push_back(toCTensor(tensors[i], "input " + std::to_string(i)));
    return result;
  }

  std::shared_ptr<detail::Library> lib_;
  aotc_container_t *container_ = nullptr;
};

} // namespace aotc

#endif // AOTC_RUNNER_HPP

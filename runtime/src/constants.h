/// \file
/// The constants lifecycle of a container: the active constant set that new
/// runs read, an optional inactive set that updates prepare, the swap
/// between them, and reading a set back.
///
/// A ConstantSet never changes once published: an update builds a new set
/// (sharing the unchanged device memory of the old one) and publishes it
/// under a short lock. A run holds the set it started with by shared_ptr
/// until its device work has finished, so a swap or an update never changes
/// what a run in flight reads, and memory is released only when the last run
/// that reads it is done.
#ifndef AOTC_RUNTIME_SRC_CONSTANTS_H
#define AOTC_RUNTIME_SRC_CONSTANTS_H

#include "aotc/aotc_runtime.h"
#include "aotc/model_desc.h"
#include "device.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace aotc::rt {

/// A reference-counted cl_mem (released with its last reference).
using MemRef = std::shared_ptr<std::remove_pointer_t<cl_mem>>;

/// A number no other AllocationId of the process has had: a copy gets a new
/// one. It names one allocation of device memory (a buffer, a constant set)
/// where a cl_mem handle cannot: a released handle's address may come back
/// for the next buffer (launch.cpp's argument cache keys on both).
class AllocationId {
public:
  AllocationId() : value_(next()) {}
  AllocationId(const AllocationId &) : value_(next()) {}
  AllocationId &operator=(const AllocationId &) {
    value_ = next();
    return *this;
  }
  uint64_t value() const { return value_; }
  void renew() { value_ = next(); }

private:
  static uint64_t next();
  uint64_t value_;
};

/// One set of the model's constants on the device.
struct ConstantSet {
  /// This set's (a copy of a set is another set, with its own id).
  AllocationId id;
  /// The compiled-in constants blob, shared by every set.
  MemRef blob;
  uint64_t blobBytes = 0;
  /// Per constant: its own buffer (an update's copy, or the caller's memory
  /// for a user-managed update), or null to read it from the blob.
  std::vector<MemRef> own;
  /// Per constant: the caller's host memory behind a user-managed buffer.
  std::vector<const void *> userData;
  /// Per updatable initializer (ConstantStore's target index) given by a
  /// user-managed update: the caller's memory, from which run_const_fold
  /// writes it again (and its packed copies, which hold no pointer to it).
  std::map<size_t, const void *> userSources;
  /// Per constant: 1 while its value is missing (a weightless .so before
  /// update); runs are refused until every one is given.
  std::vector<char> missing;
  size_t numMissing = 0;
};

/// Where a side file's bytes are (aotc_container_create_with_weights).
struct WeightsSource {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// Runs the model's folding program on a set whose computed constants have
/// fresh buffers and whose other constants are all present; returns when
/// the device has finished.
using FoldRunner = std::function<aotc_status_t(const ConstantSet &)>;

class ConstantStore {
public:
  ConstantStore() = default;
  ConstantStore(const ConstantStore &) = delete;
  ConstantStore &operator=(const ConstantStore &) = delete;
  ~ConstantStore() { release(); }
  /// Releases every set and the queue (before the context goes).
  void release();

  /// Uploads the blob of \p desc and indexes the updatable constants. A
  /// side file is read from \p weights (the caller's descriptor, range)
  /// when its fd is >= 0, else from beside the .so.
  aotc_status_t init(cl_context context, const DeviceInfo &device,
                     const AotcModelDesc &desc, const WeightsSource &weights);

  /// The folding program (set by the container, which then computes the
  /// first set's constants with runConstFold(false)).
  void setFoldRunner(FoldRunner runner) { foldRunner_ = std::move(runner); }

  /// The set new runs read (never null after init).
  std::shared_ptr<const ConstantSet> active() const;

  /// aotc_container_update_constants / _update_user_managed_constants.
  aotc_status_t update(const aotc_constant_entry_t *entries, size_t n,
                       bool useInactive, bool validateFull, bool userManaged);
  /// aotc_container_run_const_fold: a new version of the set with its
  /// computed constants recomputed (kept missing while a weight of the set
  /// is: a weightless model folds on the update that completes it).
  aotc_status_t runConstFold(bool useInactive);
  /// aotc_container_swap_constant_buffer.
  aotc_status_t swap();
  /// aotc_container_free_inactive_constant_buffer.
  aotc_status_t freeInactive();
  /// aotc_container_extract_constants.
  aotc_status_t extract(bool useInactive, aotc_constant_entry_t *out,
                        size_t capacity, size_t *outCount) const;
  /// Whether constant \p index can be updated; if not, why (a string that
  /// lives as long as the store).
  bool updatable(int32_t index, const char *&reason) const;
  /// The initializer that gives constant \p index its value when updated
  /// (itself, or the source of a packed copy), or its own name.
  const char *initializerOf(int32_t index) const;

private:
  /// What an update of one initializer writes: the constant kernels read
  /// as given, and the packed copies (folds) made from it.
  struct Target {
    const char *name = nullptr;
    int32_t direct = -1;        ///< constant number, or -1
    std::vector<int32_t> folds; ///< indices into desc.folds
    int32_t dtype = 0;
    int32_t rank = 0;
    const int64_t *shape = nullptr;
    uint64_t nbytes = 0;
  };

  aotc_status_t indexFolds();
  /// The target of \p name, or an error naming why \p name cannot be
  /// updated.
  aotc_status_t lookup(const char *name, size_t &target) const;
  aotc_status_t checkEntry(const aotc_constant_entry_t &e,
                           const Target &target) const;
  /// Copies \p bytes bytes at \p data to a new device buffer.
  aotc_status_t upload(const char *what, const void *data, uint64_t bytes,
                       bool useHostPtr, MemRef &out) const;
  aotc_status_t readBack(const ConstantSet &set, int32_t index,
                         void *data) const;
  /// Writes initializer \p target's value \p data into \p set: the
  /// constant kernels read (a copy, or with \p userManaged the caller's
  /// memory) and its packed copies (always copies).
  aotc_status_t write(ConstantSet &set, size_t target, const void *data,
                      bool userManaged) const;
  /// Gives \p set's computed constants fresh buffers and runs the folding
  /// program into them, unless some weight of \p set is still missing
  /// (then they stay missing). Runs in flight keep the buffers of the set
  /// they hold.
  aotc_status_t fold(ConstantSet &set) const;

  cl_context context_ = nullptr;
  const DeviceInfo *device_ = nullptr;
  const AotcModelDesc *desc_ = nullptr;
  /// Reads sets back (extract); used under updateMutex_.
  cl_command_queue queue_ = nullptr;
  /// The updatable initializers in the model's order (what extract lists).
  std::vector<Target> targets_;
  std::unordered_map<std::string, size_t> byName_;
  /// The constants the folding program computes.
  std::vector<int32_t> computed_;
  FoldRunner foldRunner_;
  /// Folded constant number -> why it cannot be given (a packed copy).
  std::unordered_map<int32_t, std::string> packedReason_;
  /// ONNX initializer name -> why its value is compiled in.
  std::unordered_map<std::string, std::string> frozen_;

  /// Serializes update, fold, swap, free and extract.
  mutable std::mutex updateMutex_;
  /// Guards active_ and inactive_ (held only to copy or replace them).
  mutable std::mutex setsMutex_;
  std::shared_ptr<const ConstantSet> active_;
  std::shared_ptr<const ConstantSet> inactive_;
};

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_CONSTANTS_H

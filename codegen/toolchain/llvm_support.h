/// \file
/// Internal helpers shared by the toolchain's three steps: one-time LLVM
/// target registration, crash recovery around clang and lld, and an output
/// stream that writes object files straight into a std::string.
///
/// Not part of the public interface: only codegen/toolchain/*.cpp include it.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace aotc::toolchain::detail {

/// Registers the X86 target, its MC layer and asm printer/parser with LLVM.
/// Thread-safe; does the work once per process.
void initializeX86Target();

/// Outcome of runWithCrashRecovery().
struct RecoveryResult {
  bool completed = true; ///< false: fn crashed or called Process::Exit
  int retCode = 0;       ///< exit code or 128 + signal number when !completed
};

/// Runs \p fn inside an llvm::CrashRecoveryContext. A crash (SIGSEGV, abort,
/// ...) on the calling thread, or an llvm::sys::Process::Exit() (lld's fatal
/// errors) returns instead of ending the process. The frames of \p fn are not
/// unwound in that case, so whatever it had allocated is leaked. Crash
/// recovery's signal handlers are installed only while at least one call is
/// in progress, so the host's own handlers are restored afterwards.
RecoveryResult runWithCrashRecovery(llvm::function_ref<void()> fn);

/// A buffered raw_pwrite_stream appending to a std::string, so that emitted
/// objects land in their final container without an extra copy.
class StringPWriteStream : public llvm::raw_pwrite_stream {
public:
  explicit StringPWriteStream(std::string &out);
  ~StringPWriteStream() override;

private:
  void write_impl(const char *ptr, size_t size) override;
  void pwrite_impl(const char *ptr, size_t size, uint64_t offset) override;
  uint64_t current_pos() const override;

  std::string &out_;
};

} // namespace aotc::toolchain::detail

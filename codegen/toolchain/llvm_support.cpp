/// \file
/// Target registration, crash recovery and the string output stream.

#include "codegen/toolchain/llvm_support.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>
#include <mutex>

namespace aotc::toolchain::detail {

void initializeX86Target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  });
}

namespace {

std::mutex recoveryMutex;
int recoveryUsers = 0;

} // namespace

RecoveryResult runWithCrashRecovery(llvm::function_ref<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(recoveryMutex);
    if (recoveryUsers++ == 0)
      llvm::CrashRecoveryContext::Enable();
  }
  RecoveryResult result;
  {
    llvm::CrashRecoveryContext context;
    result.completed = context.RunSafely(fn);
    result.retCode = context.RetCode;
  }
  {
    std::lock_guard<std::mutex> lock(recoveryMutex);
    if (--recoveryUsers == 0)
      llvm::CrashRecoveryContext::Disable();
  }
  return result;
}

StringPWriteStream::StringPWriteStream(std::string &out) : out_(out) {
  SetBufferSize(1 << 16);
}

StringPWriteStream::~StringPWriteStream() { flush(); }

void StringPWriteStream::write_impl(const char *ptr, size_t size) {
  out_.append(ptr, size);
}

void StringPWriteStream::pwrite_impl(const char *ptr, size_t size,
                                     uint64_t offset) {
  // pwrite may target bytes still in the buffer.
  flush();
  std::memcpy(&out_[offset], ptr, size);
}

uint64_t StringPWriteStream::current_pos() const { return out_.size(); }

} // namespace aotc::toolchain::detail

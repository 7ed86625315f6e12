/// \file
/// In-process linking through lld::elf::link.
///
/// lld 14 keeps its state in globals behind lld::CommonLinkerContext: one
/// link at a time per process, and the context must be destroyed after each
/// link (what lld's own safeLldMain does) or the next link starts from stale
/// state. lld's fatal errors end in llvm::sys::Process::Exit, which crash
/// recovery turns into a return here instead of an exit of the host process.

#include "codegen/toolchain/lld_link.h"

#include "codegen/toolchain/llvm_support.h"
#include "codegen/toolchain/toolchain_info.h"

#include "lld/Common/CommonLinkerContext.h"
#include "lld/Common/Driver.h"
#include "lld/Common/ErrorHandler.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>
#include <functional>
#include <mutex>
#include <system_error>

namespace fs = std::filesystem;

namespace aotc::toolchain {

namespace {

/// Serializes links: lld's state is process-global.
std::mutex lldMutex;
/// Set when lld crashed (a signal, not a fatal error) or could not clean up:
/// its memory may be corrupt, so it is not run again in this process.
bool lldUnusable = false;

std::string trimTrailingNewlines(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

Status checkInputs(const LinkOptions &opts) {
  if (opts.output.empty())
    return makeError("linking a shared object: no output path");
  if (opts.inputs.empty())
    return makeError("linking '", opts.output, "': no input files");
  std::vector<std::string> allInputs = opts.inputs;
  allInputs.insert(allInputs.end(), opts.wholeArchives.begin(),
                   opts.wholeArchives.end());
  for (const std::string &input : allInputs) {
    std::error_code ec;
    fs::file_status status = fs::status(input, ec);
    if (ec || !fs::exists(status))
      return makeError("linking '", opts.output, "': input '", input,
                       "' does not exist");
    if (fs::is_directory(status))
      return makeError("linking '", opts.output, "': input '", input,
                       "' is a directory");
  }
  return Status::ok();
}

std::vector<std::string> lldArgs(const LinkOptions &opts,
                                 const SystemLinkFiles &sys) {
  std::string soname = opts.soname.empty()
                           ? fs::path(opts.output).filename().string()
                           : opts.soname;
  std::vector<std::string> args = {
      "ld.lld", "-m", "elf_x86_64", "-shared", "-o", opts.output, "-soname",
      soname, "--hash-style=gnu", "--build-id", "--eh-frame-hdr", "-z", "now",
      // The runtime calls aotc_model_desc(); bind
      // it (and every own symbol) within this .so
      // even when another model is loaded
      // globally.
      "-Bsymbolic", "-z", "relro", "-z", "noexecstack", "-z",
      opts.allowUndefined ? "undefs" : "defs"};
  for (const std::string &dir : sys.librarySearchDirs)
    args.push_back("-L" + dir);
  if (!opts.versionScript.empty())
    args.push_back("--version-script=" + opts.versionScript);
  args.push_back(sys.crti);
  args.push_back(sys.crtbeginS);
  // Shared libraries after this point are recorded only if used.
  args.push_back("--as-needed");
  args.insert(args.end(), opts.inputs.begin(), opts.inputs.end());
  if (!opts.wholeArchives.empty()) {
    args.push_back("--whole-archive");
    args.insert(args.end(), opts.wholeArchives.begin(),
                opts.wholeArchives.end());
    args.push_back("--no-whole-archive");
  }
  for (const std::string *lib : {&sys.libOpenCL, &sys.libStdCxx, &sys.libM,
                                 &sys.libGccS, &sys.libGcc, &sys.libC})
    args.push_back(*lib);
  args.push_back("--no-as-needed");
  args.push_back(sys.crtendS);
  args.push_back(sys.crtn);
  return args;
}

/// Resets lld's global state so that the next link starts clean.
///
/// After a normal return this is CommonLinkerContext::destroy(), as lld's own
/// safeLldMain does. After a fatal error it cannot be: the longjmp out of lld
/// can leave an object half-constructed in one of the context's typed
/// allocators (e.g. an ObjFile whose constructor hit the error), and
/// destroying the context would run its destructor and crash. Then only the
/// ELF driver's globals are cleared (the cleanup callback the context would
/// have run) and the context is leaked; the next link creates a new one.
void resetLldState(bool afterFatal) {
  if (!lld::hasContext())
    return;
  if (!afterFatal) {
    lld::CommonLinkerContext::destroy();
    return;
  }
  lld::ErrorHandler &handler = lld::errorHandler();
  std::function<void()> cleanup = std::move(handler.cleanupCallback);
  handler.cleanupCallback = nullptr;
  if (cleanup)
    cleanup();
}

} // namespace

Status linkSharedObject(const LinkOptions &opts) {
  AOTC_RETURN_IF_ERROR(checkInputs(opts));
  const std::string context = "linking '" + opts.output + "'";
  Expected<SystemLinkFiles> sys = findSystemLinkFiles();
  if (!sys)
    return sys.status().withContext(context);
  std::vector<std::string> args = lldArgs(opts, *sys);
  std::vector<const char *> argv;
  argv.reserve(args.size());
  for (const std::string &arg : args)
    argv.push_back(arg.c_str());

  std::lock_guard<std::mutex> lock(lldMutex);
  if (lldUnusable)
    return makeError(context, ": the in-process linker crashed earlier in "
                              "this process and cannot be used again");
  std::string outText;
  std::string errText;
  llvm::raw_string_ostream outStream(outText);
  llvm::raw_string_ostream errStream(errText);
  bool linked = false;
  detail::RecoveryResult run = detail::runWithCrashRecovery([&] {
    linked = lld::elf::link(argv, outStream, errStream, /*exitEarly=*/false,
                            /*disableOutput=*/false);
  });
  // 128 + N means signal N: a real crash, memory may be corrupt. Anything
  // else is lld's fatal() (Process::Exit(1)).
  bool crashed = !run.completed && run.retCode >= 128;
  if (crashed) {
    lldUnusable = true;
  } else {
    detail::RecoveryResult cleanup = detail::runWithCrashRecovery(
        [&] { resetLldState(/*afterFatal=*/!run.completed); });
    if (!cleanup.completed)
      lldUnusable = true;
  }

  if (crashed)
    return makeError(context, ": lld crashed (signal ", run.retCode - 128,
                     ")\n", trimTrailingNewlines(errStream.str()));
  if (!run.completed || !linked) {
    std::string details = trimTrailingNewlines(errStream.str());
    if (details.empty())
      details = "lld reported no diagnostics";
    return makeError(context, " failed:\n", details);
  }
  return Status::ok();
}

} // namespace aotc::toolchain

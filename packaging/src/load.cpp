/// \file
/// aotc::Model::loadPackage: a model straight from its package, with no
/// file written. The .so is copied into an anonymous in-memory file
/// (memfd_create) and dlopen()ed through /proc/self/fd; the weights are
/// mapped by the runtime from the package file itself
/// (aotc_container_create_with_weights) at their entry's offset.
#include "aotc/package.hpp"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aotc {

Model Model::loadPackage(const std::string &path, const ModelOptions &options) {
  pkg::Package package = pkg::Package::open(path);
  package.checkLoadable();
  const pkg::Manifest &m = package.manifest();
  const pkg::ZipEntry *so = package.find("model");
  std::string where = path + "!" + so->name;
  std::string bytes = package.read(*so);
  // The .so itself must be for this host too (the manifest could lie).
  const auto *ehdr = reinterpret_cast<const Elf64_Ehdr *>(bytes.data());
  bool elfOk = bytes.size() >= sizeof(Elf64_Ehdr) &&
               std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) == 0 &&
               ehdr->e_ident[EI_CLASS] == ELFCLASS64;
#if defined(__x86_64__)
  elfOk = elfOk && ehdr->e_machine == EM_X86_64;
#elif defined(__aarch64__)
  elfOk = elfOk && ehdr->e_machine == EM_AARCH64;
#endif
  if (!elfOk)
    throw Error(AOTC_ERROR_UNSUPPORTED,
                "package '" + path + "': entry '" + so->name +
                    "' is not a shared object for " + pkg::hostArch());

  int memfd = memfd_create(("aotc:" + m.modelName).substr(0, 200).c_str(),
                           MFD_CLOEXEC);
  if (memfd < 0)
    throw Error(AOTC_ERROR_OUT_OF_MEMORY, "package '" + path +
                                              "': memfd_create: " +
                                              std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(memfd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      int e = errno;
      ::close(memfd);
      throw Error(AOTC_ERROR_OUT_OF_MEMORY,
                  "package '" + path + "': copying '" + so->name +
                      "' to memory: " + std::strerror(e));
    }
    done += static_cast<size_t>(w);
  }
  bytes = std::string(); // the copy in the memfd is the one that counts
  std::shared_ptr<detail::Library> lib;
  try {
    lib = detail::openLibrary(where,
                              "/proc/self/fd/" + std::to_string(memfd));
  } catch (...) {
    ::close(memfd);
    throw;
  }
  // Kept open while loaded (closed after dlclose): no other file takes the
  // descriptor number, and so the path, of a loaded library meanwhile.
  lib->fd = memfd;

  ModelOptions opts = options;
  if (const pkg::ZipEntry *w = package.find("weights")) {
    if (options.verifyWeights)
      package.verifyStored(*w);
    opts.weightsFd = package.fd();
    opts.weightsOffset = w->dataOffset;
    opts.weightsSize = w->size;
  }
  // The runtime maps the weights during create; the package file closes
  // when `package` goes.
  return create(std::move(lib), opts);
}

} // namespace aotc

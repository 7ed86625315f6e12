/// \file
/// readRegularFile (read_file.h).
#include "compiler/frontend/read_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aotc {

Expected<std::string> readRegularFile(const std::string &path,
                                      uint64_t maxBytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return makeError(path, ": cannot open file: ", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return makeError(path, ": cannot stat file: ", std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return makeError(path, ": is a directory, not a file");
  if (!S_ISREG(st.st_mode))
    return makeError(path, ": not a regular file (a FIFO, socket or device)");
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return makeError(path, ": file of ", st.st_size,
                     " bytes is larger than the limit of ", maxBytes, " bytes");
  // Back to blocking reads for the regular file.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, &bytes[done], bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return makeError(path, ": cannot read file: ", std::strerror(errno));
    if (n == 0) {
      bytes.resize(done); // shrank while being read
      break;
    }
    done += static_cast<size_t>(n);
  }
  return bytes;
}

} // namespace aotc

/// \file
/// The runtime's error reporting: a thread-local last-error message and the
/// status helpers every internal function uses. Nothing here throws.
#ifndef AOTC_RUNTIME_SRC_ERROR_H
#define AOTC_RUNTIME_SRC_ERROR_H

#include "aotc/aotc_runtime.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

namespace aotc::rt {

/// Records a printf-style message as the calling thread's last error and
/// returns \p status, so that `return fail(...)` reports and propagates.
aotc_status_t fail(aotc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// The calling thread's last error message.
const char *lastError();

/// Maps an OpenCL error code to its name ("CL_OUT_OF_RESOURCES").
const char *clErrorName(cl_int error);

/// Maps an OpenCL allocation error to AOTC_ERROR_OUT_OF_MEMORY and anything
/// else to AOTC_ERROR_DEVICE_ERROR.
aotc_status_t statusForClError(cl_int error);

/// Formats like printf into a std::string.
std::string formatString(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/// Returns from the enclosing function if \p expr yields a failed status.
#define AOTC_RT_RETURN_IF_ERROR(expr)                                          \
  do {                                                                         \
    aotc_status_t aotcStatus_ = (expr);                                        \
    if (aotcStatus_ != AOTC_OK)                                                \
      return aotcStatus_;                                                      \
  } while (false)

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_ERROR_H

/// \file
/// Thread-local error messages and OpenCL error names.
#include "error.h"

#include <cstdarg>
#include <cstdio>

namespace aotc::rt {
namespace {

/// A fixed buffer instead of a std::string: it needs no destructor, so the
/// model .so stays unloadable with dlclose() after threads used it.
constexpr size_t kMaxMessage = 16384;
thread_local char lastErrorMessage[kMaxMessage];

void vformatInto(char *buffer, size_t size, const char *format, va_list args) {
  int n = std::vsnprintf(buffer, size, format, args);
  if (n >= 0 && static_cast<size_t>(n) >= size && size > 16) {
    // Mark the truncation.
    std::snprintf(buffer + size - 16, 16, " [truncated]");
  }
}

} // namespace

aotc_status_t fail(aotc_status_t status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vformatInto(lastErrorMessage, kMaxMessage, fmt, args);
  va_end(args);
  return status;
}

const char *lastError() { return lastErrorMessage; }

std::string formatString(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string result;
  if (n > 0) {
    result.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(result.data(), result.size(), fmt, args);
    result.resize(static_cast<size_t>(n));
  }
  va_end(args);
  return result;
}

aotc_status_t statusForClError(cl_int error) {
  switch (error) {
  case CL_MEM_OBJECT_ALLOCATION_FAILURE:
  case CL_OUT_OF_RESOURCES:
  case CL_OUT_OF_HOST_MEMORY:
  case CL_INVALID_BUFFER_SIZE:
    return AOTC_ERROR_OUT_OF_MEMORY;
  default:
    return AOTC_ERROR_DEVICE_ERROR;
  }
}

const char *clErrorName(cl_int error) {
  switch (error) {
#define AOTC_CL_ERROR(name)                                                    \
  case name:                                                                   \
    return #name;
    AOTC_CL_ERROR(CL_SUCCESS)
    AOTC_CL_ERROR(CL_DEVICE_NOT_FOUND)
    AOTC_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    AOTC_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    AOTC_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    AOTC_CL_ERROR(CL_OUT_OF_RESOURCES)
    AOTC_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    AOTC_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    AOTC_CL_ERROR(CL_MEM_COPY_OVERLAP)
    AOTC_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    AOTC_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    AOTC_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    AOTC_CL_ERROR(CL_MAP_FAILURE)
    AOTC_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    AOTC_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    AOTC_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    AOTC_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    AOTC_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    AOTC_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    AOTC_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    AOTC_CL_ERROR(CL_INVALID_VALUE)
    AOTC_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    AOTC_CL_ERROR(CL_INVALID_PLATFORM)
    AOTC_CL_ERROR(CL_INVALID_DEVICE)
    AOTC_CL_ERROR(CL_INVALID_CONTEXT)
    AOTC_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    AOTC_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    AOTC_CL_ERROR(CL_INVALID_HOST_PTR)
    AOTC_CL_ERROR(CL_INVALID_MEM_OBJECT)
    AOTC_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    AOTC_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    AOTC_CL_ERROR(CL_INVALID_SAMPLER)
    AOTC_CL_ERROR(CL_INVALID_BINARY)
    AOTC_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    AOTC_CL_ERROR(CL_INVALID_PROGRAM)
    AOTC_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    AOTC_CL_ERROR(CL_INVALID_KERNEL_NAME)
    AOTC_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    AOTC_CL_ERROR(CL_INVALID_KERNEL)
    AOTC_CL_ERROR(CL_INVALID_ARG_INDEX)
    AOTC_CL_ERROR(CL_INVALID_ARG_VALUE)
    AOTC_CL_ERROR(CL_INVALID_ARG_SIZE)
    AOTC_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    AOTC_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    AOTC_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    AOTC_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    AOTC_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    AOTC_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    AOTC_CL_ERROR(CL_INVALID_EVENT)
    AOTC_CL_ERROR(CL_INVALID_OPERATION)
    AOTC_CL_ERROR(CL_INVALID_GL_OBJECT)
    AOTC_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    AOTC_CL_ERROR(CL_INVALID_MIP_LEVEL)
    AOTC_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    AOTC_CL_ERROR(CL_INVALID_PROPERTY)
    AOTC_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    AOTC_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    AOTC_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    AOTC_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef AOTC_CL_ERROR
  case -1001:
    return "CL_PLATFORM_NOT_FOUND_KHR";
  default:
    return "CL_UNKNOWN_ERROR";
  }
}

} // namespace aotc::rt

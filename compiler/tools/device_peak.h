/// \file
/// Measured FP32 FMA throughput and copy bandwidth of an OpenCL device.
#pragma once

#include "compiler/tools/profile_report.h"

#include <string>

namespace aotc::cli {

/// Measures the device whose "platform name / device name" is \p fullName
/// (what a container reports). Takes about a second on a CPU.
bool measureDevicePeak(const std::string &fullName, DevicePeak &out,
                       std::string &error);

} // namespace aotc::cli

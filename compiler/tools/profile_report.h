/// \file
/// `aotc run --profile`: the runs' profile records as a Chrome trace (for
/// Perfetto or chrome://tracing) and as a per-kernel table.
#pragma once

#include "aotc/aotc_runtime.h"

#include <string>
#include <vector>

namespace aotc::cli {

/// One run's records, with the host time (ns, any monotonic base) at which
/// the run was started.
struct ProfiledRun {
  uint64_t startNs = 0;
  std::vector<aotc_profile_record_t> records;
};

/// What the report needs to name things.
struct ProfileNames {
  std::vector<std::string> kernels;   ///< kernel names, by kernel number
  std::vector<std::string> summaries; ///< what each kernel computes
  std::vector<std::string> inputs, outputs;
};

/// The device's limits for the table's "% of peak" columns; 0 if unknown.
struct DevicePeak {
  double gflops = 0;
  double gbytesPerSecond = 0;
};

/// Writes a Chrome trace-event JSON file; false (with \p error) on failure.
bool writeChromeTrace(const std::string &path, const std::vector<ProfiledRun> &runs,
                      const ProfileNames &names, std::string &error);

/// Prints the per-kernel table (kernels and copies, with shares of the
/// device time that add up to 100%) and the per-run totals.
void printProfileTable(const std::vector<ProfiledRun> &runs,
                       const ProfileNames &names, const DevicePeak &peak);

} // namespace aotc::cli

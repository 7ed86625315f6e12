/// \file
/// `aotc run --profile` reports (profile_report.h).
#include "compiler/tools/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

namespace aotc::cli {

namespace {

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

/// A row of the table: one kernel, or the copies of one tensor.
struct Row {
  std::string label, what;
  int calls = 0;
  double ns = 0, flops = 0, bytes = 0;
};

std::string copyLabel(const aotc_profile_record_t &r, const ProfileNames &n) {
  bool in = r.kind == AOTC_PROFILE_COPY_IN;
  std::string dir = in ? "copy in " : "copy out ";
  if (r.index == -1)
    return dir + "(error record)";
  if (in && r.index <= -2)
    return dir + "(default #" + std::to_string(-2 - r.index) + ")";
  const std::vector<std::string> &names = in ? n.inputs : n.outputs;
  if (r.index >= 0 && static_cast<size_t>(r.index) < names.size())
    return dir + names[r.index];
  return dir + "#" + std::to_string(r.index);
}

std::string kernelLabel(int32_t k, const ProfileNames &n) {
  if (k >= 0 && static_cast<size_t>(k) < n.kernels.size())
    return n.kernels[k];
  return "kernel #" + std::to_string(k);
}

std::string kernelWhat(int32_t k, const ProfileNames &n) {
  if (k >= 0 && static_cast<size_t>(k) < n.summaries.size())
    return n.summaries[k];
  return "";
}

} // namespace

bool writeChromeTrace(const std::string &path,
                      const std::vector<ProfiledRun> &runs,
                      const ProfileNames &names, std::string &error) {
  uint64_t base = runs.empty() ? 0 : runs.front().startNs;
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
         "{\"name\": \"aotc\"}},\n";
  out += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
         "\"args\": {\"name\": \"host\"}},\n";
  out += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 2, "
         "\"args\": {\"name\": \"device\"}}";
  for (size_t i = 0; i < runs.size(); ++i) {
    uint64_t at = runs[i].startNs - base;
    for (const aotc_profile_record_t &r : runs[i].records) {
      double ts = (at + r.start_ns) / 1e3;
      double dur = (r.end_ns - r.start_ns) / 1e3;
      std::string name, cat, args;
      int tid = 2;
      switch (r.kind) {
      case AOTC_PROFILE_RUN:
        name = "run " + std::to_string(i);
        cat = "host";
        tid = 1;
        break;
      case AOTC_PROFILE_ENQUEUE:
        name = "enqueue kernels";
        cat = "host";
        tid = 1;
        break;
      case AOTC_PROFILE_KERNEL:
        name = kernelLabel(r.index, names);
        cat = "kernel";
        args = ", \"args\": {\"computes\": " +
               jsonString(kernelWhat(r.index, names)) +
               ", \"flops\": " + number(r.flops) +
               ", \"bytes\": " + number(r.bytes) + ", \"run\": " +
               std::to_string(i) + "}";
        break;
      default:
        name = copyLabel(r, names);
        cat = "copy";
        args = ", \"args\": {\"bytes\": " + number(r.bytes) +
               ", \"run\": " + std::to_string(i) + "}";
        break;
      }
      out += ",\n{\"name\": " + jsonString(name) + ", \"cat\": \"" + cat +
             "\", \"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
             ", \"ts\": " + number(ts) + ", \"dur\": " + number(dur) + args +
             "}";
    }
  }
  out += "\n]}\n";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    error = "cannot write '" + path + "'";
    return false;
  }
  f << out;
  f.close();
  if (!f) {
    error = "writing '" + path + "' failed";
    return false;
  }
  return true;
}

void printProfileTable(const std::vector<ProfiledRun> &runs,
                       const ProfileNames &names, const DevicePeak &peak) {
  if (runs.empty())
    return;
  std::vector<Row> rows;
  std::map<std::string, size_t> rowOf;
  double hostNs = 0, enqueueNs = 0, deviceNs = 0, kernelNs = 0;
  for (const ProfiledRun &run : runs) {
    for (const aotc_profile_record_t &r : run.records) {
      double ns = static_cast<double>(r.end_ns - r.start_ns);
      if (r.kind == AOTC_PROFILE_RUN) {
        hostNs += ns;
        continue;
      }
      if (r.kind == AOTC_PROFILE_ENQUEUE) {
        enqueueNs += ns;
        continue;
      }
      bool kernel = r.kind == AOTC_PROFILE_KERNEL;
      std::string label =
          kernel ? kernelLabel(r.index, names) : copyLabel(r, names);
      auto it = rowOf.find(label);
      if (it == rowOf.end()) {
        it = rowOf.emplace(label, rows.size()).first;
        rows.push_back(
            {label, kernel ? kernelWhat(r.index, names) : "", 0, 0, 0, 0});
      }
      Row &row = rows[it->second];
      ++row.calls;
      row.ns += ns;
      row.flops += r.flops;
      row.bytes += r.bytes;
      deviceNs += ns;
      if (kernel)
        kernelNs += ns;
    }
  }
  double n = static_cast<double>(runs.size());
  std::printf("profile: %zu run(s); per run: host %.3f ms (wrapper enqueue "
              "%.3f ms), device busy %.3f ms (kernels %.3f ms, copies %.3f "
              "ms)\n",
              runs.size(), hostNs / n / 1e6, enqueueNs / n / 1e6,
              deviceNs / n / 1e6, kernelNs / n / 1e6,
              (deviceNs - kernelNs) / n / 1e6);
  if (peak.gflops > 0 || peak.gbytesPerSecond > 0)
    std::printf("device peak (measured): %.1f GFLOP/s, %.1f GB/s\n",
                peak.gflops, peak.gbytesPerSecond);
  size_t labelW = 6, whatW = 8;
  for (const Row &r : rows) {
    labelW = std::max(labelW, r.label.size());
    whatW = std::max(whatW, std::min<size_t>(r.what.size(), 60));
  }
  std::printf("%-*s  %-*s %6s %10s %10s %6s %9s %8s", static_cast<int>(labelW),
              "kernel", static_cast<int>(whatW), "computes", "calls",
              "total ms", "mean ms", "share", "GOP/s", "GB/s");
  bool pct = peak.gflops > 0 && peak.gbytesPerSecond > 0;
  if (pct)
    std::printf(" %7s %7s", "%flops", "%bw");
  std::printf("\n");
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rows[a].ns > rows[b].ns; });
  double shareSum = 0;
  for (size_t i : order) {
    const Row &r = rows[i];
    double share = deviceNs > 0 ? 100.0 * r.ns / deviceNs : 0;
    shareSum += share;
    double gflops = r.ns > 0 ? r.flops / r.ns : 0;
    double gbs = r.ns > 0 ? r.bytes / r.ns : 0;
    std::string what = r.what.size() > 60 ? r.what.substr(0, 57) + "..." : r.what;
    std::printf("%-*s  %-*s %6d %10.3f %10.4f %5.1f%% %9.2f %8.2f",
                static_cast<int>(labelW), r.label.c_str(),
                static_cast<int>(whatW), what.c_str(), r.calls, r.ns / 1e6,
                r.ns / r.calls / 1e6, share, gflops, gbs);
    if (pct)
      std::printf(" %6.1f%% %6.1f%%", 100 * gflops / peak.gflops,
                  100 * gbs / peak.gbytesPerSecond);
    std::printf("\n");
  }
  std::printf("shares add up to %.1f%% of %.3f ms device time\n", shareSum,
              deviceNs / 1e6);
}

} // namespace aotc::cli

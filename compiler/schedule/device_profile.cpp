/// \file
/// DeviceProfile and KernelConfig: built-in profiles and JSON.
#include "compiler/schedule/device_profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace aotc {

namespace {

using nlohmann::json;

Expected<json> parseObject(const std::string &text, const char *what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    return makeError(what, ": not JSON: ", e.what());
  }
  if (!j.is_object())
    return makeError(what, ": expected a JSON object");
  return j;
}

/// Reads integer field \p key of \p j into \p out if present, within
/// [lo, hi].
Status readInt(const json &j, const std::string &key, int64_t lo, int64_t hi,
               const std::string &where, int64_t &out) {
  auto it = j.find(key);
  if (it == j.end())
    return Status::ok();
  if (!it->is_number_integer())
    return makeError(where, ": '", key, "' must be an integer");
  int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    return makeError(where, ": '", key, "' is ", v, ", expected ", lo, " to ",
                     hi);
  out = v;
  return Status::ok();
}

Status checkKeys(const json &j, const std::set<std::string> &known,
                 const std::string &where) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) {
      std::string list;
      for (const std::string &k : known)
        list += (list.empty() ? "" : ", ") + k;
      return makeError(where, ": unknown field '", it.key(), "' (known: ",
                       list, ")");
    }
  return Status::ok();
}

json profileObject(const DeviceProfile &p) {
  return json{{"name", p.name},
              {"family", p.family},
              {"vector_lanes", p.vectorLanes},
              {"vector_registers", p.vectorRegisters},
              {"accumulator_vectors", p.accumulatorVectors},
              {"conv_accumulator_vectors", p.convAccumulatorVectors},
              {"short_conv_accumulator_vectors", p.shortConvAccumulatorVectors},
              {"long_accumulator_vectors", p.longAccumulatorVectors},
              {"tile_columns", p.tileColumns},
              {"cache_bytes", p.cacheBytes},
              {"row_panels", p.rowPanels},
              {"winograd_min_channels", p.winogradMinChannels},
              {"compute_units", p.computeUnits},
              {"local_mem_bytes", p.localMemBytes},
              {"max_work_group_size", p.maxWorkGroupSize}};
}

json configObject(const KernelConfig &c) {
  json j{{"template", c.templ}, {"m", c.m},   {"n", c.n},
         {"tm", c.tm},          {"tn", c.tn}, {"lanes", c.lanes}};
  if (c.groupM > 0) {
    j["group_m"] = c.groupM;
    j["group_n"] = c.groupN;
    j["bk"] = c.bk;
    if (c.splitK > 1)
      j["split_k"] = c.splitK;
    if (c.gemmView)
      j["gemm_view"] = true;
  }
  if (c.groupReduce > 0)
    j["group_reduce"] = c.groupReduce;
  if (c.prefetch > 0)
    j["prefetch"] = c.prefetch;
  if (c.rowLoop >= 0) {
    j["row_loop"] = c.rowLoop;
    j["row_block"] = c.rowBlock;
  }
  if (c.prefetchNext)
    j["prefetch_next"] = 1;
  if (c.unroll > 1)
    j["unroll"] = c.unroll;
  if (c.indexBits > 0)
    j["index_bits"] = c.indexBits;
  return j;
}

Expected<KernelConfig> configFrom(const json &j, const std::string &where) {
  if (!j.is_object())
    return makeError(where, ": expected an object");
  AOTC_RETURN_IF_ERROR(
      checkKeys(j, {"template", "m", "n", "tm", "tn", "lanes", "group_m",
                    "group_n", "bk", "split_k", "group_reduce",
                    "gemm_view", "prefetch", "row_loop", "row_block",
                    "prefetch_next", "unroll", "index_bits"},
                where));
  KernelConfig c;
  if (auto t = j.find("template"); t != j.end()) {
    if (!t->is_string() || (*t != "pointwise" && *t != "reduction" &&
                            *t != "contraction" && *t != "row" &&
                            *t != "attention"))
      return makeError(where, ": 'template' must be pointwise, reduction, "
                              "contraction, row or attention");
    c.templ = t->get<std::string>();
  }
  int64_t m = -1, n = -1, lanes = 0;
  AOTC_RETURN_IF_ERROR(readInt(j, "m", -1, 64, where, m));
  AOTC_RETURN_IF_ERROR(readInt(j, "n", -1, 64, where, n));
  AOTC_RETURN_IF_ERROR(readInt(j, "tm", 1, 64, where, c.tm));
  AOTC_RETURN_IF_ERROR(readInt(j, "tn", 1, 64, where, c.tn));
  AOTC_RETURN_IF_ERROR(readInt(j, "lanes", 0, 16, where, lanes));
  AOTC_RETURN_IF_ERROR(readInt(j, "group_m", 0, 64, where, c.groupM));
  AOTC_RETURN_IF_ERROR(readInt(j, "group_n", 0, 64, where, c.groupN));
  AOTC_RETURN_IF_ERROR(readInt(j, "bk", 0, 64, where, c.bk));
  AOTC_RETURN_IF_ERROR(readInt(j, "split_k", 1, 16, where, c.splitK));
  AOTC_RETURN_IF_ERROR(
      readInt(j, "group_reduce", 0, 1024, where, c.groupReduce));
  int64_t prefetch = 0;
  AOTC_RETURN_IF_ERROR(readInt(j, "prefetch", 0, 8, where, prefetch));
  c.prefetch = static_cast<int>(prefetch);
  int64_t rowLoop = -1, rowBlock = 0;
  AOTC_RETURN_IF_ERROR(readInt(j, "row_loop", -1, 64, where, rowLoop));
  AOTC_RETURN_IF_ERROR(readInt(j, "row_block", 0, 64, where, rowBlock));
  if ((rowLoop >= 0) != (rowBlock > 0))
    return makeError(where, ": 'row_loop' and 'row_block' go together (a "
                            "row loop needs 1 or more reduction loops "
                            "outside its rows)");
  c.rowLoop = static_cast<int>(rowLoop);
  c.rowBlock = static_cast<int>(rowBlock);
  int64_t prefetchNext = 0;
  AOTC_RETURN_IF_ERROR(
      readInt(j, "prefetch_next", 0, 1, where, prefetchNext));
  c.prefetchNext = prefetchNext == 1;
  int64_t unroll = 1;
  AOTC_RETURN_IF_ERROR(readInt(j, "unroll", 1, kMaxWholeUnroll, where, unroll));
  c.unroll = static_cast<int>(unroll);
  int64_t indexBits = 0;
  AOTC_RETURN_IF_ERROR(readInt(j, "index_bits", 0, 64, where, indexBits));
  if (indexBits != 0 && indexBits != 32 && indexBits != 64)
    return makeError(where, ": 'index_bits' must be 32 or 64");
  c.indexBits = static_cast<int>(indexBits);
  if (c.groupReduce > 0 &&
      ((c.groupReduce & (c.groupReduce - 1)) != 0 || c.groupReduce < 2 ||
       c.n >= 0 || c.groupM > 0))
    return makeError(where, ": 'group_reduce' is a power of 2 from 2 to "
                            "1024 work-items per output, without a tile "
                            "(n = -1)");
  if (auto v = j.find("gemm_view"); v != j.end()) {
    if (!v->is_boolean())
      return makeError(where, ": 'gemm_view' must be true or false");
    c.gemmView = v->get<bool>();
  }
  c.m = static_cast<int>(m);
  c.n = static_cast<int>(n);
  c.lanes = static_cast<int>(lanes);
  if ((c.groupM > 0) != (c.groupN > 0) || (c.groupM > 0) != (c.bk > 0))
    return makeError(where, ": 'group_m', 'group_n' and 'bk' go together "
                            "(a work-group tile), all above 0 or all 0");
  if (c.groupM > 0) {
    if (c.m < 0 || c.n < 0 || c.tn % 4 != 0 || c.lanes != 4)
      return makeError(where, ": a work-group tile needs dimensions 'm' and "
                              "'n', 'tn' a multiple of 4 and 'lanes' 4");
    int64_t items = c.groupM * c.groupN;
    if (items * c.splitK > 1024 ||
        !groupBlocksDivide(c.groupM, c.groupN, c.tm, c.tn, c.bk))
      return makeError(where, ": a work-group of ", c.groupM, " x ",
                       c.groupN, " work-items (times split_k ", c.splitK,
                       ") must be at most 1024 and divide each operand's "
                       "block (", c.groupM * c.tm, " x ", c.bk, " and ",
                       c.bk, " x ", c.groupN * c.tn, ")");
  } else if (c.splitK != 1) {
    return makeError(where, ": 'split_k' needs a work-group tile");
  } else if (c.gemmView) {
    return makeError(where, ": 'gemm_view' needs a work-group tile");
  }
  if (lanes != 0 && lanes != 4 && lanes != 8 && lanes != 16)
    return makeError(where, ": 'lanes' is ", lanes,
                     ", expected 0 (scalar), 4, 8 or 16");
  if (c.m >= 0 && c.m == c.n)
    return makeError(where, ": 'm' and 'n' are both dimension ", c.m);
  // (An attention work-group's tm is its rows per work-item.)
  if (c.m < 0 && c.tm != 1 && !(c.templ == "attention" && c.groupReduce > 0))
    return makeError(where, ": 'tm' is ", c.tm, " without a dimension 'm'");
  if (c.n < 0 && (c.m >= 0 || c.tn != 1))
    return makeError(where, ": an untiled kernel (n = -1) takes no 'm' "
                            "and 'tn' of 1");
  if (c.tm * c.tn > 512)
    return makeError(where, ": a tile of ", c.tm, " x ", c.tn,
                     " outputs is more than 512");
  return c;
}

} // namespace

bool groupBlocksDivide(int64_t groupM, int64_t groupN, int64_t tm, int64_t tn,
                       int64_t bk) {
  const int64_t items = groupM * groupN;
  return items > 0 && (groupM * tm * bk) % items == 0 &&
         (groupN * tn * bk) % items == 0;
}

int explicitVectorLanes(const DeviceProfile &p) {
  return p.vectorLanes >= 4 ? static_cast<int>(std::min<int64_t>(p.vectorLanes, 16))
                            : 0;
}

int64_t channelBlockFor(int64_t channels, int64_t block) {
  if (block <= 0 || channels <= 0)
    return 0;
  if (channels % block == 0)
    return block;
  const int64_t vector = block / 2;
  return vector >= 8 && channels % vector == 0 ? vector : 0;
}

bool rowPanelsForL1(int64_t l1DataBytes) {
  constexpr int64_t kInPlaceL1Bytes = int64_t{48} << 10;
  return l1DataBytes < kInPlaceL1Bytes; // 0, unknown, is below
}

Expected<DeviceProfile> builtinDeviceProfile(const std::string &name) {
  DeviceProfile p;
  if (name == "generic-avx2")
    return p;
  p.name = name;
  if (name == "generic-avx512") {
    p.vectorLanes = 16;
    p.vectorRegisters = 32;
    p.longAccumulatorVectors = 24;
    p.convAccumulatorVectors = 28;
    p.tileColumns = 64;
    return p;
  }
  if (name == "zen5-avx512") {
    p.vectorLanes = 16;
    p.vectorRegisters = 32;
    p.accumulatorVectors = 16;
    p.convAccumulatorVectors = 28;
    p.shortConvAccumulatorVectors = 8;
    p.rowPanels = false;
    p.winogradMinChannels = 128;
    return p;
  }
  if (name == "generic-gpu") {
    p.family = "gpu";
    p.vectorLanes = 1;
    p.vectorRegisters = 0;
    return p;
  }
  return makeError("unknown device profile '", name,
                   "' (built in: generic-avx2, generic-avx512, zen5-avx512, "
                   "generic-gpu; "
                   "or a JSON file from `aotc devices --profile`)");
}

std::string deviceProfileJson(const DeviceProfile &p, bool pretty) {
  return profileObject(p).dump(pretty ? 2 : -1);
}

Expected<DeviceProfile> parseDeviceProfile(const std::string &text) {
  AOTC_ASSIGN_OR_RETURN(json j, parseObject(text, "device profile"));
  const std::string where = "device profile";
  AOTC_RETURN_IF_ERROR(checkKeys(
      j,
      {"name", "family", "vector_lanes", "vector_registers",
       "accumulator_vectors", "conv_accumulator_vectors",
       "long_accumulator_vectors", "tile_columns", "cache_bytes", "row_panels",
       "winograd_min_channels", "short_conv_accumulator_vectors",
       "compute_units", "local_mem_bytes", "max_work_group_size"},
      where));
  DeviceProfile p;
  if (auto it = j.find("name"); it != j.end()) {
    if (!it->is_string())
      return makeError(where, ": 'name' must be a string");
    p.name = it->get<std::string>();
  }
  if (auto it = j.find("family"); it != j.end()) {
    if (!it->is_string() || (*it != "cpu" && *it != "gpu"))
      return makeError(where, ": 'family' must be \"cpu\" or \"gpu\"");
    p.family = it->get<std::string>();
  }
  AOTC_RETURN_IF_ERROR(readInt(j, "vector_lanes", 1, 16, where, p.vectorLanes));
  if (p.vectorLanes & (p.vectorLanes - 1))
    return makeError(where, ": 'vector_lanes' is ", p.vectorLanes,
                     ", expected 1, 2, 4, 8 or 16");
  AOTC_RETURN_IF_ERROR(
      readInt(j, "vector_registers", 0, 256, where, p.vectorRegisters));
  AOTC_RETURN_IF_ERROR(readInt(j, "accumulator_vectors", 0, 64, where,
                               p.accumulatorVectors));
  AOTC_RETURN_IF_ERROR(readInt(j, "conv_accumulator_vectors", 0, 64, where,
                               p.convAccumulatorVectors));
  AOTC_RETURN_IF_ERROR(readInt(j, "long_accumulator_vectors", 0, 64, where,
                               p.longAccumulatorVectors));
  AOTC_RETURN_IF_ERROR(readInt(j, "short_conv_accumulator_vectors", 0, 64,
                               where, p.shortConvAccumulatorVectors));
  AOTC_RETURN_IF_ERROR(readInt(j, "tile_columns", 0, 64, where, p.tileColumns));
  if (p.tileColumns & (p.tileColumns - 1))
    return makeError(where, ": 'tile_columns' is ", p.tileColumns,
                     ", expected 0 (32) or a power of 2 up to 64");
  AOTC_RETURN_IF_ERROR(
      readInt(j, "cache_bytes", 0, int64_t{1} << 40, where, p.cacheBytes));
  if (auto it = j.find("row_panels"); it != j.end()) {
    if (!it->is_boolean())
      return makeError(where, ": 'row_panels' must be true or false");
    p.rowPanels = it->get<bool>();
  }
  AOTC_RETURN_IF_ERROR(readInt(j, "winograd_min_channels", 0, 1 << 20, where,
                               p.winogradMinChannels));
  AOTC_RETURN_IF_ERROR(
      readInt(j, "compute_units", 0, 1 << 20, where, p.computeUnits));
  AOTC_RETURN_IF_ERROR(
      readInt(j, "local_mem_bytes", 0, int64_t{1} << 40, where, p.localMemBytes));
  AOTC_RETURN_IF_ERROR(readInt(j, "max_work_group_size", 0, 1 << 20, where,
                               p.maxWorkGroupSize));
  return p;
}

std::string kernelConfigJson(const KernelConfig &c) {
  return configObject(c).dump();
}

Expected<KernelConfig> parseKernelConfig(const std::string &text) {
  AOTC_ASSIGN_OR_RETURN(json j, parseObject(text, "kernel config"));
  return configFrom(j, "kernel config");
}

std::string kernelConfigsJson(const KernelConfigs &configs, bool pretty) {
  json kernels = json::object();
  for (const auto &[name, c] : configs)
    kernels[name] = configObject(c);
  return json{{"kernels", kernels}}.dump(pretty ? 2 : -1);
}

Expected<KernelConfigs> parseKernelConfigs(const std::string &text) {
  AOTC_ASSIGN_OR_RETURN(json j, parseObject(text, "kernel configs"));
  AOTC_RETURN_IF_ERROR(checkKeys(j, {"kernels"}, "kernel configs"));
  KernelConfigs out;
  auto ks = j.find("kernels");
  if (ks == j.end())
    return out;
  if (!ks->is_object())
    return makeError("kernel configs: 'kernels' must be an object of kernel "
                     "name to configuration");
  for (auto it = ks->begin(); it != ks->end(); ++it) {
    AOTC_ASSIGN_OR_RETURN(
        KernelConfig c,
        configFrom(*it, "kernel configs: kernel '" + it.key() + "'"));
    out[it.key()] = c;
  }
  return out;
}

} // namespace aotc

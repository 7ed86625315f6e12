/// \file
/// manifest.json: writing and strict reading (every field checked for
/// presence and type; a newer format version is refused by number).
#include "aotc/package.hpp"

#include <nlohmann/json.hpp>

namespace aotc::pkg {
namespace {

using json = nlohmann::ordered_json;

constexpr int kMaxDepth = 32;

/// Field access that names the field in its error.
struct Reader {
  std::string where;

  [[noreturn]] void fail(const std::string &field,
                         const std::string &what) const {
    throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                where + ": field '" + field + "' " + what);
  }
  const json &at(const json &obj, const std::string &key,
                 const std::string &path) const {
    if (!obj.is_object())
      fail(path, "is not an object");
    auto it = obj.find(key);
    if (it == obj.end())
      fail(path.empty() ? key : path + "." + key, "is missing");
    return *it;
  }
  std::string str(const json &obj, const std::string &key,
                  const std::string &path) const {
    const json &v = at(obj, key, path);
    if (!v.is_string())
      fail(path.empty() ? key : path + "." + key, "is not a string");
    return v.get<std::string>();
  }
  int64_t integer(const json &obj, const std::string &key,
                  const std::string &path) const {
    const json &v = at(obj, key, path);
    if (!v.is_number_integer())
      fail(path.empty() ? key : path + "." + key, "is not an integer");
    return v.get<int64_t>();
  }
  uint64_t count(const json &obj, const std::string &key,
                 const std::string &path) const {
    const json &v = at(obj, key, path);
    if (!v.is_number_unsigned())
      fail(path.empty() ? key : path + "." + key,
           "is not a non-negative integer");
    return v.get<uint64_t>();
  }
  const json &array(const json &obj, const std::string &key,
                    const std::string &path) const {
    const json &v = at(obj, key, path);
    if (!v.is_array())
      fail(path.empty() ? key : path + "." + key, "is not an array");
    return v;
  }
  std::vector<TensorSpec> tensors(const json &obj, const std::string &key,
                                  const std::string &path) const {
    std::vector<TensorSpec> out;
    const json &list = array(obj, key, path);
    for (size_t i = 0; i < list.size(); ++i) {
      std::string p = path + "." + key + "[" + std::to_string(i) + "]";
      TensorSpec t;
      t.name = str(list[i], "name", p);
      t.dtype = str(list[i], "dtype", p);
      const json &shape = array(list[i], "shape", p);
      for (const json &d : shape) {
        if (!d.is_string())
          fail(p + ".shape", "holds a non-string dim");
        t.shape.push_back(d.get<std::string>());
      }
      out.push_back(std::move(t));
    }
    return out;
  }
};

json tensorsJson(const std::vector<TensorSpec> &tensors) {
  json list = json::array();
  for (const TensorSpec &t : tensors)
    list.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
  return list;
}

} // namespace

const ManifestEntry *Manifest::entry(const std::string &role) const {
  for (const ManifestEntry &e : entries)
    if (e.role == role)
      return &e;
  return nullptr;
}

std::string Manifest::toJson() const {
  json j;
  j["format_version"] = formatVersion;
  j["aotc_version"] = aotcVersion;
  j["target"] = {{"arch", arch},
                 {"os", os},
                 {"abi_version", abiVersion},
                 {"model_desc_version", descVersion}};
  json profile = json::object();
  if (!deviceProfile.empty()) {
    try {
      profile = json::parse(deviceProfile);
    } catch (const json::exception &e) {
      throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                  std::string("manifest: the device profile is not JSON: ") +
                      e.what());
    }
  }
  json binaries = json::array();
  for (const ProgramBinarySpec &b : programBinaries)
    binaries.push_back(
        {{"description", b.description}, {"device_key", b.deviceKey}});
  j["device"] = {{"profile_name", deviceProfileName},
                 {"profile", profile},
                 {"extensions", deviceExtensions},
                 {"program_binaries", binaries}};
  json symbolList = json::array();
  for (const SymbolSpec &s : symbols)
    symbolList.push_back({{"name", s.name}, {"min", s.min}, {"max", s.max}});
  j["model"] = {{"name", modelName},
                {"inputs", tensorsJson(inputs)},
                {"outputs", tensorsJson(outputs)},
                {"symbols", symbolList},
                {"constants", numConstants},
                {"constants_bytes", constantsBytes},
                {"weights", weights}};
  json entryList = json::array();
  for (const ManifestEntry &e : entries)
    entryList.push_back({{"name", e.name},
                         {"role", e.role},
                         {"size", e.size},
                         {"crc32", e.crc32}});
  j["entries"] = entryList;
  return j.dump(2) + "\n";
}

Manifest Manifest::fromJson(const std::string &text, const std::string &where) {
  // A manifest is shallow; a deeply nested one is refused before parsing
  // (printing or comparing it would recurse as deep).
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                    where + ": nested deeper than " +
                        std::to_string(kMaxDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception &e) {
    throw Error(AOTC_ERROR_INVALID_ARGUMENT,
                where + ": not valid JSON: " + e.what());
  }
  Reader r{where};
  if (!j.is_object())
    r.fail("(top)", "is not an object");
  Manifest m;
  int64_t format = r.integer(j, "format_version", "");
  if (format < 1)
    r.fail("format_version", "is " + std::to_string(format));
  if (format > kFormatVersion)
    throw Error(AOTC_ERROR_UNSUPPORTED,
                where + ": package format version " + std::to_string(format) +
                    " is newer than this aotc reads (version " +
                    std::to_string(kFormatVersion) + ")");
  m.formatVersion = static_cast<int>(format);
  m.aotcVersion = r.str(j, "aotc_version", "");
  const json &target = r.at(j, "target", "");
  m.arch = r.str(target, "arch", "target");
  m.os = r.str(target, "os", "target");
  uint64_t abi = r.count(target, "abi_version", "target");
  uint64_t desc = r.count(target, "model_desc_version", "target");
  if (abi > UINT32_MAX || desc > UINT32_MAX)
    r.fail("target", "holds a version out of range");
  m.abiVersion = static_cast<uint32_t>(abi);
  m.descVersion = static_cast<uint32_t>(desc);
  const json &device = r.at(j, "device", "");
  m.deviceProfileName = r.str(device, "profile_name", "device");
  const json &profile = r.at(device, "profile", "device");
  if (!profile.is_object())
    r.fail("device.profile", "is not an object");
  m.deviceProfile = profile.dump();
  for (const json &e : r.array(device, "extensions", "device")) {
    if (!e.is_string())
      r.fail("device.extensions", "holds a non-string");
    m.deviceExtensions.push_back(e.get<std::string>());
  }
  // Optional: packages of format 1 written before it have none.
  if (device.contains("program_binaries")) {
    const json &list = r.array(device, "program_binaries", "device");
    if (list.size() > kMaxEntries)
      r.fail("device.program_binaries",
             "lists more than " + std::to_string(kMaxEntries));
    for (size_t i = 0; i < list.size(); ++i) {
      std::string p = "device.program_binaries[" + std::to_string(i) + "]";
      ProgramBinarySpec b;
      b.description = r.str(list[i], "description", p);
      b.deviceKey = r.str(list[i], "device_key", p);
      m.programBinaries.push_back(std::move(b));
    }
  }
  const json &model = r.at(j, "model", "");
  m.modelName = r.str(model, "name", "model");
  m.inputs = r.tensors(model, "inputs", "model");
  m.outputs = r.tensors(model, "outputs", "model");
  const json &syms = r.array(model, "symbols", "model");
  for (size_t i = 0; i < syms.size(); ++i) {
    std::string p = "model.symbols[" + std::to_string(i) + "]";
    SymbolSpec s;
    s.name = r.str(syms[i], "name", p);
    s.min = r.integer(syms[i], "min", p);
    s.max = r.integer(syms[i], "max", p);
    m.symbols.push_back(std::move(s));
  }
  m.numConstants = static_cast<int64_t>(r.count(model, "constants", "model"));
  m.constantsBytes = r.count(model, "constants_bytes", "model");
  m.weights = r.str(model, "weights", "model");
  if (m.weights != "side-file" && m.weights != "embedded" &&
      m.weights != "weightless")
    r.fail("model.weights",
           "is '" + m.weights + "' (expected side-file, embedded or "
                                "weightless)");
  const json &entries = r.array(j, "entries", "");
  if (entries.size() > kMaxEntries)
    r.fail("entries", "lists more than " + std::to_string(kMaxEntries));
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string p = "entries[" + std::to_string(i) + "]";
    ManifestEntry e;
    e.name = r.str(entries[i], "name", p);
    e.role = r.str(entries[i], "role", p);
    if (e.role != "model" && e.role != "weights" && e.role != "source")
      r.fail(p + ".role", "is '" + e.role +
                              "' (expected model, weights or source)");
    e.size = r.count(entries[i], "size", p);
    uint64_t crc = r.count(entries[i], "crc32", p);
    if (crc > UINT32_MAX)
      r.fail(p + ".crc32", "is out of range");
    e.crc32 = static_cast<uint32_t>(crc);
    m.entries.push_back(std::move(e));
  }
  return m;
}

} // namespace aotc::pkg

/// \file
/// TensorProto reading, random tensors and tolerant comparison.
#include "compiler/tools/tensor_io.h"

#include "compiler/frontend/external_data.h"
#include "compiler/frontend/onnx_internal.h"
#include "compiler/frontend/read_file.h"
#include "ir/half.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace aotc::cli {

Expected<aotc::HostTensor> readTensorFile(const std::string &path) {
  AOTC_ASSIGN_OR_RETURN(std::string bytes,
                        readRegularFile(path, kMaxProtobufBytes));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return makeError(path, ": not a valid TensorProto");
  auto converted = onnx_import::convertTensor(proto, nullptr);
  if (!converted)
    return converted.status().withContext(path);
  const auto &[type, data] = *converted;
  aotc::HostTensor t(static_cast<aotc_dtype_t>(type.dtype), type.staticDims());
  if (t.nbytes() != static_cast<size_t>(data.size()))
    return makeError(path, ": tensor holds ", data.size(), " bytes, expected ",
                     t.nbytes());
  if (t.nbytes())
    std::memcpy(t.raw(), data.data(), t.nbytes());
  return t;
}

namespace {

Expected<aotc::HostTensor> toHostTensor(const onnx::TensorProto &proto,
                                        onnx_import::ExternalData *external,
                                        const std::string &where) {
  auto converted = onnx_import::convertTensor(proto, external);
  if (!converted)
    return converted.status().withContext(where);
  const auto &[type, data] = *converted;
  aotc::HostTensor t(static_cast<aotc_dtype_t>(type.dtype), type.staticDims());
  if (t.nbytes() != static_cast<size_t>(data.size()))
    return makeError(where, ": tensor holds ", data.size(),
                     " bytes, expected ", t.nbytes());
  if (t.nbytes())
    std::memcpy(t.raw(), data.data(), t.nbytes());
  return t;
}

} // namespace

Expected<std::map<std::string, aotc::HostTensor>>
readInitializers(const std::string &path) {
  std::map<std::string, aotc::HostTensor> result;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto &entry : std::filesystem::directory_iterator(path, ec))
      if (entry.path().extension() == ".pb")
        files.push_back(entry.path());
    if (ec)
      return makeError(path, ": ", ec.message());
    std::sort(files.begin(), files.end());
    for (const auto &f : files) {
      AOTC_ASSIGN_OR_RETURN(std::string bytes,
                            readRegularFile(f.string(), kMaxProtobufBytes));
      onnx::TensorProto proto;
      if (!proto.ParseFromString(bytes))
        return makeError(f.string(), ": not a valid TensorProto");
      std::string name =
          proto.name().empty() ? f.stem().string() : proto.name();
      AOTC_ASSIGN_OR_RETURN(aotc::HostTensor t,
                            toHostTensor(proto, nullptr, f.string()));
      if (!result.emplace(name, std::move(t)).second)
        return makeError(f.string(), ": tensor '", name, "' is given twice");
    }
    if (result.empty())
      return makeError(path, ": no .pb tensor files");
    return result;
  }
  AOTC_ASSIGN_OR_RETURN(std::string bytes,
                        readRegularFile(path, kMaxProtobufBytes));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return makeError(path, ": not a valid ONNX model");
  onnx_import::ExternalData external(
      std::filesystem::path(path).parent_path().string());
  for (const onnx::TensorProto &init : model.graph().initializer()) {
    AOTC_ASSIGN_OR_RETURN(
        aotc::HostTensor t,
        toHostTensor(init, &external,
                     path + ": initializer '" + init.name() + "'"));
    if (!result.emplace(init.name(), std::move(t)).second)
      return makeError(path, ": initializer '", init.name(),
                       "' is defined twice");
  }
  return result;
}

aotc::HostTensor randomTensor(aotc_dtype_t dtype, std::vector<int64_t> shape,
                              uint64_t seed) {
  aotc::HostTensor t(dtype, std::move(shape));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(-5, 5);
  int64_t n = t.numel();
  auto *bytes = static_cast<uint8_t *>(t.raw());
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case AOTC_DTYPE_FLOAT32:
      reinterpret_cast<float *>(bytes)[i] = (float)normal(rng);
      break;
    case AOTC_DTYPE_FLOAT64:
      reinterpret_cast<double *>(bytes)[i] = normal(rng);
      break;
    case AOTC_DTYPE_FLOAT16:
      reinterpret_cast<uint16_t *>(bytes)[i] =
          aotc::floatToHalf((float)normal(rng));
      break;
    case AOTC_DTYPE_BFLOAT16:
      reinterpret_cast<uint16_t *>(bytes)[i] =
          aotc::floatToBfloat16((float)normal(rng));
      break;
    case AOTC_DTYPE_INT64:
      reinterpret_cast<int64_t *>(bytes)[i] = small(rng);
      break;
    case AOTC_DTYPE_INT32:
      reinterpret_cast<int32_t *>(bytes)[i] = small(rng);
      break;
    case AOTC_DTYPE_INT8:
      reinterpret_cast<int8_t *>(bytes)[i] = (int8_t)small(rng);
      break;
    case AOTC_DTYPE_INT16:
      reinterpret_cast<int16_t *>(bytes)[i] = (int16_t)small(rng);
      break;
    case AOTC_DTYPE_UINT8:
      bytes[i] = (uint8_t)(small(rng) + 5);
      break;
    case AOTC_DTYPE_UINT16:
      reinterpret_cast<uint16_t *>(bytes)[i] = (uint16_t)(small(rng) + 5);
      break;
    case AOTC_DTYPE_UINT32:
      reinterpret_cast<uint32_t *>(bytes)[i] = (uint32_t)(small(rng) + 5);
      break;
    case AOTC_DTYPE_BOOL:
      bytes[i] = (uint8_t)(small(rng) > 0);
      break;
    }
  }
  return t;
}

bool isFloatDtype(aotc_dtype_t dtype) {
  return aotc::isFloat(static_cast<aotc::DType>(dtype));
}

namespace {

/// An integer element exactly (a double holds only 53 bits of an int64).
int64_t elementAsInt64(const aotc::HostTensor &t, int64_t i) {
  const auto *b = static_cast<const uint8_t *>(t.raw());
  switch (t.dtype()) {
  case AOTC_DTYPE_INT64:
    return reinterpret_cast<const int64_t *>(b)[i];
  case AOTC_DTYPE_INT32:
    return reinterpret_cast<const int32_t *>(b)[i];
  case AOTC_DTYPE_UINT32:
    return reinterpret_cast<const uint32_t *>(b)[i];
  case AOTC_DTYPE_INT16:
    return reinterpret_cast<const int16_t *>(b)[i];
  case AOTC_DTYPE_UINT16:
    return reinterpret_cast<const uint16_t *>(b)[i];
  case AOTC_DTYPE_INT8:
    return reinterpret_cast<const int8_t *>(b)[i];
  case AOTC_DTYPE_UINT8:
  case AOTC_DTYPE_BOOL:
    return b[i];
  case AOTC_DTYPE_FLOAT32:
    return static_cast<int64_t>(reinterpret_cast<const float *>(b)[i]);
  case AOTC_DTYPE_FLOAT64:
    return static_cast<int64_t>(reinterpret_cast<const double *>(b)[i]);
  case AOTC_DTYPE_FLOAT16:
    return static_cast<int64_t>(
        aotc::halfToFloat(reinterpret_cast<const uint16_t *>(b)[i]));
  case AOTC_DTYPE_BFLOAT16:
    return static_cast<int64_t>(
        aotc::bfloat16ToFloat(reinterpret_cast<const uint16_t *>(b)[i]));
  }
  // Every dtype of the C ABI is listed above; a new one must be added here
  // (comparing its bytes one by one would check only part of each element).
  std::abort();
}

double elementAsDouble(const aotc::HostTensor &t, int64_t i) {
  const auto *b = static_cast<const uint8_t *>(t.raw());
  switch (t.dtype()) {
  case AOTC_DTYPE_FLOAT32:
    return reinterpret_cast<const float *>(b)[i];
  case AOTC_DTYPE_FLOAT64:
    return reinterpret_cast<const double *>(b)[i];
  case AOTC_DTYPE_FLOAT16:
    return aotc::halfToFloat(reinterpret_cast<const uint16_t *>(b)[i]);
  case AOTC_DTYPE_BFLOAT16:
    return aotc::bfloat16ToFloat(reinterpret_cast<const uint16_t *>(b)[i]);
  default:
    return static_cast<double>(elementAsInt64(t, i));
  }
}

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

} // namespace

std::string describeTensor(const aotc::HostTensor &t, size_t maxValues) {
  std::ostringstream os;
  os << aotc::dtypeName(t.dtype()) << shapeText(t.shape());
  int64_t n = t.numel();
  for (int64_t i = 0; i < n && i < (int64_t)maxValues; ++i)
    os << " " << elementAsDouble(t, i);
  if (n > (int64_t)maxValues)
    os << " ...";
  return os.str();
}

Comparison compareTensors(const aotc::HostTensor &got,
                          const aotc::HostTensor &want, double rtol,
                          double atol) {
  Comparison c;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    c.ok = false;
    c.message = std::string("got ") + aotc::dtypeName(got.dtype()) +
                shapeText(got.shape()) + ", expected " +
                aotc::dtypeName(want.dtype()) + shapeText(want.shape());
    return c;
  }
  bool flt = isFloatDtype(got.dtype());
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (!flt) { // integers and bools: exactly
      int64_t gi = elementAsInt64(got, i), wi = elementAsInt64(want, i);
      if (gi != wi && c.ok) {
        c.ok = false;
        c.worstIndex = i;
        c.worstError = std::fabs(static_cast<double>(gi) - wi);
        c.message = "element " + std::to_string(i) + ": got " +
                    std::to_string(gi) + ", expected " + std::to_string(wi);
      }
      continue;
    }
    double g = elementAsDouble(got, i), w = elementAsDouble(want, i);
    if (std::isnan(g) && std::isnan(w))
      continue;
    double err = std::fabs(g - w);
    if (std::isnan(err) || (std::isinf(w) && g != w))
      err = INFINITY;
    bool bad = flt ? !(err <= atol + rtol * std::fabs(w)) : g != w;
    if (err > c.worstError || (bad && c.ok)) {
      c.worstError = err;
      c.worstIndex = i;
    }
    if (bad && c.ok) {
      c.ok = false;
      std::ostringstream os;
      os << "element " << i << ": got " << g << ", expected " << w;
      c.message = os.str();
    }
  }
  return c;
}

} // namespace aotc::cli

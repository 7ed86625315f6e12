/// \file
/// Host tensors for the CLI: reading ONNX TensorProto (.pb) files, random
/// inputs, printing, and comparing with tolerances.
#pragma once

#include "ir/status.h"

#include <aotc/runner.hpp>

#include <map>
#include <string>

namespace aotc::cli {

/// Reads a TensorProto file (ONNX backend-test layout).
Expected<aotc::HostTensor> readTensorFile(const std::string &path);

/// The initializers of an ONNX model file (external data read from beside
/// it), or of every TensorProto .pb file in a directory (named by the
/// proto's name, else the file's stem): weights for
/// aotc::Model::updateConstants.
Expected<std::map<std::string, aotc::HostTensor>>
readInitializers(const std::string &path);

/// Fills a tensor with reproducible random values (normal for floats,
/// small integers for integer types, 0/1 for bool).
aotc::HostTensor randomTensor(aotc_dtype_t dtype, std::vector<int64_t> shape,
                              uint64_t seed);

/// True for the floating-point dtypes (float32/64, float16, bfloat16): the
/// compiler's isFloat, on the C ABI's numbering (the same as DType's).
bool isFloatDtype(aotc_dtype_t dtype);

/// "f32[2,3] 0.1 0.2 ..." with at most \p maxValues values.
std::string describeTensor(const aotc::HostTensor &t, size_t maxValues = 8);

struct Comparison {
  bool ok = true;
  double worstError = 0; ///< max |got - want| over elements
  int64_t worstIndex = -1;
  std::string message; ///< why it failed
};

/// Compares element by element: floats within atol + rtol*|want| (NaN equals
/// NaN), everything else exactly; shapes and dtypes must match.
Comparison compareTensors(const aotc::HostTensor &got,
                          const aotc::HostTensor &want, double rtol,
                          double atol);

} // namespace aotc::cli

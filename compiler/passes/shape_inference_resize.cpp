/// \file
/// Shape inference of Resize (opsets 10-25): the output size from `sizes` or
/// `scales` (constants, or given at run time: value symbols, the sizes then
/// derived symbols the wrapper computes), and the scale per axis that the
/// coordinate transformation uses where it is known at compile time, stored
/// on the node as `aotc_scales` (NaN: lowering computes it) for lowering.
#include "compiler/passes/shape_inference_internal.h"

#include <algorithm>
#include <cmath>

namespace aotc {
namespace shape_inference {

namespace {

/// The largest output dim a Resize computes at run time (a derived size):
/// 2^24, so that the products of such dims (a stage's buffer) stay inside
/// 64 bits for the prover. The run refuses a larger one.
constexpr int64_t kMaxResized = int64_t{1} << 24;

/// A float constant's values (scales and roi are float tensors).
Expected<std::vector<double>> floatConstant(Context &c, const Node &n,
                                            size_t i,
                                            const std::string &what) {
  const Value *v = n.input(i);
  if (!v->isConstant())
    return makeError(n.describe(), ": ", inputLabel(n, i), " (", what,
                     ") must be known at compile time");
  c.graph.freezeInitializer(v, "read at compile time as the " + what +
                                   " of " + n.describe());
  std::vector<double> r;
  int64_t count = v->data().size() / dtypeSize(v->type().dtype);
  for (int64_t k = 0; k < count; ++k)
    r.push_back(tensorDataFloat(v->data(), v->type().dtype, k));
  return r;
}

} // namespace

Status inferResize(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  int64_t rank = x.rank();
  const std::string &mode = n.stringAttr("mode");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return makeError(n.describe(), ": Resize mode '", mode,
                     "' is not supported");
  const std::string &ct = n.stringAttr("coordinate_transformation_mode");
  if (ct != "half_pixel" && ct != "half_pixel_symmetric" &&
      ct != "pytorch_half_pixel" && ct != "align_corners" &&
      ct != "asymmetric" && ct != "tf_crop_and_resize")
    return makeError(n.describe(), ": coordinate_transformation_mode '", ct,
                     "' is not supported");
  if (n.intAttr("antialias") != 0)
    return makeError(n.describe(), ": antialias is not supported");
  const std::string &policy = n.stringAttr("keep_aspect_ratio_policy");
  if (policy != "stretch" && policy != "not_larger" &&
      policy != "not_smaller")
    return makeError(n.describe(), ": keep_aspect_ratio_policy '", policy,
                     "' is not supported");
  std::vector<int64_t> axes;
  if (n.hasAttr("axes")) {
    AOTC_ASSIGN_OR_RETURN(axes,
                          normalizeAxes(n, n.intsAttr("axes"), rank, false));
  } else {
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  }
  // Opset 10: (X, scales); 11+: (X, roi, scales, sizes).
  size_t scalesIn = c.opset < 11 ? 1 : 2, sizesIn = 3;
  if (ct == "tf_crop_and_resize") {
    // The region (starts, then ends, of each axis) is read by the kernel.
    if (c.opset < 11 || !n.input(1))
      return makeError(n.describe(), ": tf_crop_and_resize needs 'roi'");
    const TensorType &roi = inputType(n, 1);
    if (!isFloat(roi.dtype) || roi.rank() != 1)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " (roi) must be a 1-D float tensor, got ", roi.str());
    AOTC_RETURN_IF_ERROR(requireEqual(
        c, n, roi.dims[0], Expr(static_cast<int64_t>(2 * axes.size())),
        inputLabel(n, 1) + " (roi) size"));
  }
  // The scale per dim when known at compile time; NaN where the lowering
  // computes it (from sizes or scales given at run time).
  const double unknown = std::nan("");
  std::vector<double> scale(rank, 1.0);
  std::vector<Expr> out = x.dims;
  // Output dim \p k (of axis axes[k]) computed by the wrapper per run:
  // its own derived symbol, at most kMaxResized.
  auto runtimeDim = [&](size_t k, const Expr &definition) {
    return deriveBoundedSymbol(
        c, n.output(0)->name() + "_d" + std::to_string(axes[k]), definition,
        kMaxResized);
  };
  // floor(\p v) of a double, as a size.
  auto floorToSize = [](const Expr &v) {
    return Cast::make(DType::Int64, Call::make(DType::Float64, "floor", {v}));
  };
  bool haveSizes = c.opset >= 11 && n.input(sizesIn) &&
                   !inputType(n, sizesIn).numel().isConstValue(0);
  if (haveSizes) {
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> sizes,
                          knownData(n, sizesIn, "sizes"));
    if (sizes.size() != axes.size())
      return makeError(n.describe(), ": 'sizes' has ", sizes.size(),
                       " values for ", axes.size(), " axes");
    // Ratios out / in per axis, exact where both are constants.
    std::vector<int64_t> in(axes.size()), size(axes.size());
    bool known = true;
    for (size_t k = 0; k < axes.size(); ++k) {
      if (sizes[k].isConst(size[k]) && size[k] < 0)
        return makeError(n.describe(), ": negative size ", size[k]);
      known &= sizes[k].isConst(size[k]) && x.dims[axes[k]].isConst(in[k]);
    }
    if (policy == "stretch") {
      for (size_t k = 0; k < axes.size(); ++k) {
        // A size given at run time: its own bounded symbol (a value
        // symbol's range is 2^48).
        if (!sizes[k].isConst(size[k]))
          c.graph.addAssumption(cmp(BinOp::GE, sizes[k], Expr(0)),
                                n.describe() + ": size " + std::to_string(k) +
                                    " (" + printExpr(sizes[k]) +
                                    ") is negative");
        out[axes[k]] =
            sizes[k].isConst(size[k]) ? sizes[k] : runtimeDim(k, sizes[k]);
        scale[axes[k]] =
            !known ? unknown : in[k] > 0 ? double(size[k]) / in[k] : 1.0;
      }
    } else if (known) {
      // One scale for every axis (the smallest or largest ratio), the
      // sizes rounded half up from it.
      bool larger = policy == "not_smaller";
      double s = larger ? 0 : INFINITY;
      for (size_t k = 0; k < axes.size(); ++k) {
        double r = in[k] > 0 ? double(size[k]) / in[k] : 1.0;
        s = larger ? std::max(s, r) : std::min(s, r);
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        out[axes[k]] = Expr(static_cast<int64_t>(std::floor(s * in[k] + 0.5)));
        scale[axes[k]] = s;
      }
    } else {
      // The same in double, by the wrapper: each size a derived symbol.
      BinOp pick = policy == "not_smaller" ? BinOp::Max : BinOp::Min;
      Expr s;
      for (size_t k = 0; k < axes.size(); ++k) {
        Expr r = Binary::make(BinOp::Div, Cast::make(DType::Float64, sizes[k]),
                              Cast::make(DType::Float64, x.dims[axes[k]]));
        s = s.defined() ? Binary::make(pick, s, r) : r;
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        Expr d = Binary::make(
            BinOp::Mul, s, Cast::make(DType::Float64, x.dims[axes[k]]));
        out[axes[k]] = runtimeDim(
            k, floorToSize(Binary::make(BinOp::Add, d,
                                        FloatImm::make(0.5, DType::Float64))));
        scale[axes[k]] = unknown;
      }
    }
  } else {
    if (!n.input(scalesIn))
      return makeError(n.describe(), ": neither 'scales' nor 'sizes' given");
    const Value *sv = n.input(scalesIn);
    if (!sv->isConstant() && sv->symbolicData()) {
      // Scales given at run time (float value symbols): each size is
      // floor(in * scale) in double, computed by the wrapper, and the run
      // refuses a scale that is not positive.
      const std::vector<Expr> &given = *sv->symbolicData();
      if (given.size() != axes.size())
        return makeError(n.describe(), ": 'scales' has ", given.size(),
                         " values for ", axes.size(), " axes");
      for (size_t k = 0; k < axes.size(); ++k) {
        Expr positive = Binary::make(BinOp::GT, given[k],
                                     FloatImm::make(0, DType::Float64));
        c.graph.addAssumption(positive, n.describe() + ": scale " +
                                            std::to_string(k) +
                                            " is not positive");
        Expr d = Binary::make(BinOp::Mul,
                              Cast::make(DType::Float64, x.dims[axes[k]]),
                              given[k]);
        out[axes[k]] = runtimeDim(k, floorToSize(d));
        scale[axes[k]] = unknown;
      }
    } else {
      AOTC_ASSIGN_OR_RETURN(std::vector<double> scales,
                            floatConstant(c, n, scalesIn, "scales"));
      if (scales.size() != axes.size())
        return makeError(n.describe(), ": 'scales' has ", scales.size(),
                         " values for ", axes.size(), " axes");
      for (size_t k = 0; k < axes.size(); ++k) {
        double s = scales[k];
        if (!(s > 0))
          return makeError(n.describe(), ": scale ", s, " must be positive");
        const Expr &d = x.dims[axes[k]];
        int64_t in;
        if (d.isConst(in)) {
          out[axes[k]] = Expr(static_cast<int64_t>(std::floor(in * s)));
        } else if (s == std::floor(s)) {
          out[axes[k]] = simplifyDim(c, d * Expr(static_cast<int64_t>(s)));
        } else {
          // floor(d * s) in double, by the wrapper.
          out[axes[k]] = runtimeDim(
              k, floorToSize(Binary::make(BinOp::Mul,
                                          Cast::make(DType::Float64, d),
                                          FloatImm::make(s, DType::Float64))));
        }
        scale[axes[k]] = s;
      }
    }
  }
  n.setAttr("aotc_scales", Attribute{scale, std::nullopt});
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

} // namespace shape_inference
} // namespace aotc

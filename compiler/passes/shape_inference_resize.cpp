/// \file
/// Shape inference of Resize (opsets 10-25): the output size from `sizes` or
/// `scales` (constants), and the scale per axis that the coordinate
/// transformation uses, stored on the node as `aotc_scales` for lowering.
#include "compiler/passes/shape_inference_internal.h"

#include <cmath>

namespace aotc {
namespace shape_inference {

namespace {

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
  if (mode != "nearest" && mode != "linear")
    return makeError(n.describe(), ": Resize mode '", mode,
                     "' is not supported (nearest and linear are)");
  const std::string &ct = n.stringAttr("coordinate_transformation_mode");
  if (ct != "half_pixel" && ct != "half_pixel_symmetric" &&
      ct != "pytorch_half_pixel" && ct != "align_corners" &&
      ct != "asymmetric")
    return makeError(n.describe(), ": coordinate_transformation_mode '", ct,
                     "' is not supported");
  if (n.intAttr("antialias") != 0)
    return makeError(n.describe(), ": antialias is not supported");
  if (n.stringAttr("keep_aspect_ratio_policy") != "stretch")
    return makeError(n.describe(), ": keep_aspect_ratio_policy '",
                     n.stringAttr("keep_aspect_ratio_policy"),
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
  std::vector<double> scale(rank, 1.0);
  std::vector<Expr> out = x.dims;
  bool haveSizes = c.opset >= 11 && n.input(sizesIn) &&
                   !inputType(n, sizesIn).numel().isConstValue(0);
  if (haveSizes) {
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                          knownInts(n, sizesIn, "sizes"));
    if (sizes.size() != axes.size())
      return makeError(n.describe(), ": 'sizes' has ", sizes.size(),
                       " values for ", axes.size(), " axes");
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t in;
      if (!x.dims[axes[k]].isConst(in))
        return makeError(n.describe(), ": Resize to fixed sizes of the ",
                         "symbolic dim ", printExpr(x.dims[axes[k]]),
                         " is not supported");
      if (sizes[k] < 0)
        return makeError(n.describe(), ": negative size ", sizes[k]);
      out[axes[k]] = Expr(sizes[k]);
      scale[axes[k]] = in > 0 ? double(sizes[k]) / double(in) : 1.0;
    }
  } else {
    if (!n.input(scalesIn))
      return makeError(n.describe(), ": neither 'scales' nor 'sizes' given");
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
        return makeError(n.describe(), ": a fractional scale ", s,
                         " of the symbolic dim ", printExpr(d),
                         " is not supported");
      }
      scale[axes[k]] = s;
    }
  }
  n.setAttr("aotc_scales", Attribute{scale, std::nullopt});
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

} // namespace shape_inference
} // namespace aotc

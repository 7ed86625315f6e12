/// \file
/// Shape inference of contractions (MatMul, Gemm, Conv), pooling,
/// normalization, softmax and reductions.
#include "compiler/passes/shape_inference_internal.h"
#include "ir/einsum.h"
#include "ir/indexing.h"

#include <algorithm>
#include <map>

namespace aotc {
namespace shape_inference {

namespace {

Status requireRank(const Node &n, size_t i, int minRank, int maxRank = -1) {
  int r = inputType(n, i).rank();
  if (r >= minRank && (maxRank < 0 || r <= maxRank))
    return Status::ok();
  std::string want = maxRank == minRank ? std::to_string(minRank)
                     : maxRank < 0      ? "at least " + std::to_string(minRank)
                                        : std::to_string(minRank) + " to " +
                                         std::to_string(maxRank);
  return makeError(n.describe(), ": ", inputLabel(n, i), " must have rank ",
                   want, ", got ", inputType(n, i).str());
}

/// Input 0 of an op that runs along one of its axes (ArgMax/ArgMin, CumSum):
/// numeric, with an axis to run along.
Status requireNumericAlongAxis(const Node &n) {
  const TensorType &x = inputType(n, 0);
  if (x.dtype == DType::Bool)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must be numeric, got ", x.str());
  if (x.rank() == 0)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must have rank 1 or more");
  return Status::ok();
}

Status inferMatMul(Context &c, Node &n) {
  const TensorType &ta = inputType(n, 0), &tb = inputType(n, 1);
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 1));
  AOTC_RETURN_IF_ERROR(requireRank(n, 1, 1));
  if (ta.dtype != tb.dtype)
    return makeError(n.describe(),
                     ": inputs differ in dtype: ", dtypeName(ta.dtype), " vs ",
                     dtypeName(tb.dtype));
  std::vector<Expr> a = ta.dims, b = tb.dims;
  bool aVec = a.size() == 1, bVec = b.size() == 1;
  if (aVec)
    a.insert(a.begin(), Expr(1));
  if (bVec)
    b.push_back(Expr(1));
  AOTC_RETURN_IF_ERROR(
      requireEqual(c, n, a[a.size() - 1], b[b.size() - 2], "contracted dims"));
  std::vector<Expr> batchA(a.begin(), a.end() - 2);
  std::vector<Expr> batchB(b.begin(), b.end() - 2);
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> out,
                        broadcastShapes(c, n, batchA, batchB));
  if (!aVec)
    out.push_back(a[a.size() - 2]);
  if (!bVec)
    out.push_back(b[b.size() - 1]);
  setResult(c, n, 0, ta.dtype, std::move(out));
  return Status::ok();
}

/// Einsum (ir/einsum.h): every operand of one dtype (not bool); a letter's
/// dims provably equal wherever it is named; the ellipsis's dims broadcast
/// (NumPy); the output's dims are its labels' sizes.
Status inferEinsum(Context &c, Node &n) {
  const DType t = inputType(n, 0).dtype;
  std::vector<int> ranks;
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    const TensorType &ti = inputType(n, i);
    if (ti.dtype != t)
      return makeError(n.describe(), ": ", inputLabel(n, i), " is ",
                       dtypeName(ti.dtype), ", ", inputLabel(n, 0), " ",
                       dtypeName(t), ": Einsum's operands share one dtype");
    ranks.push_back(ti.rank());
  }
  if (t == DType::Bool)
    return makeError(n.describe(), ": Einsum of bool is unsupported");
  Expected<EinsumSpec> parsed = parseEinsum(n.stringAttr("equation"), ranks);
  if (!parsed)
    return parsed.status().withContext(n.describe());
  const EinsumSpec spec = parsed.take();
  std::map<int, Expr> size;
  for (size_t i = 0; i < spec.operands.size(); ++i)
    for (size_t k = 0; k < spec.operands[i].size(); ++k) {
      const int l = spec.operands[i][k];
      const Expr &d = inputType(n, i).dims[k];
      auto it = size.find(l);
      if (it == size.end()) {
        size.emplace(l, d);
      } else if (l >= kEinsumEllipsisLabel) {
        AOTC_ASSIGN_OR_RETURN(std::vector<Expr> b,
                              broadcastShapes(c, n, {it->second}, {d}));
        it->second = b[0];
      } else {
        AOTC_RETURN_IF_ERROR(
            requireEqual(c, n, it->second, d,
                         "the dims of label '" + einsumLabelName(l) + "'"));
      }
    }
  std::vector<Expr> out;
  for (int l : spec.output)
    out.push_back(size.at(l));
  setResult(c, n, 0, t, std::move(out));
  return Status::ok();
}

Status inferGemm(Context &c, Node &n) {
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 2, 2));
  AOTC_RETURN_IF_ERROR(requireRank(n, 1, 2, 2));
  const TensorType &ta = inputType(n, 0), &tb = inputType(n, 1);
  int64_t transA = n.intAttr("transA"), transB = n.intAttr("transB");
  Expr m = ta.dims[transA ? 1 : 0], k = ta.dims[transA ? 0 : 1];
  Expr kb = tb.dims[transB ? 1 : 0], nn = tb.dims[transB ? 0 : 1];
  AOTC_RETURN_IF_ERROR(requireEqual(c, n, k, kb, "contracted dims"));
  std::vector<Expr> out = {m, nn};
  if (n.input(2)) {
    AOTC_RETURN_IF_ERROR(requireRank(n, 2, 0, 2));
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> bc,
                          broadcastShapes(c, n, out, inputType(n, 2).dims));
    for (size_t i = 0; i < 2; ++i)
      AOTC_RETURN_IF_ERROR(requireEqual(
          c, n, bc[i], out[i], "C must broadcast to the output: dims"));
  }
  setResult(c, n, 0, ta.dtype, std::move(out));
  return Status::ok();
}

/// Output sizes of a sliding window (Conv, MaxPool, AveragePool) over the
/// spatial dims of input 0, with explicit pads written back for auto_pad.
Expected<std::vector<Expr>> windowDims(Context &c, Node &n,
                                       const std::vector<int64_t> &kernel) {
  const TensorType &x = inputType(n, 0);
  size_t spatial = kernel.size();
  std::vector<int64_t> strides = n.intsAttr("strides");
  std::vector<int64_t> dilations = n.intsAttr("dilations");
  std::vector<int64_t> pads = n.intsAttr("pads");
  std::string autoPad = n.stringAttr("auto_pad");
  int64_t ceilMode = n.op() == OpKind::Conv ? 0 : n.intAttr("ceil_mode");
  if (strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return makeError(n.describe(), ": strides/dilations/pads do not match a ",
                     spatial, "-D window");
  std::vector<Expr> out;
  // Attribute values large enough to overflow the size arithmetic cannot
  // describe a window over a tensor that fits in memory.
  constexpr int64_t kMaxWindow = int64_t{1} << 40;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t ek;
    if (kernel[i] < 1 || dilations[i] < 1 || strides[i] < 1 ||
        __builtin_mul_overflow(dilations[i], kernel[i] - 1, &ek) ||
        ek >= kMaxWindow || strides[i] >= kMaxWindow ||
        pads[i] >= kMaxWindow || pads[i + spatial] >= kMaxWindow ||
        pads[i] < 0 || pads[i + spatial] < 0)
      return makeError(n.describe(), ": window of spatial dim ", i,
                       " (kernel ", kernel[i], ", stride ", strides[i],
                       ", dilation ", dilations[i], ", pads ", pads[i], " and ",
                       pads[i + spatial], ") is out of range");
  }
  for (size_t i = 0; i < spatial; ++i) {
    Expr in = x.dims[2 + i];
    int64_t s = strides[i], ek = dilations[i] * (kernel[i] - 1) + 1;
    if (autoPad == "VALID") {
      pads[i] = pads[i + spatial] = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t inSize = 0, total;
      if (s == 1) {
        total = ek - 1;
      } else if (in.isConst(inSize)) {
        int64_t outSize = (inSize + s - 1) / s;
        total = std::max<int64_t>(0, (outSize - 1) * s + ek - inSize);
      } else {
        return makeError(n.describe(), ": auto_pad '", autoPad,
                         "' with stride ", s,
                         " needs a static input size; spatial dim ", i,
                         " is symbolic (", printExpr(in),
                         "): its padding would depend on it");
      }
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + spatial] = autoPad == "SAME_UPPER" ? big : small;
    }
    int64_t pb = pads[i], pe = pads[i + spatial];
    // A window lying entirely in the padding reads nothing: refused rather
    // than computed as -inf (MaxPool) or 0/0 (AveragePool).
    if (pb >= ek || pe >= ek)
      return makeError(n.describe(), ": pads ", pb, " and ", pe,
                       " of spatial dim ", i,
                       " leave windows entirely in the padding (each must "
                       "be smaller than the window extent ",
                       ek, ")");
    Expr span = in + Expr(pb + pe - ek);
    Expr o;
    if (ceilMode) {
      // ceil((span) / s) + 1, without the windows that would start in the
      // right padding (ONNX, ONNX Runtime and PyTorch): the last window
      // starts at (o - 1) * s - pb, which must be below in.
      o = minExpr(floorDiv(span + Expr(s - 1), Expr(s)) + Expr(1),
                  floorDiv(in + Expr(pb - 1), Expr(s)) + Expr(1));
    } else {
      o = floorDiv(span, Expr(s)) + Expr(1);
    }
    o = simplifyDim(c, o);
    // The padded input must hold a window: span >= 0 for every size.
    auto b = boundsOf(simplifyDim(c, span), c.env);
    if (b && b->max < 0)
      return makeError(n.describe(), ": window of size ", ek,
                       " does not fit spatial dim ", i, " of input ", x.str(),
                       " (with pads ", pb, " and ", pe, ")");
    if (!b || b->min < 0)
      c.graph.addAssumption(
          cmp(BinOp::GE, simplifyDim(c, in + Expr(pb + pe)), Expr(ek)),
          n.describe() + ": spatial dim " + std::to_string(i) + " of " +
              inputLabel(n, 0) + " (" + printExpr(in) + ") plus pads " +
              std::to_string(pb + pe) + " is smaller than the window of " +
              std::to_string(ek));
    out.push_back(o);
  }
  if (autoPad != "NOTSET") {
    n.setAttr("pads", Attribute{pads, std::nullopt});
    n.setAttr("auto_pad", Attribute{std::string("NOTSET"), std::nullopt});
  }
  return out;
}

/// The kernel size from a Conv or ConvTranspose weight's spatial dims, which
/// must be static and agree with 'kernel_shape'.
Expected<std::vector<int64_t>> staticKernel(const Node &n, const TensorType &w,
                                            size_t spatial) {
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t k;
    if (!w.dims[2 + i].isConst(k))
      return makeError(n.describe(), ": weight ", w.str(),
                       " must have a static kernel size");
    kernel.push_back(k);
  }
  if (n.intsAttr("kernel_shape") != kernel)
    return makeError(n.describe(), ": attribute 'kernel_shape' does not ",
                     "match weight ", w.str());
  return kernel;
}

Status inferConv(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0), &w = inputType(n, 1);
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 3));
  size_t spatial = x.rank() - 2;
  if (spatial > 3)
    return makeError(n.describe(), ": unsupported ", spatial,
                     "-D convolution (input ", x.str(),
                     "); only 1-D to 3-D are supported");
  if (w.rank() != x.rank())
    return makeError(n.describe(), ": weight ", w.str(),
                     " does not match input ", x.str());
  if (w.dtype != x.dtype)
    return makeError(n.describe(), ": weight is ", dtypeName(w.dtype),
                     " but input is ", dtypeName(x.dtype));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> kernel,
                        staticKernel(n, w, spatial));
  int64_t group = n.intAttr("group");
  AOTC_RETURN_IF_ERROR(requireEqual(c, n, x.dims[1], w.dims[1] * Expr(group),
                                    "input channels and weight channels "
                                    "times group"));
  int64_t m;
  if (w.dims[0].isConst(m) && m % group != 0)
    return makeError(n.describe(), ": output channels ", m,
                     " are not divisible by group ", group);
  if (n.input(2)) {
    AOTC_RETURN_IF_ERROR(requireRank(n, 2, 1, 1));
    AOTC_RETURN_IF_ERROR(requireEqual(c, n, inputType(n, 2).dims[0], w.dims[0],
                                      "bias and output channels"));
  }
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> sp, windowDims(c, n, kernel));
  std::vector<Expr> out = {x.dims[0], w.dims[0]};
  out.insert(out.end(), sp.begin(), sp.end());
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

/// ConvTranspose: out = stride * (in - 1) + output_padding + (k - 1) * d + 1
/// - pads, or output_shape (auto_pad SAME_*: in * stride) with the pads
/// that give it; explicit pads are written back and auto_pad cleared.
Status inferConvTranspose(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0), &w = inputType(n, 1);
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 3));
  size_t s = x.rank() - 2;
  if (s > 3)
    return makeError(n.describe(), ": unsupported ", s,
                     "-D transposed convolution; only 1-D to 3-D are "
                     "supported");
  if (w.rank() != x.rank() || w.dtype != x.dtype || !isFloat(x.dtype))
    return makeError(n.describe(), ": weight ", w.str(),
                     " does not match input ", x.str());
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, staticKernel(n, w, s));
  int64_t group = n.intAttr("group");
  AOTC_RETURN_IF_ERROR(requireEqual(c, n, x.dims[1], w.dims[0],
                                    "input channels and weight dim 0"));
  int64_t cin; // the weight's dim 0, static
  if (!w.dims[0].isConst(cin) || cin % group != 0)
    return makeError(n.describe(), ": input channels ", printExpr(w.dims[0]),
                     " must be static and divisible by group ", group);
  const std::vector<int64_t> &st = n.intsAttr("strides");
  const std::vector<int64_t> &dil = n.intsAttr("dilations");
  const std::vector<int64_t> &op = n.intsAttr("output_padding");
  if (op.size() != s)
    return makeError(n.describe(), ": 'output_padding' has ", op.size(),
                     " values, expected ", s);
  for (size_t i = 0; i < s; ++i)
    if (op[i] < 0 || op[i] >= std::max(st[i], dil[i]))
      return makeError(n.describe(), ": output_padding ", op[i],
                       " must be below the stride or the dilation");
  std::vector<int64_t> pads = n.intsAttr("pads");
  const std::string autoPad = n.stringAttr("auto_pad");
  std::vector<int64_t> target;
  if (n.hasAttr("output_shape")) {
    target = n.intsAttr("output_shape");
    if (target.size() == s + 2)
      target.erase(target.begin(), target.begin() + 2);
    if (target.size() != s)
      return makeError(n.describe(), ": 'output_shape' has ", target.size(),
                       " values for ", s, " spatial dims");
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < s; ++i) {
      int64_t in;
      if (!x.dims[2 + i].isConst(in))
        return makeError(n.describe(), ": auto_pad ", autoPad,
                         " over the symbolic dim ", printExpr(x.dims[2 + i]),
                         " is not supported");
      target.push_back(in * st[i]);
    }
  }
  if (!target.empty()) {
    pads.assign(2 * s, 0);
    for (size_t i = 0; i < s; ++i) {
      int64_t in;
      if (!x.dims[2 + i].isConst(in))
        return makeError(n.describe(), ": output_shape over the symbolic dim ",
                         printExpr(x.dims[2 + i]), " is not supported");
      int64_t total = st[i] * (in - 1) + op[i] + (kernel[i] - 1) * dil[i] + 1 -
                      target[i];
      // A larger output than the full result extends it at the end with
      // the bias alone (ONNX's reference and ONNX Runtime agree); a smaller
      // one crops, the larger half at the start unless SAME_UPPER.
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = total < 0 ? 0 : upper ? total / 2 : total - total / 2;
      pads[s + i] = total - pads[i];
    }
  } else if (autoPad == "VALID") {
    pads.assign(2 * s, 0);
  }
  if (pads.size() != 2 * s)
    return makeError(n.describe(), ": 'pads' has ", pads.size(),
                     " values, expected ", 2 * s);
  std::vector<Expr> out = {x.dims[0], simplifyDim(c, w.dims[1] * Expr(group))};
  for (size_t i = 0; i < s; ++i) {
    Expr o = simplifyDim(c, x.dims[2 + i] * Expr(st[i]) +
                                Expr(op[i] + (kernel[i] - 1) * dil[i] + 1 -
                                     st[i] - pads[i] - pads[s + i]));
    auto b = boundsOf(o, c.env);
    if (b && b->max < 0)
      return makeError(n.describe(), ": output dim ", printExpr(o),
                       " is negative");
    if (!b || b->min < 0)
      c.graph.addAssumption(
          cmp(BinOp::GE, o, Expr(0)),
          n.describe() + ": spatial dim " + std::to_string(i) + " of " +
              inputLabel(n, 0) + " (" + printExpr(x.dims[2 + i]) +
              ") gives a negative output size " + printExpr(o));
    out.push_back(o);
  }
  if (n.input(2)) {
    AOTC_RETURN_IF_ERROR(requireRank(n, 2, 1, 1));
    AOTC_RETURN_IF_ERROR(requireEqual(c, n, inputType(n, 2).dims[0], out[1],
                                      "bias and output channels"));
  }
  n.setAttr("pads", Attribute{pads, std::nullopt});
  n.setAttr("auto_pad", Attribute{std::string("NOTSET"), std::nullopt});
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

Status inferPool(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 3));
  const std::vector<int64_t> &kernel = n.intsAttr("kernel_shape");
  if (kernel.size() != static_cast<size_t>(x.rank() - 2))
    return makeError(n.describe(), ": attribute 'kernel_shape' has ",
                     kernel.size(), " dims but input ", x.str(), " has ",
                     x.rank() - 2, " spatial dims");
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> sp, windowDims(c, n, kernel));
  std::vector<Expr> out = {x.dims[0], x.dims[1]};
  out.insert(out.end(), sp.begin(), sp.end());
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

Status inferSoftmax(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  int64_t axis = n.intAttr("axis");
  int64_t rank = std::max<int64_t>(x.rank(), 1);
  AOTC_ASSIGN_OR_RETURN(axis, normalizeAxis(n, axis, rank));
  n.setAttr("axis", Attribute{axis, std::nullopt});
  if (c.opset < 13 && axis != rank - 1)
    n.setAttr("aotc_opset", Attribute{c.opset, std::nullopt});
  setResult(c, n, 0, x.dtype, x.dims);
  return Status::ok();
}

/// A Reduce* whose axes are given at run time (value symbols): each dim is
/// kept or reduced by a condition on the values, so the result's dims are
/// sizes the wrapper derives per run (the run refuses an axis outside
/// [-rank, rank) or named twice). Lowering reads the same conditions
/// (runtimeAxisMask) and reduces x seen as [kept_0, reduced_0, kept_1, ...].
Status inferReduceRuntimeAxes(Context &c, Node &n,
                              const std::vector<Expr> &axes) {
  const TensorType &x = inputType(n, 0);
  int64_t rank = x.rank();
  int64_t keepdims = n.intAttr("keepdims");
  if (static_cast<int64_t>(axes.size()) > rank)
    return makeError(n.describe(), ": ", axes.size(),
                     " axes given at run time for an input of rank ", rank);
  requireRuntimeAxes(c, n, axes, rank);
  std::vector<Expr> mask = runtimeAxisMask(axes, rank);
  // The kept and reduced extents of each dim, one size each per run: the
  // lowering's reduction runs over them (it finds them by definition).
  std::vector<Expr> ext = runtimeAxisExtents(mask, x.dims);
  for (size_t i = 0; i < ext.size(); ++i)
    ext[i] = deriveSymbol(c,
                          n.output(0)->name() +
                              (i % 2 ? "_reduced" : "_kept") +
                              std::to_string(i / 2),
                          ext[i]);
  std::vector<Expr> out;
  if (keepdims) {
    for (int64_t i = 0; i < rank; ++i)
      out.push_back(ext[2 * i]);
  } else {
    out = runtimeAxisDroppedDims(mask, x.dims, rank - axes.size());
  }
  n.setAttr("keepdims", Attribute{keepdims, std::nullopt});
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

Status inferReduce(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (n.op() == OpKind::ReduceLogSum || n.op() == OpKind::ReduceLogSumExp)
    AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
  std::vector<int64_t> axes;
  if (n.input(1)) {
    if (givenAtRunTime(n, 1))
      return inferReduceRuntimeAxes(c, n, *n.input(1)->symbolicData());
    AOTC_ASSIGN_OR_RETURN(axes, knownInts(n, 1, "axes"));
  } else {
    if (n.hasAttr("axes"))
      axes = n.intsAttr("axes");
  }
  int64_t keepdims = n.intAttr("keepdims");
  int64_t noop = n.intAttr("noop_with_empty_axes");
  if (axes.empty() && !noop)
    for (int64_t i = 0; i < x.rank(); ++i)
      axes.push_back(i);
  AOTC_ASSIGN_OR_RETURN(axes, normalizeAxes(n, axes, x.rank(), /*sort=*/true));
  std::vector<Expr> out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!reduced)
      out.push_back(x.dims[i]);
    else if (keepdims)
      out.push_back(Expr(1));
  }
  n.setAttr("axes", Attribute{axes, std::nullopt});
  n.setAttr("keepdims", Attribute{keepdims, std::nullopt});
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

Status inferBatchNorm(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 2));
  for (size_t i = 1; i < 5; ++i) {
    AOTC_RETURN_IF_ERROR(requireRank(n, i, 1, 1));
    AOTC_RETURN_IF_ERROR(requireEqual(c, n, inputType(n, i).dims[0], x.dims[1],
                                      inputLabel(n, i) + " and channels"));
  }
  setResult(c, n, 0, x.dtype, x.dims);
  return Status::ok();
}

/// LayerNormalization, RMSNormalization: Y like X; LayerNormalization's
/// Mean and InvStdDev have X's dims with the normalized ones 1, in
/// stash_type.
Status inferNormalization(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
  if (x.rank() == 0)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must have rank 1 or more");
  AOTC_ASSIGN_OR_RETURN(int64_t axis,
                        normalizeAxis(n, n.intAttr("axis"), x.rank()));
  int64_t stash = n.intAttr("stash_type");
  if (stash != 1 && stash != 11)
    return makeError(n.describe(), ": attribute 'stash_type' ", stash,
                     " is not supported (1: float, 11: double)");
  std::vector<Expr> normalized(x.dims.begin() + axis, x.dims.end());
  for (size_t i = 1; i < n.numInputs(); ++i) {
    if (!n.input(i))
      continue;
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, i));
    // Scale and bias broadcast to the normalized dims (unidirectionally).
    const TensorType &p = inputType(n, i);
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> b,
                          broadcastShapes(c, n, normalized, p.dims));
    if (b.size() != normalized.size())
      return makeError(n.describe(), ": ", inputLabel(n, i), " ", p.str(),
                       " does not broadcast to the normalized dims of ",
                       x.str());
    for (size_t k = 0; k < b.size(); ++k)
      AOTC_RETURN_IF_ERROR(requireEqual(c, n, b[k], normalized[k],
                                        inputLabel(n, i) + " dims"));
  }
  setResult(c, n, 0, x.dtype, x.dims);
  std::vector<Expr> stats = x.dims;
  for (size_t k = axis; k < stats.size(); ++k)
    stats[k] = Expr(1);
  DType u = stash == 11 ? DType::Float64 : DType::Float32;
  for (size_t i = 1; i < n.outputs().size(); ++i)
    setResult(c, n, i, u, stats);
  return Status::ok();
}

/// TopK: Values (X's dtype) and Indices (int64) with X's dims but k along
/// the axis. k is the attribute (opset 1) or input 1, a constant or given at
/// run time (a value symbol); the run refuses k < 0 or k > the axis' size.
Status inferTopK(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_RETURN_IF_ERROR(requireNumericAlongAxis(n));
  AOTC_ASSIGN_OR_RETURN(int64_t axis,
                        normalizeAxis(n, n.intAttr("axis"), x.rank()));
  Expr k;
  if (n.numInputs() > 1 && n.input(1)) {
    const TensorType &kt = inputType(n, 1);
    if (kt.dtype != DType::Int64 || !simplifyDim(c, kt.numel()).isConstValue(1))
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " (k) must hold one int64, got ", kt.str());
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> data, knownData(n, 1, "k"));
    k = data.at(0);
  } else if (n.hasAttr("k")) {
    k = Expr(n.intAttr("k"));
  } else {
    return makeError(n.describe(), ": k is missing");
  }
  int64_t kv;
  if (k.isConst(kv) && kv < 0)
    return makeError(n.describe(), ": k = ", kv, " is negative");
  if (!proveLE(k, x.dims[axis], c.env)) {
    int64_t dim;
    if (k.isConst(kv) && x.dims[axis].isConst(dim))
      return makeError(n.describe(), ": k = ", kv, " exceeds the size ", dim,
                       " of axis ", axis);
    c.graph.addAssumption(cmp(BinOp::LE, k, x.dims[axis]),
                          n.describe() + ": k (" + printExpr(k) +
                              ") exceeds the size of axis " +
                              std::to_string(axis));
  }
  std::vector<Expr> out = x.dims;
  out[axis] = k;
  setResult(c, n, 0, x.dtype, out);
  setResult(c, n, 1, DType::Int64, out);
  return Status::ok();
}

/// InstanceNormalization: Y like X (N, C, D1, ...); scale and B are [C].
Status inferInstanceNorm(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
  AOTC_RETURN_IF_ERROR(requireRank(n, 0, 3));
  for (size_t i = 1; i < 3; ++i) {
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, i));
    AOTC_RETURN_IF_ERROR(requireRank(n, i, 1, 1));
    AOTC_RETURN_IF_ERROR(requireEqual(c, n, inputType(n, i).dims[0], x.dims[1],
                                      inputLabel(n, i) + " and channels"));
  }
  setResult(c, n, 0, x.dtype, x.dims);
  return Status::ok();
}

} // namespace

Status inferNN(Context &c, Node &n) {
  if (isAxesReduction(n.op()))
    return inferReduce(c, n);
  switch (n.op()) {
  case OpKind::MatMul:
    return inferMatMul(c, n);
  case OpKind::Gemm:
    return inferGemm(c, n);
  case OpKind::Einsum:
    return inferEinsum(c, n);
  case OpKind::Conv:
    return inferConv(c, n);
  case OpKind::ConvTranspose:
    return inferConvTranspose(c, n);
  case OpKind::MaxPool:
  case OpKind::AveragePool:
    return inferPool(c, n);
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool: {
    const TensorType &x = inputType(n, 0);
    AOTC_RETURN_IF_ERROR(requireRank(n, 0, 3));
    std::vector<Expr> out = {x.dims[0], x.dims[1]};
    out.resize(x.rank(), Expr(1));
    setResult(c, n, 0, x.dtype, std::move(out));
    return Status::ok();
  }
  case OpKind::BatchNormalization:
    return inferBatchNorm(c, n);
  case OpKind::LayerNormalization:
  case OpKind::RMSNormalization:
    return inferNormalization(c, n);
  case OpKind::InstanceNormalization:
    return inferInstanceNorm(c, n);
  case OpKind::LRN: {
    // Across channels: x is [N, C, ...].
    const TensorType &x = inputType(n, 0);
    AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
    if (x.rank() < 2)
      return makeError(n.describe(), ": ", inputLabel(n, 0),
                       " must have rank 2 or more ([N, C, ...]), got ",
                       x.str());
    if (n.intAttr("size") < 1)
      return makeError(n.describe(),
                       ": attribute 'size' must be positive, got ",
                       n.intAttr("size"));
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::Hardmax:
  case OpKind::LpNormalization: {
    const TensorType &x = inputType(n, 0);
    AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
    if (x.rank() == 0)
      return makeError(n.describe(), ": ", inputLabel(n, 0),
                       " must have rank 1 or more");
    AOTC_ASSIGN_OR_RETURN(int64_t axis,
                          normalizeAxis(n, n.intAttr("axis"), x.rank()));
    if (n.op() == OpKind::Hardmax && c.opset < 13 && axis != x.rank() - 1)
      return makeError(n.describe(), ": Hardmax before opset 13 over the ",
                       "flattened dims from axis ", axis,
                       " is not supported (only the last axis)");
    if (n.op() == OpKind::LpNormalization && n.intAttr("p") != 1 &&
        n.intAttr("p") != 2)
      return makeError(n.describe(), ": attribute 'p' must be 1 or 2, got ",
                       n.intAttr("p"));
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::CumSum: {
    // The axis (an int32 or int64 scalar or 1-element tensor) must be known
    // at compile time: it picks the loop the sum runs along.
    const TensorType &x = inputType(n, 0);
    AOTC_RETURN_IF_ERROR(requireNumericAlongAxis(n));
    if (givenAtRunTime(n, 1)) {
      // Given at run time: the scanned dim's length is derived per run
      // (lowering reads x along the dim the axis names).
      const std::vector<Expr> &given = *n.input(1)->symbolicData();
      if (given.size() != 1)
        return makeError(n.describe(), ": ", inputLabel(n, 1),
                         " (axis) must hold one value, has ", given.size());
      requireRuntimeAxes(c, n, given, x.rank());
      deriveSymbol(c, n.output(0)->name() + "_scan",
                   runtimeAxisLength(runtimeAxisMask(given, x.rank()), x.dims));
      setResult(c, n, 0, x.dtype, x.dims);
      return Status::ok();
    }
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> axis,
                          knownInts(n, 1, "axis"));
    if (axis.size() != 1)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " (axis) must hold one value, has ", axis.size());
    AOTC_RETURN_IF_ERROR(normalizeAxis(n, axis[0], x.rank()).status());
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::ArgMax:
  case OpKind::ArgMin: {
    const TensorType &x = inputType(n, 0);
    AOTC_RETURN_IF_ERROR(requireNumericAlongAxis(n));
    AOTC_ASSIGN_OR_RETURN(int64_t axis,
                          normalizeAxis(n, n.intAttr("axis"), x.rank()));
    auto b = boundsOf(x.dims[axis], c.env);
    if (b && b->max == 0)
      return makeError(n.describe(), ": axis ", axis, " of ", x.str(),
                       " is empty: no element to pick");
    std::vector<Expr> out;
    for (int64_t k = 0; k < x.rank(); ++k)
      if (k != axis)
        out.push_back(x.dims[k]);
      else if (n.intAttr("keepdims"))
        out.push_back(Expr(1));
    setResult(c, n, 0, DType::Int64, std::move(out));
    return Status::ok();
  }
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return inferSoftmax(c, n);
  case OpKind::TopK:
    return inferTopK(c, n);
  default:
    return makeError(n.describe(), ": not a contraction/pool/reduction op");
  }
}

} // namespace shape_inference
} // namespace aotc

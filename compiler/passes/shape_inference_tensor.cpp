/// \file
/// Shape inference of shape and data-movement ops (Reshape, Flatten,
/// Transpose, Squeeze, Unsqueeze, Concat, Gather, Slice, Split, Expand,
/// Shape, Size, Range, Constant, ConstantOfShape), with the symbolic data that carries shape
/// arithmetic through them.
#include "compiler/passes/shape_inference_internal.h"
#include "ir/indexing.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace aotc {
namespace shape_inference {

namespace {

/// The symbolic data of input \p i if it is a small 0-D/1-D tensor that has
/// it.
const std::vector<Expr> *dataOf(const Node &n, size_t i) {
  const Value *v = n.input(i);
  if (!v || !v->symbolicData() || v->type().rank() > 1)
    return nullptr;
  return &*v->symbolicData();
}

/// The output dims of a Reshape to \p shape whose elements are given at run
/// time (value symbols or arithmetic on them: anything that may be
/// negative): each element is resolved by the rules of ONNX at run time,
/// with select expressions, and the run refuses a shape that breaks them.
std::vector<Expr> reshapeOfValues(Context &c, Node &n,
                                  const std::vector<Expr> &shape,
                                  bool allowZero) {
  const TensorType &x = inputType(n, 0);
  std::string label = n.describe() + ": shape [" + printExprs(shape) + "]";
  // r[i]: element i with 0 resolved (copy the input's dim) but -1 kept.
  std::vector<Expr> r;
  Expr minusOnes = Expr(0);
  for (size_t i = 0; i < shape.size(); ++i) {
    const Expr &v = shape[i];
    c.graph.addAssumption(cmp(BinOp::GE, v, Expr(-1)),
                          label + ": element " + std::to_string(i) +
                              " is below -1");
    minusOnes = minusOnes + Select::make(cmp(BinOp::EQ, v, Expr(-1)), Expr(1),
                                         Expr(0));
    if (allowZero) {
      r.push_back(v);
    } else if (i < static_cast<size_t>(x.rank())) {
      r.push_back(Select::make(cmp(BinOp::EQ, v, Expr(0)), x.dims[i], v));
    } else {
      c.graph.addAssumption(cmp(BinOp::NE, v, Expr(0)),
                            label + ": element " + std::to_string(i) +
                                " is 0 (copy) but the input " + x.str() +
                                " has no dim " + std::to_string(i));
      r.push_back(v);
    }
  }
  c.graph.addAssumption(cmp(BinOp::LE, simplifyDim(c, minusOnes), Expr(1)),
                        label + " has more than one -1");
  std::vector<Expr> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    // With element i at -1, every other element is a size.
    std::vector<Expr> others;
    for (size_t j = 0; j < shape.size(); ++j)
      if (j != i)
        others.push_back(r[j]);
    Expr rest = simplifyDim(c, product(others));
    Expr isInferred = cmp(BinOp::EQ, shape[i], Expr(-1));
    c.graph.addAssumption(
        logicalOr(cmp(BinOp::NE, shape[i], Expr(-1)),
                  logicalAnd(cmp(BinOp::GT, rest, Expr(0)),
                             cmp(BinOp::EQ, mod(x.numel(), rest), Expr(0)))),
        label + ": cannot infer the -1 of element " + std::to_string(i) +
            " (the other elements' product " + printExpr(rest) +
            " is 0 or does not divide the input's " + printExpr(x.numel()) +
            " elements)");
    out.push_back(simplifyDim(
        c, Select::make(isInferred, floorDiv(x.numel(), rest), r[i])));
  }
  return out;
}

/// The output dims of a Reshape to \p shape whose elements are sizes or
/// ONNX's 0 (copy) and -1 (infer) as constants.
Expected<std::vector<Expr>> reshapeOfSizes(Context &c, Node &n,
                                           const std::vector<Expr> &shape,
                                           bool allowZero) {
  const TensorType &x = inputType(n, 0);
  std::vector<Expr> out;
  int inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    Expr s = shape[i];
    int64_t v;
    if (s.isConst(v)) {
      if (v == 0 && !allowZero) {
        if (i >= static_cast<size_t>(x.rank()))
          return makeError(n.describe(), ": shape element ", i,
                           " is 0 (copy) but the input ", x.str(),
                           " has no dim ", i);
        s = x.dims[i];
      } else if (v == -1) {
        if (inferred >= 0)
          return makeError(n.describe(), ": shape has more than one -1");
        inferred = static_cast<int>(i);
      } else if (v < -1) {
        return makeError(n.describe(), ": shape element ", i, " is ", v);
      }
    }
    out.push_back(s);
  }
  if (inferred >= 0) {
    std::vector<Expr> known;
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int>(i) != inferred)
        known.push_back(out[i]);
    Expr knownNumel = simplifyDim(c, product(known));
    if (knownNumel.isConstValue(0))
      return makeError(n.describe(), ": cannot infer the -1 dim of a shape "
                                     "with a 0 dim");
    out[inferred] = divideProducts(c, x.dims, known);
    int64_t total, part;
    if (simplifyDim(c, x.numel()).isConst(total) && knownNumel.isConst(part) &&
        total % part != 0)
      return makeError(n.describe(), ": cannot reshape ", x.str(), " into [",
                       printExprs(shape), "]: ", total,
                       " elements are not divisible by ", part);
  }
  return out;
}

Status inferReshape(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> shape, knownData(n, 1, "shape"));
  bool allowZero = n.intAttr("allowzero") != 0;
  for (Expr &e : shape)
    e = simplifyDim(c, e);
  bool ofValues = std::any_of(shape.begin(), shape.end(), [&](const Expr &e) {
    int64_t v;
    return !e.isConst(v) && !proveLE(Expr(0), e, c.env);
  });
  std::vector<Expr> out;
  if (ofValues) {
    out = reshapeOfValues(c, n, shape, allowZero);
  } else {
    AOTC_ASSIGN_OR_RETURN(out, reshapeOfSizes(c, n, shape, allowZero));
  }
  int64_t a, b;
  Expr inCount = simplifyDim(c, x.numel()),
       outCount = simplifyDim(c, product(out));
  if (inCount.isConst(a) && outCount.isConst(b) && a != b)
    return makeError(n.describe(), ": cannot reshape ", x.str(), " (", a,
                     " elements) into [", printExprs(out), "] (", b,
                     " elements)");
  // Where the element counts are not provably equal (a -1 that must divide
  // evenly, shape elements computed from other dims), the run checks them.
  if (!proveEqual(inCount, outCount, c.env))
    c.graph.addAssumption(
        cmp(BinOp::EQ, inCount, outCount),
        n.describe() + ": cannot reshape " + inputLabel(n, 0) + " " + x.str() +
            " (" + printExpr(inCount) + " elements) into [" + printExprs(out) +
            "] (" + printExpr(outCount) + " elements)");
  setResult(c, n, 0, x.dtype, out);
  if (const std::vector<Expr> *d = dataOf(n, 0))
    if (out.size() <= 1)
      setResultData(c, n, 0, *d);
  return Status::ok();
}

Status inferFlatten(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  int64_t axis = n.intAttr("axis");
  if (axis < -x.rank() || axis > x.rank())
    return makeError(n.describe(), ": axis ", axis,
                     " is out of range for rank ", x.rank());
  if (axis < 0)
    axis += x.rank();
  n.setAttr("axis", Attribute{axis, std::nullopt});
  std::vector<Expr> outer(x.dims.begin(), x.dims.begin() + axis);
  std::vector<Expr> inner(x.dims.begin() + axis, x.dims.end());
  setResult(c, n, 0, x.dtype, {product(outer), product(inner)});
  return Status::ok();
}

Status inferTranspose(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  std::vector<int64_t> perm = n.intsAttr("perm");
  for (int64_t p : perm) // a permutation of 0..rank-1: no negative axes
    if (p < 0 || p >= x.rank())
      return makeError(n.describe(), ": perm value ", p, " is not in [0, ",
                       x.rank(), ")");
  if (static_cast<int64_t>(perm.size()) != x.rank())
    return makeError(n.describe(), ": attribute 'perm' has ", perm.size(),
                     " entries for input ", x.str());
  AOTC_ASSIGN_OR_RETURN(perm, normalizeAxes(n, perm, x.rank(),
                                            /*sort=*/false, "perm"));
  n.setAttr("perm", Attribute{perm, std::nullopt});
  std::vector<Expr> out;
  for (int64_t p : perm)
    out.push_back(x.dims[p]);
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

/// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input after.
Expected<std::optional<std::vector<int64_t>>> squeezeAxes(const Context &c,
                                                          const Node &n) {
  if (n.input(1)) {
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, knownInts(n, 1, "axes"));
    return std::optional<std::vector<int64_t>>(axes);
  }
  if (!n.hasAttr("axes"))
    return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(n.intsAttr("axes"));
}

/// Squeeze/Unsqueeze with axes given at run time: the dims are sizes the
/// wrapper derives per run (lowered as a reshape view).
Status inferSqueezeRuntimeAxes(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  const std::vector<Expr> &axes = *n.input(1)->symbolicData();
  int64_t count = static_cast<int64_t>(axes.size());
  std::vector<Expr> out;
  if (n.op() == OpKind::Squeeze) {
    if (count > x.rank())
      return makeError(n.describe(), ": ", count,
                       " axes given at run time for an input of rank ",
                       x.rank());
    requireRuntimeAxes(c, n, axes, x.rank());
    std::vector<Expr> mask = runtimeAxisMask(axes, x.rank());
    for (int64_t i = 0; i < x.rank(); ++i)
      if (!x.dims[i].isConstValue(1))
        c.graph.addAssumption(
            logicalOr(cmp(BinOp::EQ, Select::make(mask[i], Expr(1), Expr(0)),
                          Expr(0)),
                      cmp(BinOp::EQ, x.dims[i], Expr(1))),
            n.describe() + ": dim " + std::to_string(i) + " of " +
                inputLabel(n, 0) + " (" + printExpr(x.dims[i]) +
                ") must be 1 to be squeezed");
    out = runtimeAxisDroppedDims(mask, x.dims, x.rank() - count);
  } else {
    int64_t rank = x.rank() + count;
    requireRuntimeAxes(c, n, axes, rank);
    // Output dim j is 1 where an axis names it, else the input's next dim:
    // x's dim (j - the axes before j).
    std::vector<Expr> mask = runtimeAxisMask(axes, rank);
    Expr inserted = Expr(0);
    for (int64_t j = 0; j < rank; ++j) {
      Expr dim = Expr(0);
      for (int64_t i = 0; i < x.rank(); ++i)
        dim = dim + Select::make(cmp(BinOp::EQ, Expr(j) - inserted, Expr(i)),
                                 x.dims[i], Expr(0));
      out.push_back(Select::make(mask[j], Expr(1), dim));
      inserted = inserted + Select::make(mask[j], Expr(1), Expr(0));
    }
  }
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

Status inferSqueeze(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (givenAtRunTime(n, 1))
    return inferSqueezeRuntimeAxes(c, n);
  AOTC_ASSIGN_OR_RETURN(auto axes, squeezeAxes(c, n));
  std::vector<bool> drop(x.rank(), false);
  if (axes) {
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> norm,
                          normalizeAxes(n, *axes, x.rank(), /*sort=*/true));
    for (int64_t a : norm) {
      auto b = boundsOf(x.dims[a], c.env);
      if (b && (b->min > 1 || b->max < 1))
        return makeError(n.describe(), ": cannot squeeze dim ", a, " of ",
                         x.str(), ": it is not 1");
      if (!x.dims[a].isConstValue(1)) // checked when the model runs
        c.graph.addAssumption(cmp(BinOp::EQ, x.dims[a], Expr(1)),
                              n.describe() + ": dim " + std::to_string(a) +
                                  " of " + inputLabel(n, 0) + " (" +
                                  printExpr(x.dims[a]) +
                                  ") must be 1 to be squeezed");
      drop[a] = true;
    }
  } else {
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (x.dims[i].isConstValue(1)) {
        drop[i] = true;
        continue;
      }
      auto b = boundsOf(x.dims[i], c.env);
      if (!b || (b->min <= 1 && b->max >= 1))
        return makeError(n.describe(), ": cannot squeeze ", x.str(),
                         " without axes: dim ", i, " may or may not be 1");
    }
  }
  std::vector<Expr> out;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[i])
      out.push_back(x.dims[i]);
  setResult(c, n, 0, x.dtype, std::move(out));
  if (const std::vector<Expr> *d = dataOf(n, 0))
    setResultData(c, n, 0, *d);
  return Status::ok();
}

Status inferUnsqueeze(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (givenAtRunTime(n, 1))
    return inferSqueezeRuntimeAxes(c, n);
  AOTC_ASSIGN_OR_RETURN(auto axes, squeezeAxes(c, n));
  if (!axes)
    return makeError(n.describe(), ": axes are missing");
  int64_t rank = x.rank() + static_cast<int64_t>(axes->size());
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> norm,
                        normalizeAxes(n, *axes, rank, /*sort=*/true));
  std::vector<Expr> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::binary_search(norm.begin(), norm.end(), i))
      out.push_back(Expr(1));
    else
      out.push_back(x.dims[next++]);
  }
  setResult(c, n, 0, x.dtype, std::move(out));
  if (const std::vector<Expr> *d = dataOf(n, 0))
    if (rank <= 1)
      setResultData(c, n, 0, *d);
  return Status::ok();
}

Status inferConcat(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  int64_t axis = n.intAttr("axis");
  AOTC_ASSIGN_OR_RETURN(axis, normalizeAxis(n, axis, x.rank()));
  n.setAttr("axis", Attribute{axis, std::nullopt});
  std::vector<Expr> out = x.dims;
  bool allData = true;
  std::vector<Expr> data;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const TensorType &t = inputType(n, i);
    if (t.dtype != x.dtype || t.rank() != x.rank())
      return makeError(n.describe(), ": ", inputLabel(n, i), " ", t.str(),
                       " does not match ", inputLabel(n, 0), " ", x.str());
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d == axis)
        continue;
      AOTC_RETURN_IF_ERROR(
          requireEqual(c, n, t.dims[d], x.dims[d],
                       "dims " + std::to_string(d) + " of the inputs"));
    }
    if (i > 0)
      out[axis] = out[axis] + t.dims[axis];
    const std::vector<Expr> *d = dataOf(n, i);
    if (d && t.rank() == 1)
      data.insert(data.end(), d->begin(), d->end());
    else
      allData = false;
  }
  setResult(c, n, 0, x.dtype, std::move(out));
  if (allData)
    setResultData(c, n, 0, std::move(data));
  return Status::ok();
}

Status inferGather(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0), &idx = inputType(n, 1);
  if (idx.dtype != DType::Int64 && idx.dtype != DType::Int32)
    return makeError(n.describe(), ": indices must be int32 or int64, got ",
                     dtypeName(idx.dtype));
  int64_t axis = n.intAttr("axis");
  AOTC_ASSIGN_OR_RETURN(axis, normalizeAxis(n, axis, x.rank()));
  n.setAttr("axis", Attribute{axis, std::nullopt});
  std::vector<Expr> out(x.dims.begin(), x.dims.begin() + axis);
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
  setResult(c, n, 0, x.dtype, std::move(out));
  const std::vector<Expr> *d = dataOf(n, 0);
  const std::vector<Expr> *id = dataOf(n, 1);
  if (!d || !id || x.rank() != 1)
    return Status::ok();
  std::vector<Expr> r;
  int64_t len = static_cast<int64_t>(d->size());
  for (const Expr &e : *id) {
    int64_t i;
    if (!e.isConst(i))
      return Status::ok();
    if (i < -len || i >= len)
      return makeError(n.describe(), ": index ", i,
                       " is out of range for input ", x.str());
    r.push_back((*d)[i < 0 ? i + len : i]);
  }
  setResultData(c, n, 0, std::move(r));
  return Status::ok();
}

/// A Slice whose axes or steps are given at run time (value symbols): each
/// dim's start and step are sizes the wrapper derives per run (lowering
/// reads x at start + o * step), its size a derived size; the run refuses
/// a step of 0 and axes outside [-rank, rank) or named twice.
Status inferSliceRuntime(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> starts, knownData(n, 1, "starts"));
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> ends, knownData(n, 2, "ends"));
  std::vector<Expr> axes, steps;
  if (n.input(3)) {
    AOTC_ASSIGN_OR_RETURN(axes, knownData(n, 3, "axes"));
  } else {
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(Expr(static_cast<int64_t>(i)));
  }
  if (n.input(4)) {
    AOTC_ASSIGN_OR_RETURN(steps, knownData(n, 4, "steps"));
  } else {
    steps.assign(starts.size(), Expr(1));
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return makeError(n.describe(), ": starts, ends, axes and steps differ in "
                                   "length");
  if (static_cast<int64_t>(axes.size()) > x.rank())
    return makeError(n.describe(), ": ", axes.size(), " axes for an input of "
                                   "rank ", x.rank());
  if (givenAtRunTime(n, 3)) {
    requireRuntimeAxes(c, n, axes, x.rank());
  } else {
    std::vector<int64_t> constAxes;
    for (const Expr &a : axes) {
      int64_t v = 0;
      a.isConst(v);
      constAxes.push_back(v);
    }
    AOTC_RETURN_IF_ERROR(normalizeAxes(n, constAxes, x.rank(), false).status());
  }
  for (size_t j = 0; j < steps.size(); ++j)
    c.graph.addAssumption(cmp(BinOp::NE, steps[j], Expr(0)),
                          n.describe() + ": steps[" + std::to_string(j) +
                              "] (" + printExpr(steps[j]) + ") is 0");
  std::vector<SliceDim> dims = runtimeSlice(starts, ends, axes, steps, x.dims);
  std::vector<Expr> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string base = n.output(0)->name() + "_";
    deriveSignedSymbol(c, base + "start" + std::to_string(i), dims[i].start);
    deriveSignedSymbol(c, base + "step" + std::to_string(i), dims[i].step);
    out.push_back(dims[i].size);
  }
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

Status inferSlice(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (n.numInputs() > 1 && (givenAtRunTime(n, 3) || givenAtRunTime(n, 4)))
    return inferSliceRuntime(c, n);
  std::vector<Expr> starts, ends;
  std::vector<int64_t> axes, steps;
  bool hasAxes = false;
  if (c.opset < 10 && n.numInputs() == 1) {
    const std::vector<int64_t> &s = n.intsAttr("starts");
    const std::vector<int64_t> &e = n.intsAttr("ends");
    starts.assign(s.begin(), s.end());
    ends.assign(e.begin(), e.end());
    hasAxes = n.hasAttr("axes");
    if (hasAxes)
      axes = n.intsAttr("axes");
  } else {
    AOTC_ASSIGN_OR_RETURN(starts, knownData(n, 1, "starts"));
    AOTC_ASSIGN_OR_RETURN(ends, knownData(n, 2, "ends"));
    if (n.input(3)) {
      hasAxes = true;
      AOTC_ASSIGN_OR_RETURN(axes, knownInts(n, 3, "axes"));
    }
    if (n.input(4)) {
      AOTC_ASSIGN_OR_RETURN(steps, knownInts(n, 4, "steps"));
    }
  }
  if (!hasAxes)
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return makeError(n.describe(), ": starts, ends, axes and steps differ in "
                                   "length");
  AOTC_ASSIGN_OR_RETURN(axes, normalizeAxes(n, axes, x.rank(), false));
  std::vector<Expr> out = x.dims;
  // Per axis: start, step; used for symbolic data of a 1-D input.
  Expr dataStart = Expr(0);
  int64_t dataStep = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    const Expr &dim = x.dims[axes[i]];
    int64_t step = steps[i];
    if (step == 0)
      return makeError(n.describe(), ": step of axis ", axes[i], " is 0");
    // A step beyond any size takes at most one element: the same as 2^62,
    // which keeps the size arithmetic below 2^63.
    constexpr int64_t kMaxStep = int64_t{1} << 62;
    step = std::max(-kMaxStep, std::min(step, kMaxStep));
    Expr start, end, size;
    if (step > 0) {
      start = clampSliceIndex(starts[i], dim, 0, 0, c.env);
      end = clampSliceIndex(ends[i], dim, 0, 0, c.env);
      size = floorDiv(end - start + Expr(step - 1), Expr(step));
    } else {
      start = clampSliceIndex(starts[i], dim, 0, -1, c.env);
      end = clampSliceIndex(ends[i], dim, -1, -1, c.env);
      size = floorDiv(start - end + Expr(-step - 1), Expr(-step));
    }
    out[axes[i]] = maxOf(c, simplifyDim(c, size), Expr(0));
    dataStart = start;
    dataStep = step;
  }
  setResult(c, n, 0, x.dtype, out);
  const std::vector<Expr> *d = dataOf(n, 0);
  int64_t first, count;
  if (d && x.rank() == 1 && simplifyDim(c, dataStart).isConst(first) &&
      simplifyDim(c, out[0]).isConst(count)) {
    std::vector<Expr> r;
    for (int64_t k = 0; k < count; ++k) {
      int64_t i = first + k * dataStep;
      if (i < 0 || i >= static_cast<int64_t>(d->size()))
        return Status::ok();
      r.push_back((*d)[i]);
    }
    setResultData(c, n, 0, std::move(r));
  }
  return Status::ok();
}

Status inferPad(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> pads, padAmounts(n));
  if (n.input(2)) {
    const TensorType &v = inputType(n, 2);
    if (v.dtype != x.dtype || !simplifyDim(c, v.numel()).isConstValue(1))
      return makeError(n.describe(), ": ", inputLabel(n, 2),
                       " (constant_value) must be a one-element ",
                       dtypeName(x.dtype), " tensor, got ", v.str());
  }
  const std::string &mode = n.stringAttr("mode");
  int64_t r = x.rank();
  std::vector<Expr> out;
  for (int64_t i = 0; i < r; ++i) {
    const Expr &begin = pads[i], &end = pads[i + r];
    Expr d = simplifyDim(c, x.dims[i] + begin + end);
    int64_t v;
    if (d.isConst(v) && v < 0)
      return makeError(n.describe(), ": pads make dim ", i, " of ", x.str(),
                       " negative");
    bool padded = !(begin.isConstValue(0) && end.isConstValue(0));
    if (mode == "constant" || !padded) {
      out.push_back(d);
      continue;
    }
    // edge, reflect and wrap pad the part that negative pads keep (ONNX
    // crops first) by reading its edge elements: it is not empty...
    PadKept kept = padKept(x.dims[i], begin, end, c.env);
    // Requires \p holds (unless \p proven): a compile error when it
    // simplifies to false, else a run-time check naming the node.
    auto require = [&](const Expr &holds, bool proven,
                       const std::string &what) -> Status {
      if (proven)
        return Status::ok();
      std::string pads = n.describe() + ": " + mode + " pads " +
                         printExpr(begin) + ", " + printExpr(end) +
                         " of dim " + std::to_string(i);
      Expr h = simplify(holds, c.env);
      int64_t k;
      if (h.isConst(k) && !k)
        return makeError(pads, " of ", x.str(), ": ", what);
      if (!h.isConst(k))
        c.graph.addAssumption(h, pads + " (" + printExpr(x.dims[i]) +
                                     "): " + what);
      return Status::ok();
    };
    // (Pads that only crop read nothing beyond what they keep.)
    AOTC_RETURN_IF_ERROR(require(
        logicalOr(logicalAnd(cmp(BinOp::LE, begin, Expr(0)),
                             cmp(BinOp::LE, end, Expr(0))),
                  cmp(BinOp::GE, kept.length, Expr(1))),
        (proveLE(begin, Expr(0), c.env) && proveLE(end, Expr(0), c.env)) ||
            proveLE(Expr(1), kept.length, c.env),
        "nothing is left to pad from"));
    // ...and reflect mirrors about its edge element, so its pads stay
    // below its size (numpy.pad would repeat the reflection; ONNX Runtime
    // answers otherwise).
    if (mode == "reflect")
      for (const Expr &p : {begin, end})
        AOTC_RETURN_IF_ERROR(
            require(cmp(BinOp::LT, p, kept.length),
                    proveLE(p + Expr(1), kept.length, c.env),
                    "reflect pads must be smaller than the size they mirror"));
    out.push_back(d);
  }
  setResult(c, n, 0, x.dtype, std::move(out));
  return Status::ok();
}

/// Split: the sizes of the parts, from the split input (opset 13+) or
/// attribute, else equal parts (ceil(dim / parts), the last one smaller, as
/// opset 18 defines it; earlier opsets require equal parts).
Status inferSplit(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (x.rank() == 0)
    return makeError(n.describe(), ": cannot split a scalar");
  AOTC_ASSIGN_OR_RETURN(int64_t axis,
                        normalizeAxis(n, n.intAttr("axis"), x.rank()));
  const Expr &dim = x.dims[axis];
  size_t parts = n.outputs().size();
  std::vector<Expr> sizes;
  bool given = n.input(1) || n.hasAttr("split");
  if (n.input(1)) {
    AOTC_ASSIGN_OR_RETURN(sizes, knownData(n, 1, "split"));
  } else if (n.hasAttr("split")) {
    for (int64_t v : n.intsAttr("split"))
      sizes.push_back(Expr(v));
  }
  if (given) {
    if (sizes.size() != parts)
      return makeError(n.describe(), ": 'split' has ", sizes.size(),
                       " sizes for ", parts, " outputs");
    Expr sum = Expr(0);
    for (const Expr &e : sizes) {
      int64_t v;
      if (e.isConst(v) && v < 0)
        return makeError(n.describe(), ": 'split' has a negative size ", v);
      sum = sum + e;
    }
    Expr total = simplifyDim(c, sum);
    int64_t a, b;
    if (total.isConst(a) && dim.isConst(b) && a != b)
      return makeError(n.describe(), ": 'split' sizes sum to ", a,
                       ", not the size ", b, " of axis ", axis);
    // Sizes given at run time: the run checks them.
    for (size_t k = 0; k < sizes.size(); ++k)
      if (!proveLE(Expr(0), sizes[k], c.env))
        c.graph.addAssumption(cmp(BinOp::GE, sizes[k], Expr(0)),
                              n.describe() + ": 'split' size " +
                                  std::to_string(k) + " (" +
                                  printExpr(sizes[k]) + ") is negative");
    if (!proveEqual(total, dim, c.env)) {
      c.graph.addAssumption(cmp(BinOp::EQ, total, dim),
                            n.describe() + ": 'split' sizes sum to " +
                                printExpr(total) + ", not the size " +
                                printExpr(dim) + " of axis " +
                                std::to_string(axis));
      // Where the run's check holds, each size equals itself clamped to
      // what is left of the axis: written so, the kernels' reads are
      // provably inside the input.
      Expr offset = Expr(0);
      for (Expr &s : sizes) {
        s = simplifyDim(c, minOf(c, maxOf(c, s, Expr(0)), dim - offset));
        offset = simplifyDim(c, offset + s);
      }
    }
  } else {
    if (n.hasAttr("num_outputs") && n.intAttr("num_outputs") != (int64_t)parts)
      return makeError(n.describe(), ": num_outputs is ",
                       n.intAttr("num_outputs"), " but the node has ", parts,
                       " outputs");
    int64_t d;
    if (c.opset < 18 && dim.isConst(d) && d % (int64_t)parts != 0)
      return makeError(n.describe(), ": axis ", axis, " of size ", d,
                       " does not split into ", parts,
                       " equal parts (before opset 18)");
    Expr chunk = simplifyDim(c, floorDiv(dim + Expr((int64_t)parts - 1),
                                         Expr((int64_t)parts)));
    for (size_t i = 0; i < parts; ++i)
      sizes.push_back(
          maxOf(c, Expr(0),
                minOf(c, chunk, dim - chunk * Expr((int64_t)i))));
  }
  Expr offset = Expr(0);
  const auto &data = n.input(0)->symbolicData();
  for (size_t i = 0; i < parts; ++i) {
    std::vector<Expr> dims = x.dims;
    dims[axis] = simplifyDim(c, sizes[i]);
    setResult(c, n, i, x.dtype, dims);
    // A split of a known 1-D value (a shape) keeps its elements.
    int64_t off, len;
    if (data && x.rank() == 1 && simplifyDim(c, offset).isConst(off) &&
        dims[axis].isConst(len) && off + len <= (int64_t)data->size())
      setResultData(c, n, i,
                    std::vector<Expr>(data->begin() + off,
                                      data->begin() + off + len));
    offset = offset + sizes[i];
  }
  return Status::ok();
}

/// Range: integer start, limit and delta with known values (constants or
/// given at run time: the count a derived size, a delta of 0 refused by the
/// run), or float bounds that are constants or given by graph inputs (the
/// count computed in double by the wrapper). Integer results with a
/// constant delta keep their elements as symbolic data.
Status inferRange(Context &c, Node &n) {
  DType t = inputType(n, 0).dtype;
  for (size_t i = 0; i < 3; ++i) {
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, i));
    if (inputType(n, i).rank() != 0)
      return makeError(n.describe(), ": ", inputLabel(n, i),
                       " must be a scalar, got ", inputType(n, i).str());
  }
  if (t == DType::Bool)
    return makeError(n.describe(), ": unsupported dtype 'bool'");
  const char *names[3] = {"start", "limit", "delta"};
  Expr size;
  std::vector<Expr> data;
  if (isFloat(t)) {
    // Each bound a constant or a float value known by the wrapper (a float
    // input, an integer one cast): the count ceil((limit - start) / delta)
    // in double, at compile time or per run.
    Expr v[3];
    bool allConst = true;
    for (size_t i = 0; i < 3; ++i) {
      const Value *in = n.input(i);
      if (in->isConstant()) {
        c.graph.freezeInitializer(in, "read at compile time as a bound of " +
                                          n.describe());
        v[i] = FloatImm::make(tensorDataFloat(in->data(), t, 0),
                              DType::Float64);
      } else if (in->symbolicData() && in->symbolicData()->size() == 1) {
        const Expr &e = in->symbolicData()->front();
        if (const FloatImm *f = e.as<FloatImm>()) { // a constant cast
          v[i] = FloatImm::make(f->value, DType::Float64);
        } else {
          v[i] = Cast::make(DType::Float64, e);
          allConst = false;
        }
      } else {
        return makeError(n.describe(), ": ", inputLabel(n, i),
                         " must be known at compile time or given by a graph "
                         "input (the size of a float Range)");
      }
    }
    if (allConst) {
      double b[3];
      for (size_t i = 0; i < 3; ++i)
        b[i] = v[i].as<FloatImm>()->value;
      if (b[2] == 0)
        return makeError(n.describe(), ": delta is 0");
      double count = std::ceil((b[1] - b[0]) / b[2]);
      if (!(count < double(int64_t{1} << 40)))
        return makeError(n.describe(), ": ", count, " elements are too many");
      size = Expr(std::max<int64_t>(0, static_cast<int64_t>(count)));
    } else {
      c.graph.addAssumption(
          Binary::make(BinOp::NE, v[2], FloatImm::make(0, DType::Float64)),
          n.describe() + ": delta is 0");
      Expr count = Call::make(
          DType::Float64, "ceil",
          {Binary::make(BinOp::Div, Binary::make(BinOp::Sub, v[1], v[0]),
                        v[2])});
      size = deriveSymbol(c, n.output(0)->name() + "_d0",
                          maxExpr(Cast::make(DType::Int64, count), Expr(0)));
    }
  } else {
    std::vector<Expr> v(3);
    for (size_t i = 0; i < 3; ++i) {
      AOTC_ASSIGN_OR_RETURN(std::vector<Expr> d, knownData(n, i, names[i]));
      v[i] = d.at(0);
    }
    int64_t delta;
    if (v[2].isConst(delta)) {
      if (delta == 0)
        return makeError(n.describe(), ": delta is 0");
      Expr span = delta > 0 ? v[1] - v[0] : v[0] - v[1];
      int64_t step = delta > 0 ? delta : -delta;
      size = maxOf(c, Expr(0), simplifyDim(c, floorDiv(span + Expr(step - 1),
                                                       Expr(step))));
      int64_t count;
      if (size.isConst(count) && count <= 64)
        for (int64_t i = 0; i < count; ++i)
          data.push_back(simplifyDim(c, v[0] + Expr(i * delta)));
    } else {
      // A delta given at run time: ceil(span / |delta|) on the side of its
      // sign; the run refuses 0.
      c.graph.addAssumption(cmp(BinOp::NE, v[2], Expr(0)),
                            n.describe() + ": delta is 0");
      Expr up = floorDiv(v[1] - v[0] + v[2] - Expr(1), v[2]);
      Expr down = floorDiv(v[0] - v[1] - v[2] - Expr(1), Expr(0) - v[2]);
      size = maxExpr(Select::make(cmp(BinOp::GT, v[2], Expr(0)), up, down),
                     Expr(0));
    }
  }
  setResult(c, n, 0, t, {size});
  if (!data.empty())
    setResultData(c, n, 0, std::move(data));
  return Status::ok();
}

Status inferShape(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  int64_t rank = x.rank();
  int64_t start = n.intAttr("start");
  int64_t end = n.hasAttr("end") ? n.intAttr("end") : rank;
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  start = clamp(start);
  end = std::max(clamp(end), start);
  std::vector<Expr> dims(x.dims.begin() + start, x.dims.begin() + end);
  setResult(c, n, 0, DType::Int64, {Expr(end - start)});
  setResultData(c, n, 0, std::move(dims));
  return Status::ok();
}

/// Sets the result of a Constant node from its tensor attribute.
void setTensorResult(Context &c, Node &n, const Attribute &a) {
  const auto &[type, data] = *a.tensor;
  setResult(c, n, 0, type.dtype, type.dims);
  if ((type.dtype == DType::Int64 || type.dtype == DType::Int32) &&
      type.rank() <= 1 && type.isStatic()) {
    int64_t count = type.rank() == 0 ? 1 : type.staticDims()[0];
    if (count > 64)
      return;
    std::vector<Expr> r;
    for (int64_t i = 0; i < count; ++i)
      r.push_back(Expr(tensorDataInt(data, type.dtype, i)));
    setResultData(c, n, 0, std::move(r));
  }
}

Status inferConstantOfShape(Context &c, Node &n) {
  const TensorType &s = inputType(n, 0);
  if (s.dtype != DType::Int64 || s.rank() != 1)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must be a 1-D int64 shape, got ", s.str());
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, knownData(n, 0, "shape"));
  DType dt = DType::Float32;
  std::optional<int64_t> fill = 0;
  auto it = n.attrs().find("value");
  if (it != n.attrs().end()) {
    if (!it->second.tensor)
      return makeError(n.describe(), ": attribute 'value' must be a tensor");
    const auto &[type, data] = *it->second.tensor;
    dt = type.dtype;
    fill = isFloat(dt) ? std::nullopt
                       : std::optional<int64_t>(tensorDataInt(data, dt, 0));
  }
  setResult(c, n, 0, dt, dims);
  int64_t count;
  if (fill && (dt == DType::Int64 || dt == DType::Int32) && dims.size() == 1 &&
      simplifyDim(c, dims[0]).isConst(count) && count <= 64)
    setResultData(c, n, 0, std::vector<Expr>(count, Expr(*fill)));
  return Status::ok();
}

/// Along every axis but \p axis, input 1 (GatherElements' and
/// ScatterElements' indices) must not reach past input 0 (the data): each
/// element is read or written at its own position there. Exceeding for
/// every size is an error now; not provable at compile time (symbolic
/// dims), an assumption the run checks, from which the kernels' accesses
/// are proven.
Status requireIndicesWithinData(Context &c, const Node &n, int64_t axis) {
  const TensorType &x = inputType(n, 0), &idx = inputType(n, 1);
  for (int64_t k = 0; k < x.rank(); ++k) {
    if (k == axis)
      continue;
    auto b = boundsOf(simplifyDim(c, x.dims[k] - idx.dims[k]), c.env);
    if (b && b->min >= 0)
      continue;
    std::string what = n.describe() + ": dim " + std::to_string(k) + " of " +
                       inputLabel(n, 1) + " " + idx.str() +
                       " must not exceed the data's " + x.str();
    if (b && b->max < 0)
      return makeError(what);
    c.graph.addAssumption(cmp(BinOp::LE, idx.dims[k], x.dims[k]), what);
  }
  return Status::ok();
}

} // namespace

Status inferTensorOp(Context &c, Node &n) {
  switch (n.op()) {
  case OpKind::Reshape:
    return inferReshape(c, n);
  case OpKind::Flatten:
    return inferFlatten(c, n);
  case OpKind::Transpose:
    return inferTranspose(c, n);
  case OpKind::Squeeze:
    return inferSqueeze(c, n);
  case OpKind::Unsqueeze:
    return inferUnsqueeze(c, n);
  case OpKind::Concat:
    return inferConcat(c, n);
  case OpKind::Gather:
    return inferGather(c, n);
  case OpKind::Slice:
    return inferSlice(c, n);
  case OpKind::Pad:
    return inferPad(c, n);
  case OpKind::Expand: {
    const TensorType &x = inputType(n, 0);
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> shape, knownData(n, 1, "shape"));
    // Elements given at run time (they may be negative, unlike dims): 1
    // keeps the input's dim, anything else must equal it, unless the
    // input's dim is 1.
    for (size_t i = 0; i < shape.size(); ++i) {
      Expr v = simplifyDim(c, shape[i]);
      size_t fromEnd = shape.size() - i;
      int64_t k;
      if (v.isConst(k) || proveLE(Expr(0), v, c.env) ||
          fromEnd > static_cast<size_t>(x.rank()))
        continue;
      const Expr &d = x.dims[x.rank() - fromEnd];
      if (d.isConstValue(1))
        continue;
      c.graph.addAssumption(
          logicalOr(cmp(BinOp::EQ, v, Expr(1)), cmp(BinOp::EQ, v, d)),
          n.describe() + ": shape element " + std::to_string(i) + " (" +
              printExpr(v) + ") is neither 1 nor the input's dim " +
              printExpr(d));
      shape[i] = Expr(1); // broadcasts to the input's dim
    }
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> out,
                          broadcastShapes(c, n, x.dims, shape));
    setResult(c, n, 0, x.dtype, std::move(out));
    return Status::ok();
  }
  case OpKind::Tile: {
    // out dim k = in dim k * repeats[k] (repeats known at compile time).
    const TensorType &x = inputType(n, 0);
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> reps, knownData(n, 1, "repeats"));
    if (static_cast<int64_t>(reps.size()) != x.rank())
      return makeError(n.describe(), ": ", reps.size(), " repeats for ",
                       inputLabel(n, 0), " ", x.str());
    std::vector<Expr> out;
    for (int64_t k = 0; k < x.rank(); ++k) {
      auto b = boundsOf(reps[k], c.env);
      if (b && b->max < 0)
        return makeError(n.describe(), ": repeats value ", printExpr(reps[k]),
                         " is negative");
      if (!b || b->min < 0) // given at run time: the run checks it
        c.graph.addAssumption(cmp(BinOp::GE, reps[k], Expr(0)),
                              n.describe() + ": repeats value " +
                                  printExpr(reps[k]) + " is negative");
      out.push_back(simplifyDim(c, x.dims[k] * reps[k]));
    }
    setResult(c, n, 0, x.dtype, std::move(out));
    return Status::ok();
  }
  case OpKind::DepthToSpace:
  case OpKind::SpaceToDepth: {
    const TensorType &x = inputType(n, 0);
    if (x.rank() != 4)
      return makeError(n.describe(), ": ", inputLabel(n, 0), " ", x.str(),
                       " must have rank 4");
    int64_t b = n.intAttr("blocksize"), ch = 0;
    if (b < 1)
      return makeError(n.describe(), ": blocksize ", b, " must be positive");
    if (n.op() == OpKind::DepthToSpace && n.stringAttr("mode") != "DCR" &&
        n.stringAttr("mode") != "CRD")
      return makeError(n.describe(), ": mode '", n.stringAttr("mode"),
                       "' is not DCR or CRD");
    std::vector<Expr> out = {x.dims[0]};
    if (n.op() == OpKind::DepthToSpace) {
      // Symbolic channels: C / b^2, checked per run to divide.
      const bool staticChannels = x.dims[1].isConst(ch);
      if (staticChannels && ch % (b * b) != 0)
        return makeError(n.describe(), ": channels ", ch,
                         " are not divisible by blocksize^2 = ", b * b);
      Expr q = simplifyDim(c, floorDiv(x.dims[1], Expr(b * b)));
      if (!staticChannels)
        c.graph.addAssumption(
            cmp(BinOp::EQ, simplifyDim(c, q * Expr(b * b)), x.dims[1]),
            n.describe() + ": the channels of " + inputLabel(n, 0) + " (" +
                printExpr(x.dims[1]) + ") must be divisible by blocksize^2 = " +
                std::to_string(b * b));
      out.push_back(q);
      out.push_back(simplifyDim(c, x.dims[2] * Expr(b)));
      out.push_back(simplifyDim(c, x.dims[3] * Expr(b)));
    } else {
      out.push_back(simplifyDim(c, x.dims[1] * Expr(b * b)));
      for (int k = 2; k < 4; ++k) {
        Expr q = simplifyDim(c, floorDiv(x.dims[k], Expr(b)));
        int64_t e;
        if (x.dims[k].isConst(e) && e % b != 0)
          return makeError(n.describe(), ": dim ", k, " (", e,
                           ") is not divisible by blocksize ", b);
        if (!x.dims[k].isConst(e))
          c.graph.addAssumption(
              cmp(BinOp::EQ, simplifyDim(c, q * Expr(b)), x.dims[k]),
              n.describe() + ": dim " + std::to_string(k) + " of " +
                  inputLabel(n, 0) + " (" + printExpr(x.dims[k]) +
                  ") must be divisible by blocksize " + std::to_string(b));
        out.push_back(q);
      }
    }
    setResult(c, n, 0, x.dtype, std::move(out));
    return Status::ok();
  }
  case OpKind::Shape:
    return inferShape(c, n);
  case OpKind::Split:
    return inferSplit(c, n);
  case OpKind::GatherElements: {
    // The output has the indices' shape; along every other axis the
    // indices may not reach past the data (each output element reads the
    // data at its own position there).
    const TensorType &x = inputType(n, 0), &idx = inputType(n, 1);
    if (idx.dtype != DType::Int64 && idx.dtype != DType::Int32)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " must be int32 or int64, got ", idx.str());
    if (x.rank() == 0 || idx.rank() != x.rank())
      return makeError(n.describe(), ": ", inputLabel(n, 1), " ", idx.str(),
                       " must have the rank of ", inputLabel(n, 0), " ",
                       x.str(), " (1 or more)");
    AOTC_ASSIGN_OR_RETURN(int64_t axis,
                          normalizeAxis(n, n.intAttr("axis"), x.rank()));
    AOTC_RETURN_IF_ERROR(requireIndicesWithinData(c, n, axis));
    setResult(c, n, 0, x.dtype, idx.dims);
    return Status::ok();
  }
  case OpKind::GatherND: {
    // out = indices.shape[:-1] + data.shape[b + k:], k = indices.shape[-1]
    // (static): each index row picks a slice of the data after its first b
    // (batch) dims, which the indices share.
    const TensorType &x = inputType(n, 0), &idx = inputType(n, 1);
    if (idx.dtype != DType::Int64)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " must be int64, got ", idx.str());
    int64_t b = n.intAttr("batch_dims"), k;
    if (idx.rank() < 1 || !idx.dims.back().isConst(k))
      return makeError(n.describe(), ": the last dim of ", inputLabel(n, 1),
                       " ", idx.str(), " must be known at compile time");
    if (b < 0 || b >= std::min(x.rank(), idx.rank()) || k < 1 ||
        b + k > x.rank())
      return makeError(n.describe(), ": batch_dims ", b, " and index rows of ",
                       k, " do not fit ", inputLabel(n, 0), " ", x.str(),
                       " and ", inputLabel(n, 1), " ", idx.str());
    for (int64_t d = 0; d < b; ++d)
      AOTC_RETURN_IF_ERROR(requireEqual(c, n, x.dims[d], idx.dims[d],
                                        "batch dim " + std::to_string(d) +
                                            " of data and indices"));
    std::vector<Expr> out(idx.dims.begin(), idx.dims.end() - 1);
    out.insert(out.end(), x.dims.begin() + b + k, x.dims.end());
    setResult(c, n, 0, x.dtype, std::move(out));
    return Status::ok();
  }
  case OpKind::ScatterElements:
  case OpKind::Scatter: {
    // data's shape; updates of the indices' shape (int32 or int64, the
    // data's rank, not past the data along any other axis than axis).
    const TensorType &x = inputType(n, 0), &idx = inputType(n, 1),
                     &up = inputType(n, 2);
    if (idx.dtype != DType::Int64 && idx.dtype != DType::Int32)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " must be int32 or int64, got ", idx.str());
    if (up.dtype != x.dtype)
      return makeError(n.describe(), ": ", inputLabel(n, 2), " ", up.str(),
                       " must have the dtype of ", inputLabel(n, 0), " ",
                       x.str());
    if (x.rank() == 0 || idx.rank() != x.rank() || up.rank() != x.rank())
      return makeError(n.describe(), ": ", inputLabel(n, 1), " ", idx.str(),
                       " and ", inputLabel(n, 2), " ", up.str(),
                       " must have the rank of ", inputLabel(n, 0), " ",
                       x.str(), " (1 or more)");
    for (int k = 0; k < x.rank(); ++k)
      AOTC_RETURN_IF_ERROR(
          requireEqual(c, n, up.dims[k], idx.dims[k],
                       "dim " + std::to_string(k) + " of indices and updates"));
    AOTC_ASSIGN_OR_RETURN(int64_t axis,
                          normalizeAxis(n, n.intAttr("axis"), x.rank()));
    AOTC_RETURN_IF_ERROR(requireIndicesWithinData(c, n, axis));
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::ScatterND: {
    // data's shape; indices [..., k] (int64, k static, 1 <= k <= rank),
    // updates = indices.shape[:-1] + data.shape[k:].
    const TensorType &x = inputType(n, 0), &idx = inputType(n, 1),
                     &up = inputType(n, 2);
    if (idx.dtype != DType::Int64)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " must be int64, got ", idx.str());
    if (up.dtype != x.dtype)
      return makeError(n.describe(), ": ", inputLabel(n, 2), " ", up.str(),
                       " must have the dtype of ", inputLabel(n, 0), " ",
                       x.str());
    int64_t k;
    if (idx.rank() < 1 || !idx.dims.back().isConst(k))
      return makeError(n.describe(), ": the last dim of ", inputLabel(n, 1),
                       " ", idx.str(), " must be known at compile time");
    if (x.rank() < 1 || k < 1 || k > x.rank())
      return makeError(n.describe(), ": index rows of ", k, " do not fit ",
                       inputLabel(n, 0), " ", x.str());
    std::vector<Expr> want(idx.dims.begin(), idx.dims.end() - 1);
    want.insert(want.end(), x.dims.begin() + k, x.dims.end());
    if (up.rank() != static_cast<int>(want.size()))
      return makeError(n.describe(), ": ", inputLabel(n, 2), " ", up.str(),
                       " must have rank ", want.size(),
                       " (indices' leading dims, then data's after the first ",
                       k, ")");
    for (size_t d = 0; d < want.size(); ++d)
      AOTC_RETURN_IF_ERROR(
          requireEqual(c, n, up.dims[d], want[d],
                       "dim " + std::to_string(d) + " of updates"));
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::Range:
    return inferRange(c, n);
  case OpKind::Resize:
    return inferResize(c, n);
  case OpKind::EyeLike:
  case OpKind::OneHot:
    return inferGenerate(c, n);
  case OpKind::QuantizeLinear:
  case OpKind::DequantizeLinear:
    return inferQuantize(c, n);
  case OpKind::Trilu: {
    const TensorType &x = inputType(n, 0);
    if (x.rank() < 2)
      return makeError(n.describe(), ": ", inputLabel(n, 0),
                       " must have rank 2 or more, got ", x.str());
    if (n.input(1) && (inputType(n, 1).dtype != DType::Int64 ||
                       !simplifyDim(c, inputType(n, 1).numel()).isConstValue(1)))
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " (k) must be an int64 scalar, got ",
                       inputType(n, 1).str());
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::Dropout: {
    // Inference: the identity, and a mask of trues. training_mode must be
    // known to be false.
    const TensorType &x = inputType(n, 0);
    if (n.input(2)) {
      AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> t,
                            knownInts(n, 2, "training_mode"));
      if (t.size() != 1 || t[0] != 0)
        return makeError(n.describe(), ": training mode (random dropout) is "
                                       "not supported");
    }
    if (n.hasAttr("is_test") && n.intAttr("is_test") == 0)
      return makeError(n.describe(), ": training mode (is_test=0) is not "
                                     "supported");
    setResult(c, n, 0, x.dtype, x.dims);
    if (n.outputs().size() > 1)
      setResult(c, n, 1, DType::Bool, x.dims);
    return Status::ok();
  }
  case OpKind::Size: {
    // The element count, known at compile time as an expression of the
    // symbols (no kernel reads data for it).
    const TensorType &x = inputType(n, 0);
    setResult(c, n, 0, DType::Int64, {});
    setResultData(c, n, 0, {simplifyDim(c, x.numel())});
    return Status::ok();
  }
  case OpKind::Constant: {
    auto it = n.attrs().find("value");
    if (it == n.attrs().end() || !it->second.tensor)
      return makeError(n.describe(), ": attribute 'value' must be a tensor");
    setTensorResult(c, n, it->second);
    return Status::ok();
  }
  case OpKind::ConstantOfShape:
    return inferConstantOfShape(c, n);
  default:
    return makeError(n.describe(), ": not a shape or data-movement op");
  }
}

} // namespace shape_inference
} // namespace aotc

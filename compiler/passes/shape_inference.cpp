/// \file
/// Shape inference: the driver over the graph and the helpers every op family
/// shares (broadcasting, axes, compile-time known shape data).
#include "compiler/passes/shape_inference.h"

#include "compiler/passes/shape_inference_internal.h"
#include "ir/op_attrs.h"

#include <algorithm>
#include <set>

namespace aotc {
namespace shape_inference {

Expr simplifyDim(const Context &c, const Expr &e) { return simplify(e, c.env); }

const TensorType &inputType(const Node &n, size_t i) {
  AOTC_CHECK(n.input(i), n.describe() << ": input " << i << " is missing");
  return n.input(i)->type();
}

std::string inputLabel(const Node &n, size_t i) {
  std::string s = "input " + std::to_string(i);
  if (n.input(i))
    s += " ('" + n.input(i)->name() + "')";
  return s;
}

Status requireSameDType(const Node &n, size_t i, size_t j) {
  DType a = inputType(n, i).dtype, b = inputType(n, j).dtype;
  if (a == b)
    return Status::ok();
  return makeError(n.describe(), ": ", inputLabel(n, i), " is ", dtypeName(a),
                   " but ", inputLabel(n, j), " is ", dtypeName(b));
}

Status requireFloat(const Node &n, size_t i) {
  const TensorType &t = inputType(n, i);
  if (isFloat(t.dtype))
    return Status::ok();
  return makeError(n.describe(), ": ", inputLabel(n, i),
                   " must be a float tensor, got ", t.str());
}

namespace {

/// True if dim \p d is better computed once per run than carried through
/// every index: it branches on values given at run time (a Reshape dim
/// that is the value, the input's dim for 0, the remainder for -1), or it
/// has grown past what the prover and the printed kernels handle well.
bool needsOwnSymbol(const Context &c, const Expr &d) {
  if (exprLargerThan(d, 48))
    return true;
  if (!hasSelect(d))
    return false;
  for (const Expr &v : freeVars(d))
    if (const Symbol *s = c.graph.findSymbol(v.as<Var>()))
      if (s->isValue() || s->isDerived())
        return true;
  return false;
}

} // namespace

namespace {

/// A derived symbol for \p d, named after \p name, with the range the
/// prover may use: d's bounds within [lowest, 2^48] (the runtime refuses a
/// run whose value falls outside it; sizes stay below 2^48 as value
/// symbols do).
Expr deriveWithin(const Context &c, const std::string &name, const Expr &d,
                  int64_t lowest, int64_t kLimit = int64_t{1} << 48) {
  Range r{lowest, kLimit};
  if (std::optional<Range> b = boundsOf(d, c.env)) {
    r.min = std::clamp<int64_t>(b->min, lowest, kLimit);
    r.max = std::clamp<int64_t>(b->max, r.min, kLimit);
  }
  Expr var = c.graph.addDerivedSymbol(name, r, d);
  c.env.set(var, c.graph.findSymbol(var.as<Var>())->range);
  return var;
}

} // namespace

Expr deriveSymbol(const Context &c, const std::string &name, const Expr &d) {
  return deriveWithin(c, name, d, 0);
}

Expr deriveBoundedSymbol(const Context &c, const std::string &name,
                         const Expr &d, int64_t max) {
  return deriveWithin(c, name, d, 0, max);
}

Expr deriveSignedSymbol(const Context &c, const std::string &name,
                        const Expr &d) {
  return deriveWithin(c, name, d, -(int64_t{1} << 48));
}

void setResult(const Context &c, Node &n, size_t i, DType dtype,
               std::vector<Expr> dims) {
  for (size_t k = 0; k < dims.size(); ++k) {
    Expr &d = dims[k];
    d = simplifyDim(c, d);
    // A size computed from values (a Reshape shape or Tile repeats given at
    // run time, shape arithmetic) may be negative for some inputs: the run
    // refuses those, and the dim is written max(d, 0), the same where the
    // check holds, so that what follows is proven for sizes >= 0.
    if (!proveLE(Expr(0), d, c.env)) {
      c.graph.addAssumption(cmp(BinOp::GE, d, Expr(0)),
                            n.describe() + ": output " + std::to_string(i) +
                                " dim " + std::to_string(k) + " (" +
                                printExpr(d) + ") is negative");
      d = simplifyDim(c, maxExpr(d, Expr(0)));
    }
    if (needsOwnSymbol(c, d))
      d = deriveSymbol(c, n.output(i)->name() + "_d" + std::to_string(k), d);
  }
  Value *out = n.output(i);
  out->setType(TensorType{dtype, std::move(dims)});
  out->setSymbolicData(std::nullopt);
}

void setResultData(const Context &c, Node &n, size_t i,
                   std::vector<Expr> data) {
  for (Expr &d : data)
    d = simplifyDim(c, d);
  n.output(i)->setSymbolicData(std::move(data));
}

Expected<std::vector<Expr>> broadcastShapes(const Context &c, const Node &n,
                                            const std::vector<Expr> &a,
                                            const std::vector<Expr> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Expr> out(rank);
  // The messages' common start, built only where one is needed.
  auto cannot = [&] {
    return n.describe() + ": cannot broadcast shapes [" + printExprs(a) +
           "] and [" + printExprs(b) + "]: dim ";
  };
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    bool hasA = i + a.size() >= rank, hasB = i + b.size() >= rank;
    Expr x = hasA ? a[i + a.size() - rank] : Expr(1);
    Expr y = hasB ? b[i + b.size() - rank] : Expr(1);
    int64_t vx, vy;
    const bool constX = x.isConst(vx), constY = y.isConst(vy);
    if (x.isConstValue(1))
      out[i] = y;
    else if (y.isConstValue(1))
      out[i] = x;
    else if (proveEqual(x, y, c.env))
      out[i] = x;
    else if (constX && constY)
      return makeError(cannot(), printExpr(x), " vs ", printExpr(y));
    else if ((constX && vx >= 2) || (constY && vy >= 2)) {
      // A symbolic dim against a constant c >= 2: the result has c, and the
      // symbolic dim may be c or 1 at run time (broadcastIndex reads
      // min(i, dim - 1)); the run checks that it is one of them. (It was
      // compiled for equal dims only, refusing a run where it was 1: fuzz
      // seeds 70253, 80059.)
      const Expr &s = constX ? y : x, &k = constX ? x : y;
      out[i] = k;
      c.graph.addAssumption(
          logicalAnd(cmp(BinOp::GE, s, Expr(1)),
                     logicalOr(cmp(BinOp::EQ, s, k), cmp(BinOp::EQ, s, Expr(1)))),
          cannot() + printExpr(s) + " must equal " + printExpr(k) + " or 1");
    } else if (constX || constY) {
      // A symbolic dim against 0: the result is empty, and the symbolic dim
      // must be 0 or 1.
      const Expr &s = constX ? y : x;
      out[i] = Expr(0);
      c.graph.addAssumption(
          logicalOr(cmp(BinOp::EQ, s, Expr(0)), cmp(BinOp::EQ, s, Expr(1))),
          cannot() + printExpr(s) + " must equal 0 or 1");
    } else {
      // Two symbolic dims, either of which may be 1 at run time (a Slice's
      // length, d floordiv 3; seeds 13157, 8220239 were refused when
      // this was compiled for equal dims only): the result is y where x is
      // 1, else x, a size the wrapper derives once per run, and each
      // operand is read at min(i, dim - 1) (broadcastIndex), which is i
      // where its dim is the result's and 0 where it is 1. The run checks
      // that the dims are equal or one of them is 1.
      out[i] = deriveSymbol(
          c, n.output(0)->name() + "_b" + std::to_string(i),
          simplifyDim(c, Select::make(cmp(BinOp::EQ, x, Expr(1)), y, x)));
      c.graph.addAssumption(logicalOr(cmp(BinOp::EQ, x, y),
                                      logicalOr(cmp(BinOp::EQ, x, Expr(1)),
                                                cmp(BinOp::EQ, y, Expr(1)))),
                            cannot() + printExpr(x) + " and " + printExpr(y) +
                                " must be equal or one of them 1");
    }
  }
  return out;
}

namespace {

/// Where \p a is an input dim's symbol and \p k a constant inside its
/// range that a node requires it to equal (a Conv's input channels against
/// its weight's), the symbol's range becomes [k, k]: a run where it is
/// anything else is refused at its start anyway ("input 'x' dim 1: c = 17
/// is outside its range [16, 16]"). The expressions over the symbol keep
/// it; the simplifier and the bounds prover read its one value from the
/// range (BoundsProver::proveNonNegative substitutes it as its last try).
/// Left at the default range (2^16), a product of four such dims may leave
/// 64 bits, so the prover could not place the buffers in the arena (fuzz
/// seed 91130: a model whose every input dim was symbolic was refused).
void narrowToConstant(const Context &c, const Expr &a, const Expr &k) {
  int64_t value = 0;
  const Var *v = a.as<Var>();
  if (!v || !k.isConst(value))
    return;
  const Symbol *s = c.graph.findSymbol(v);
  if (!s || s->isValue() || s->isData() || s->isDerived() ||
      value < s->range.min || value > s->range.max)
    return;
  c.graph.setSymbolRange(s->name, Range{value, value});
  c.env.set(a, Range{value, value});
}

} // namespace

Status requireEqual(const Context &c, const Node &n, const Expr &a,
                    const Expr &b, const std::string &what) {
  if (proveEqual(a, b, c.env))
    return Status::ok();
  // Provably different (3 vs 4, n vs n + 1): an error now.
  int64_t d;
  if (simplify(a - b, c.env).isConst(d))
    return makeError(n.describe(), ": ", what, " differ: ", printExpr(a),
                     " vs ", printExpr(b));
  // Not provable at compile time: the run checks it.
  c.graph.addAssumption(cmp(BinOp::EQ, a, b), n.describe() + ": " + what +
                                                  " differ: " + printExpr(a) +
                                                  " vs " + printExpr(b));
  narrowToConstant(c, a, b);
  narrowToConstant(c, b, a);
  return Status::ok();
}

void requireRuntimeAxes(const Context &c, const Node &n,
                        const std::vector<Expr> &axes, int64_t rank) {
  std::string label = n.describe() + ": axes [" + printExprs(axes) + "]";
  std::vector<Expr> normalized;
  for (size_t j = 0; j < axes.size(); ++j) {
    c.graph.addAssumption(
        logicalAnd(cmp(BinOp::GE, axes[j], Expr(-rank)),
                   cmp(BinOp::LT, axes[j], Expr(rank))),
        label + ": element " + std::to_string(j) +
            " is outside [-rank, rank) for rank " + std::to_string(rank));
    normalized.push_back(Select::make(cmp(BinOp::LT, axes[j], Expr(0)),
                                      axes[j] + Expr(rank), axes[j]));
  }
  for (size_t j = 0; j < axes.size(); ++j)
    for (size_t k = j + 1; k < axes.size(); ++k)
      c.graph.addAssumption(cmp(BinOp::NE, normalized[j], normalized[k]),
                            label + ": elements " + std::to_string(j) +
                                " and " + std::to_string(k) +
                                " name the same axis");
}

Expr minOf(const Context &c, const Expr &a, const Expr &b) {
  return minProven(a, b, c.env);
}

Expr maxOf(const Context &c, const Expr &a, const Expr &b) {
  return maxProven(a, b, c.env);
}

Expected<std::vector<Expr>> knownData(const Node &n, size_t i,
                                      const std::string &what) {
  const Value *v = n.input(i);
  if (!v)
    return makeError(n.describe(), ": input ", i, " (", what, ") is missing");
  if (!v->symbolicData())
    return makeError(n.describe(), ": ", inputLabel(n, i), " (", what,
                     ") must be known at compile time");
  return *v->symbolicData();
}

Expected<std::vector<int64_t>> knownInts(const Node &n, size_t i,
                                         const std::string &what) {
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> data, knownData(n, i, what));
  std::vector<int64_t> r;
  for (const Expr &e : data) {
    int64_t v;
    if (!e.isConst(v))
      return makeError(n.describe(), ": ", inputLabel(n, i), " (", what,
                       ") must be known at compile time as a constant, has ",
                       "element ", printExpr(e));
    r.push_back(v);
  }
  return r;
}

Expr divideProducts(const Context &c, const std::vector<Expr> &numer,
                    const std::vector<Expr> &denom) {
  std::vector<Expr> num, den;
  for (const Expr &e : numer)
    collectFactors(simplifyDim(c, e), num);
  for (const Expr &e : denom)
    collectFactors(simplifyDim(c, e), den);
  int64_t numConst = 1, denConst = 1;
  std::vector<Expr> numRest, denRest;
  for (const Expr &e : num) {
    int64_t v;
    if (e.isConst(v))
      numConst *= v;
    else
      numRest.push_back(e);
  }
  for (const Expr &e : den) {
    int64_t v;
    if (e.isConst(v)) {
      denConst *= v;
      continue;
    }
    auto it = std::find_if(numRest.begin(), numRest.end(), [&](const Expr &x) {
      return proveEqual(x, e, c.env);
    });
    if (it != numRest.end())
      numRest.erase(it);
    else
      denRest.push_back(e);
  }
  if (denConst != 0 && numConst % denConst == 0) {
    numConst /= denConst;
    denConst = 1;
  }
  numRest.push_back(Expr(numConst));
  denRest.push_back(Expr(denConst));
  return simplifyDim(c, floorDiv(product(numRest), product(denRest)));
}

} // namespace shape_inference

using namespace shape_inference;

namespace {

/// Refuses a tensor that is larger than any device holds for every size its
/// symbols may take: a dim whose least value exceeds 2^40, or dims whose
/// least values multiply (with the element size) past 2^48 bytes, the
/// limit sizes are kept under (deriveWithin). Pads, repeats or shapes that
/// large (a fuzzed Pad of 2^62) would otherwise overflow the size and
/// offset arithmetic of every pass after this one.
Status checkTensorSize(const Context &c, const Value &v,
                       const std::string &what) {
  constexpr int64_t kMaxDim = int64_t{1} << 40, kMaxBytes = int64_t{1} << 48;
  const TensorType &t = v.type();
  int64_t bytes = static_cast<int64_t>(dtypeSize(t.dtype));
  for (size_t k = 0; k < t.dims.size(); ++k) {
    std::optional<Range> r = boundsOf(t.dims[k], c.env);
    int64_t least = r ? std::max<int64_t>(r->min, 0) : 0;
    if (least > kMaxDim)
      return makeError(what, " dim ", k,
                       t.dims[k].isConstValue(least)
                           ? std::string(" is ")
                           : " (" + printExpr(t.dims[k]) + ") is at least ",
                       least, ": larger than any tensor a device holds");
    if (__builtin_mul_overflow(bytes, least, &bytes) || bytes > kMaxBytes)
      return makeError(what, " of shape [", printExprs(t.dims),
                       "] has more than 2^48 bytes: larger than any tensor a "
                       "device holds");
  }
  return Status::ok();
}

Status inferNode(Context &c, Node &n) {
  switch (opFamily(n.op())) {
  case OpFamily::Elementwise:
    return inferElementwise(c, n);
  case OpFamily::Contraction:
  case OpFamily::Reduction:
    return inferNN(c, n);
  case OpFamily::DataMovement:
    return inferTensorOp(c, n);
  case OpFamily::DataDependent:
    return inferDataDependent(c, n);
  }
  return makeError(n.describe(), ": no shape inference for this op");
}

} // namespace

Status inferShapes(Graph &g) {
  Context c{g, g.rangeEnv(), g.opsetVersion > 0 ? g.opsetVersion : 17};
  for (const Value *in : g.inputs())
    AOTC_RETURN_IF_ERROR(
        checkTensorSize(c, *in, "input '" + in->name() + "'"));
  for (const auto &node : g.nodes()) {
    Node &n = *node;
    AOTC_RETURN_IF_ERROR(n.verify());
    // Every defaulted attribute explicit from here on (ir/op_attrs.h).
    AOTC_RETURN_IF_ERROR(canonicalizeAttributes(n, c.opset));
    for (Value *out : n.outputs())
      out->setSymbolicData(std::nullopt);
    AOTC_RETURN_IF_ERROR(inferNode(c, n));
    for (size_t i = 0; i < n.outputs().size(); ++i)
      if (n.output(i))
        AOTC_RETURN_IF_ERROR(checkTensorSize(
            c, *n.output(i),
            n.describe() + ": output " + std::to_string(i)));
  }
  return Status::ok();
}

} // namespace aotc

/// \file
/// Indices read from data, checked where they are used (shared by Gather,
/// GatherElements, GatherND, ScatterND and ScatterElements).
#pragma once

#include "compiler/lowering/lowering.h"
#include "ir/bounds.h"

#include <string>
#include <vector>

namespace aotc {

/// Indices that come from data (the gathers and scatters), checked where
/// they are used: a negative index counts from the end; one outside
/// [-dim, dim) is a run-time error naming the node. A dim that may be empty
/// has no element to read, whatever the index: the read then yields 0,
/// while the checks still run (the condition evaluates them first, always
/// true).
class DataIndices {
public:
  DataIndices(const Node &n, LowerCtx &ctx) : n_(n), ctx_(ctx) {}

  /// \p raw checked against \p dim; \p where names the dim in the error
  /// ("axis 1").
  Expr check(const Expr &raw, const Expr &dim, const std::string &where) {
    int code = ctx_.addError(n_.describe() + ": index {value} is out of " +
                             "range for " + where + " of size {extent} " +
                             "(valid: [-{extent}, {extent}))");
    Expr checked = IndexCheck::make(Cast::make(DType::Int64, raw), dim, code,
                                    /*wrapNegative=*/true);
    checks_ = logicalAnd(checks_, cmp(BinOp::GE, checked, Expr(0)));
    auto b = boundsOf(dim, ctx_.env());
    if (!b || b->min < 1)
      nonEmpty_ = logicalAnd(nonEmpty_, cmp(BinOp::GE, dim, Expr(1)));
    return checked;
  }

  /// \p data read at \p in (indices from check()), as a value of \p out.
  Expr read(const Value *data, const std::vector<Expr> &in,
            const Value *out) const {
    Expr v = ctx_.readValue(data, in);
    if (!nonEmpty_.defined())
      return v;
    return Select::make(logicalAnd(checks_, nonEmpty_), v,
                        literal(out->type().dtype, 0));
  }

private:
  const Node &n_;
  LowerCtx &ctx_;
  Expr checks_, nonEmpty_;
};

} // namespace aotc

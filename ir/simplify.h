/// \file
/// The symbolic simplifier for integer (index and size) expressions, and the
/// bounds reasoning behind it.
///
/// Integer sums are put in a canonical linear form (terms sorted by their
/// printed text, constants folded); floordiv and mod by constants are split
/// over the linear form; `a*(x floordiv a) + x mod a -> x` and friends undo the
/// delinearize/relinearize pairs that reshapes create. Symbols carry ranges,
/// loop variables carry their extents, and those ranges let the simplifier
/// drop `x mod n` and `x floordiv n` when 0 <= x < n is provable.
#pragma once

#include "ir/expr.h"
#include "ir/stmt.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aotc {

/// Inclusive integer range of a symbol or loop variable.
struct Range {
  int64_t min = 0;
  int64_t max = 0;
  bool operator==(const Range &o) const { return min == o.min && max == o.max; }
};

/// Ranges known for variables (by identity). Loop variables get
/// [min, min+extent-1] with the extent's own bounds.
class RangeEnv {
public:
  void set(const Var *var, Range r) { ranges_[var->id] = r; }
  /// \p var must be a Var.
  void set(const Expr &var, Range r);
  const Range *find(const Var *var) const {
    auto it = ranges_.find(var->id);
    return it == ranges_.end() ? nullptr : &it->second;
  }
  bool operator==(const RangeEnv &o) const { return ranges_ == o.ranges_; }

private:
  std::map<uint64_t, Range> ranges_;
};

/// Constant bounds of an integer expression, if derivable.
std::optional<Range> boundsOf(const Expr &e, const RangeEnv &env);

/// Bounds of a mod c (c > 0) from the factor its terms share: where a is
/// g*x + k for every value (g the gcd of its terms' literal factors, taken
/// through +, - and products by literals) and f = gcd(g, c) > 1, a mod c
/// is k mod f plus a multiple of f: [k mod f, c - f + k mod f]. nullopt
/// where f is 1. ((32*n + 4*l) mod 56 <= 52: a store of 4 lanes at it fits
/// in a row of 56.)
std::optional<Range> modRangeByFactor(const Expr &a, int64_t c);

/// Simplifies an expression; the result is equal for every value of its free
/// variables within their ranges.
Expr simplify(const Expr &e, const RangeEnv &env = RangeEnv());
/// Simplifies every expression of a statement, learning loop ranges.
Stmt simplify(const Stmt &s, const RangeEnv &env = RangeEnv());

/// Sets the range [0, extent - 1] of each loop variable \p vars[k] whose
/// extent \p extents[k] is a constant of at least 1 (symbolic ones are
/// left out).
void setStaticRanges(RangeEnv &env, const std::vector<Expr> &vars,
                     const std::vector<Expr> &extents);

/// True if the last of \p indices steps by one and the others stay when
/// \p var steps by one, for \p var in \p env (a contiguous read along var).
bool stepsByOne(const std::vector<Expr> &indices, const Expr &var,
                const RangeEnv &env);
/// True if the last of \p indices steps by \p stride and the others stay
/// when \p var steps by one.
bool stepsBy(const std::vector<Expr> &indices, const Expr &var,
             int64_t stride, const RangeEnv &env);

/// True if a <= b holds for every value in range (conservative: false when
/// unknown).
bool proveLE(const Expr &a, const Expr &b, const RangeEnv &env = RangeEnv());
/// True if a == b for every value (structurally after simplification).
bool proveEqual(const Expr &a, const Expr &b, const RangeEnv &env = RangeEnv());
/// min(a, b) and max(a, b): the operand proven smaller (larger) over \p env
/// where there is one, else a min (max) expression.
Expr minProven(const Expr &a, const Expr &b, const RangeEnv &env);
Expr maxProven(const Expr &a, const Expr &b, const RangeEnv &env);

/// Evaluates an integer expression whose Vars are all bound in \p values
/// (Var -> value pairs).
std::optional<int64_t>
evaluate(const Expr &e, const std::vector<std::pair<Expr, int64_t>> &values);

/// The same, interpreted node by node without simplifying (microseconds
/// where evaluate takes a simplification): for integer index math and its
/// conditions only (Int32/Int64/Bool scalars: constants, bound Vars, the
/// arithmetic, floor division and remainder by a positive divisor, min/max,
/// comparisons, logic, Not and Select). nullopt for anything else, for an
/// unbound Var and for a result an Int32 or Int64 cannot hold; evaluate
/// may still know those.
std::optional<int64_t>
interpret(const Expr &e, const std::vector<std::pair<Expr, int64_t>> &values);

} // namespace aotc

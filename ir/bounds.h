/// \file
/// Proofs about integer index expressions inside a loop nest: that an index
/// lies inside a buffer dimension for every symbol value in its declared
/// range.
///
/// Constant ranges (RangeEnv) cannot prove `i < n` when n is a symbol, so the
/// prover keeps symbolic intervals: a loop variable ranges over
/// [min, min + extent - 1] with symbolic ends, a symbol is exactly itself.
/// To prove `e >= 0` it computes the symbolic lower end of e, simplifies it
/// (terms cancel: `n - 1 - i` has lower end `n - 1 - (n - 1) = 0`) and
/// checks that it is non-negative over the constant ranges of what is left.
/// Conditions known to hold (the branch of a select or an if, a loop that
/// runs at all) are facts `f >= 0`; `e >= 0` also follows from a fact when
/// `e - f >= 0` does.
#pragma once

#include "ir/simplify.h"

#include <optional>
#include <utility>
#include <vector>

namespace aotc {

class BoundsProver {
public:
  /// \p symbols: the declared range of every symbol.
  explicit BoundsProver(RangeEnv symbols);

  /// Scopes: everything added after mark() is forgotten at release(mark).
  size_t mark() const { return scope_.size(); }
  void release(size_t mark);

  /// \p var ranges over [min, min + extent - 1]; inside the loop, extent >= 1.
  void addLoop(const Expr &var, const Expr &min, const Expr &extent);
  /// \p var is bound to \p value.
  void addLet(const Expr &var, const Expr &value);
  /// \p cond (a Bool expression) is known to be \p holds.
  void addFact(const Expr &cond, bool holds);

  /// True if e >= 0 is proven for every value in range.
  bool proveNonNegative(const Expr &e);
  /// True if 0 <= index < extent is proven.
  bool proveInRange(const Expr &index, const Expr &extent);

  /// The symbolic interval of an integer expression, if derivable (ends
  /// simplified, possibly still reading loop variables).
  std::optional<std::pair<Expr, Expr>> interval(const Expr &e);
  /// interval() before its ends are widened to i64.
  std::optional<std::pair<Expr, Expr>> intervalOf(const Expr &e);

private:
  struct Entry {
    enum Kind { Loop, Let, Fact } kind;
    Expr var;    ///< Loop, Let
    Expr lo, hi; ///< Loop: the interval; Let: the value's, if known
    Expr value;  ///< Let: the value, if it is an index expression
    Expr fact;   ///< Fact: fact >= 0
  };
  const Entry *findVar(const Var *v) const;
  enum class Mono { Const, Inc, Dec, Unknown };
  /// How \p e changes when \p v grows.
  Mono monotonicity(const Expr &e, const Var *v);
  /// e with every loop variable in scope (innermost first) replaced by the
  /// end of its range that minimizes e; undefined if e is not monotonic in
  /// one of them.
  Expr minimizeOverLoops(const Expr &e);
  /// e (simplified) with every let in scope replaced by its value.
  Expr inlineLets(const Expr &e);
  /// Rebuilds the constant ranges from the symbols and the scope.
  void rebuildEnv();
  void learnConstRange(const Entry &e);
  /// A constant lower end >= 0 of \p e, which is simplified.
  bool lowerEndNonNegative(const Expr &e);
  bool constNonNegative(const Expr &e);
  /// proveNonNegative(e) without combining the facts (for what is left
  /// after a fact, or a floor division's bound).
  bool proveWithoutFacts(const Expr &e);
  /// True if \p e reads no loop variable or let in scope (only symbols).
  bool onlySymbols(const Expr &e) const;
  /// Constant lower bound 1 on \p e from what is known (a constant, or a
  /// fact `e - 1 >= 0`).
  bool provePositive(const Expr &e);

  RangeEnv symbols_;
  /// Constant ranges of symbols and every variable in scope.
  RangeEnv env_;
  std::vector<Entry> scope_;
  int depth_ = 0; ///< recursion guard of interval()
  /// Nested min/max arms proveNonNegative tries (each may try two).
  static constexpr int kMaxMinMaxDepth = 4;
  int minMaxDepth_ = 0;
  /// Above 0 while proveNonNegative proves what is left after a fact or a
  /// floor division's bound: the facts are not combined again there.
  int residualDepth_ = 0;
};

} // namespace aotc

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

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace aotc {

/// What the provers of one compile have proven, so that a question asked
/// again is answered at once. A network repeats its blocks, and their
/// kernels ask the same questions of loops over the same ranges (BERT-base's
/// twelve layers, whose kernels with a symbolic sequence took the verifier
/// about a second each); and the scheduler's passes and the final
/// verification ask them again of the same kernels.
///
/// A question is the prover's scope (every loop, let and fact, in order) and
/// the expression, with each variable in scope spelled by the place of the
/// entry that binds it and with every node's type: two kernels' questions are
/// the same only where they are the same statement about the same ranges.
/// Only proofs are kept, never failures (a failure is not a statement), and
/// apart for each set of symbol ranges (a model's and its folding
/// program's).
class ProofCache {
public:
  size_t proofs() const;
  /// Questions answered from the cache.
  size_t hits() const { return hits_; }

private:
  friend class BoundsProver;
  struct Store {
    RangeEnv symbols;
    /// (the scope before an entry, the entry's key) -> the scope through
    /// it; 0 is the empty scope.
    std::map<std::pair<int, std::string>, int> scopes;
    std::unordered_set<std::string> proven;
  };
  /// The store of provers with these symbol ranges.
  Store &storeFor(const RangeEnv &symbols);
  std::vector<std::unique_ptr<Store>> stores_;
  size_t hits_ = 0;
};

class BoundsProver {
public:
  /// \p symbols: the declared range of every symbol. \p cache, if given,
  /// remembers the proofs of questions asked from the top (not those a
  /// proof asks itself) and answers them again.
  explicit BoundsProver(RangeEnv symbols, ProofCache *cache = nullptr);

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
  /// proveNonNegative without the cache.
  bool proveFresh(const Expr &e);
  /// The cache's key of the question e >= 0 in the current scope.
  std::string questionKey(const Expr &e);
  /// \p e spelled for the cache, with the variables bound by the first
  /// \p prefix entries of the scope by their places.
  std::string canonical(const Expr &e, size_t prefix) const;

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
  ProofCache *cache_ = nullptr;
  ProofCache::Store *store_ = nullptr; ///< cache_'s for symbols_
  /// With a cache: the store's id of the scope through entry i, for the
  /// first entries (the others are keyed when a question needs them).
  std::vector<int> scopeIds_;
};

} // namespace aotc

/// \file
/// The guard-accesses pass: every load or store whose index the verifier
/// cannot prove inside its buffer (a reshape whose element count is only
/// checked at run time, say) gets a run-time check, so no kernel can touch
/// memory outside a buffer. The check is an IndexCheck with an "internal
/// error" message: it can only fire if the compiler is wrong, and then the
/// run fails loudly instead of reading garbage or another buffer.
///
/// A vector access of L lanes at stride s checks its first lane's index
/// along the last dimension against the size less (L - 1) s, so that its
/// last lane is inside too: a vectorized kernel whose index the prover
/// cannot follow runs checked, as a scalar one does, instead of being a
/// compile error (fuzz seed 60549: Tile over a symbolic dimension, before
/// the prover read its index as a remainder). Bool vector loads (masks)
/// stay unguarded: the verifier refuses one left unproven.
#include "compiler/schedule/schedule.h"

#include "ir/verify.h"
#include "ir/visitor.h"

#include <map>

namespace aotc {

namespace {

class Guarder : public IRMutator {
public:
  Guarder(LoopModule &m, Kernel &k,
          std::map<const void *, std::vector<size_t>> unproven)
      : m_(m), k_(k), unproven_(std::move(unproven)) {}

protected:
  Expr mutateLoad(const Load *op, const Expr &self) override {
    Expr e = IRMutator::mutateLoad(op, self);
    auto it = unproven_.find(op);
    if (it == unproven_.end())
      return e;
    const Load *l = e.as<Load>();
    std::vector<Expr> idx = l->indices;
    Expr cond = guard(l->buffer, idx, it->second);
    Expr zero = isFloat(l->type) ? FloatImm::make(0.0, l->type)
                                 : IntImm::make(0, l->type);
    return Select::make(cond, Load::make(l->type, l->buffer, idx), zero);
  }

  Expr mutateVectorLoad(const VectorLoad *op, const Expr &self) override {
    Expr e = IRMutator::mutateVectorLoad(op, self);
    auto it = unproven_.find(op);
    if (it == unproven_.end() || op->type == DType::Bool)
      return e;
    const VectorLoad *l = e.as<VectorLoad>();
    std::vector<Expr> idx = l->indices;
    Expr cond = guard(l->buffer, idx, it->second, l->lanes, l->stride);
    // (An integer vector: an int8 weight read by an integer contraction,
    // vectorize.cpp; its zero is selected by the scalar condition.)
    Expr zero = Broadcast::make(isFloat(l->type) ? FloatImm::make(0.0, l->type)
                                                 : IntImm::make(0, l->type),
                                l->lanes);
    return Select::make(
        cond, VectorLoad::make(l->type, l->buffer, idx, l->lanes, l->stride),
        zero);
  }

  Stmt mutateStore(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::mutateStore(op, self);
    auto it = unproven_.find(op);
    if (it == unproven_.end())
      return s;
    const Store *st = s.as<Store>();
    std::vector<Expr> idx = st->indices;
    Expr cond = guard(st->buffer, idx, it->second, st->value.lanes());
    return IfThenElse::make(cond, Store::make(st->buffer, idx, st->value));
  }

private:
  /// Replaces the unproven components of \p idx by checked ones and returns
  /// the condition under which the access may happen: each check evaluated
  /// (so a bad index is recorded even when the buffer is empty) and each
  /// guarded dimension non-empty. A vector access of \p lanes at
  /// \p stride reaches (lanes - 1) stride elements past its index along
  /// the last dimension, which is then checked against the size less that.
  Expr guard(const std::string &buffer, std::vector<Expr> &idx,
             const std::vector<size_t> &dims, int lanes = 1, int stride = 1) {
    const int64_t span = int64_t{stride} * (lanes - 1);
    const KernelBuffer *b = k_.findBuffer(buffer);
    if (!b)
      b = k_.findLocal(buffer);
    if (!b)
      b = k_.findPrivate(buffer);
    AOTC_CHECK(b, "guarded access to unknown buffer " << buffer);
    Expr cond;
    for (size_t d : dims) {
      const bool spans = span > 0 && d + 1 == idx.size();
      int code = static_cast<int>(m_.errors.size());
      m_.errors.push_back(
          "internal error: kernel '" + k_.name + "' indexed dimension " +
          std::to_string(d) + " of buffer '" + buffer + "' with {value}" +
          (spans ? " for a vector of " + std::to_string(lanes) +
                       " lanes, which must start below {extent}"
                 : ", outside its size {extent}") +
          " (the compiled code is wrong; please report it)");
      Expr extent = b->shape[d];
      int64_t size;
      if (spans)
        extent = extent.isConst(size) ? Expr(size - span)
                                      : extent - Expr(span);
      Expr checked = IndexCheck::make(idx[d], extent, code, false);
      idx[d] = checked;
      cond = logicalAnd(cond, cmp(BinOp::GE, checked, Expr(0)));
      // A static size needs no test (and `&& (2 >= 1)` makes OpenCL
      // compilers warn). Not simplify(): it may drop the check itself.
      if (!extent.isConst(size) || size < 1)
        cond = logicalAnd(cond, cmp(BinOp::GE, extent, Expr(1)));
    }
    return cond;
  }

  LoopModule &m_;
  Kernel &k_;
  std::map<const void *, std::vector<size_t>> unproven_;
};

} // namespace

int guardUnprovenAccesses(LoopModule &m, ProofCache *proofs) {
  int guarded = 0;
  for (Kernel &k : m.kernels) {
    std::map<const void *, std::vector<size_t>> unproven;
    for (UnprovenAccess &u : unprovenAccesses(m, k, proofs))
      unproven[u.node] = u.dims;
    if (unproven.empty())
      continue;
    guarded += static_cast<int>(unproven.size());
    k.body = Guarder(m, k, std::move(unproven)).mutate(k.body);
    k.reportsErrors = true;
  }
  return guarded;
}

} // namespace aotc

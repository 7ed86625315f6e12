/// \file
/// Kernels that may store an output over an input (in_place.h).
#include "ir/in_place.h"

#include "ir/visitor.h"

#include <set>

namespace aotc {

namespace {

/// Walks a kernel body in program order, recording the elements of
/// `written` stored and of `read` loaded (by index expression and lanes),
/// and clears `safe` at the first access the rules of in_place.h refuse.
class InPlaceWalk : public IRVisitor {
public:
  InPlaceWalk(const std::string &read, const std::string &written)
      : read_(read), written_(written) {}

  bool safe = true;
  std::set<std::string> stored, loaded;

protected:
  void visitLoad(const Load *op) override {
    IRVisitor::visitLoad(op);
    note(op->buffer, op->indices, 1, 1);
  }
  void visitVectorLoad(const VectorLoad *op) override {
    IRVisitor::visitVectorLoad(op);
    note(op->buffer, op->indices, op->lanes, op->stride);
  }
  void visitStore(const Store *op) override {
    IRVisitor::visitStore(op); // the indices and value are read first
    if (op->buffer == read_)
      safe = false;
    if (op->buffer != written_)
      return;
    if (serialLoops_ > 0 || dataDependent(op->indices)) {
      safe = false;
      return;
    }
    stored.insert(key(op->indices, op->value.lanes()));
  }
  void visitFor(const For *op) override {
    visit(op->min), visit(op->extent);
    const int serial = op->forKind == ForKind::Serial ? 1 : 0;
    serialLoops_ += serial;
    visit(op->body);
    serialLoops_ -= serial;
  }
  void visitPrefetch(const Prefetch *) override {} // reads no value
  /// One arm runs: each sees the stores before the condition, not the
  /// other arm's (a full tile and its partial form store the same
  /// elements).
  void visitIfThenElse(const IfThenElse *op) override {
    visit(op->cond);
    std::set<std::string> before = stored;
    visit(op->thenCase);
    std::set<std::string> afterThen = std::move(stored);
    stored = std::move(before);
    visit(op->elseCase);
    stored.insert(afterThen.begin(), afterThen.end());
  }

private:
  void note(const std::string &buffer, const std::vector<Expr> &indices,
            int lanes, int stride) {
    if (buffer == written_)
      safe = false; // it would read its own stores, or R's values
    if (buffer != read_)
      return;
    if (serialLoops_ > 0 || stride != 1 || dataDependent(indices)) {
      safe = false;
      return;
    }
    std::string k = key(indices, lanes);
    if (stored.count(k))
      safe = false; // read after this work-item stored it
    loaded.insert(std::move(k));
  }

  static bool dataDependent(const std::vector<Expr> &indices) {
    for (const Expr &i : indices)
      if (readsMemory(i))
        return true;
    struct Checks : IRVisitor {
      bool found = false;
      void visitIndexCheck(const IndexCheck *) override { found = true; }
    } checks;
    for (const Expr &i : indices)
      checks.visit(i);
    return checks.found;
  }

  static std::string key(const std::vector<Expr> &indices, int lanes) {
    std::string k = std::to_string(lanes);
    for (const Expr &i : indices)
      k += "|" + exprKey(i);
    return k;
  }

  const std::string &read_, &written_;
  int serialLoops_ = 0;
};

bool sameShape(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (exprKey(a[i]) != exprKey(b[i]))
      return false;
  return true;
}

} // namespace

bool storesInPlace(const Kernel &k, const std::string &read,
                   const std::string &written) {
  const KernelBuffer *r = k.findBuffer(read);
  const KernelBuffer *w = k.findBuffer(written);
  if (!r || !w || read == written || r->written || !w->written ||
      r->dtype != w->dtype || !sameShape(r->shape, w->shape) ||
      k.launchIf.defined())
    return false;
  InPlaceWalk walk(read, written);
  walk.visit(k.body);
  if (!walk.safe || walk.loaded.empty())
    return false;
  for (const std::string &l : walk.loaded)
    if (!walk.stored.count(l))
      return false;
  return true;
}

} // namespace aotc

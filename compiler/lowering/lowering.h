/// \file
/// Lowering: every Graph IR node becomes one or more TensorDefs, compute
/// definitions in Loop IR terms.
///
/// A TensorDef defines a tensor as a function of its output index (the formal
/// variables i0, i1, ... of FormalVars): pointwise (one expression), reduction
/// (an expression over the output index and reduction variables r0, r1, ...,
/// folded by a combiner, then an epilogue over the accumulator `acc`), or a
/// leaf (graph input, constant). Formal variables are Vars like any other:
/// they are distinct from every symbol whatever its name. Reads of
/// other tensors are Access nodes; views (reshape, transpose, squeeze, ...) are
/// pointwise defs that only re-index another tensor, so they cost no kernel
/// once the scheduler inlines them. The scheduler (compiler/schedule) decides
/// what is materialized and fuses the rest.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aotc {

enum class Combiner { Sum, Prod, Max, Min };

/// The formal variables every def is written over, created on first use and
/// shared by all defs of one LoweredGraph: the output index i<k>, the
/// reduction index r<k> and the accumulator of an epilogue (one per dtype).
/// Consumers substitute them (substitute()) to instantiate a def.
class FormalVars {
public:
  const Expr &idx(int k) const { return get(idx_, "i", k, DType::Int64); }
  const Expr &rvar(int k) const { return get(r_, "r", k, DType::Int64); }
  const Expr &acc(DType t) const;
  std::vector<Expr> idxVars(int rank) const;

private:
  const Expr &get(std::vector<Expr> &v, const char *prefix, int k,
                  DType t) const;
  mutable std::vector<Expr> idx_, r_;
  mutable std::map<DType, Expr> acc_;
};

struct TensorDef {
  enum class Kind { Input, Constant, Pointwise, Reduction };
  Kind kind = Kind::Pointwise;
  std::string name; ///< a readable name (the value or node it came from)
  /// The ONNX op whose lowering made this def ("MatMul"); empty for inputs
  /// and constants. Kernel summaries (profiles, `aotc inspect`) list these.
  std::string op;
  DType dtype = DType::Float32;
  std::vector<Expr> shape;

  int inputIndex = -1;             ///< Input: graph input number
  const Value *constant = nullptr; ///< Constant: the graph constant

  /// Pointwise: value over i0..; Reduction: the term over i0.. and r0..
  Expr body;
  /// Pointwise that only re-indexes one other tensor (free when inlined).
  bool isView = false;
  /// Pointwise that gets a buffer whatever its consumers: a zero- or
  /// -inf-padded copy, which exists so that its reader does no bounds test.
  bool materialize = false;
  /// Pointwise: a copy of one value in another layout for a contraction to
  /// read (row panels, lower_contraction.cpp). A producer that other
  /// kernels read too or that reads a reduction is materialized rather than
  /// inlined into it (fusion.cpp): the copy walks the value in another
  /// order than the kernel that computes it, which keeps its own fusion (a
  /// LayerNormalization's row group, a GEMM's epilogue).
  bool layoutCopy = false;

  // Reductions.
  std::vector<Expr> reduceExtents;
  Combiner combiner = Combiner::Sum;
  /// Over i0.. and the accumulator FormalVars::acc(dtype); undefined means
  /// the accumulator itself.
  Expr epilogue;
  /// A contraction (MatMul, Conv) reads each input element many times, so its
  /// producers are materialized rather than recomputed per read.
  bool rereadsInputs = false;

  /// Fused attention (lower_attention.cpp): MatMul -> scale, mask -> Softmax
  /// over the last axis -> MatMul as one reduction over the keys r0 that
  /// never stores the scores. The def's body is the value term (V at key r0
  /// and the output's last index); the term is weighted by the softmax of
  /// the scores along r0, which the kernel computes online
  /// (compiler/schedule/attention.cpp). A Sum reduction with rereadsInputs.
  struct Attention {
    /// The score's product term over the output index (the query at
    /// i[rank-2]; i[rank-1] unused), the key r0 and the depth r1.
    Expr score;
    Expr depth; ///< the extent of r1
    /// Over the output index, r0 and the accumulator FormalVars::acc(dtype)
    /// (the score's sum): what the graph applies before the Softmax (a
    /// scale, a mask); undefined means the sum itself.
    Expr scoreEpilogue;
  };
  std::optional<Attention> attention;

  int rank() const { return static_cast<int>(shape.size()); }
};

struct LoweredGraph {
  std::vector<TensorDef> defs;
  std::vector<int> inputs;  ///< def of each graph input
  std::vector<int> outputs; ///< def of each graph output
  std::vector<std::string> outputNames;
  RangeEnv env; ///< symbol ranges
  FormalVars vars;
  /// Run-time error messages (IndexCheck codes index this).
  std::vector<std::string> errors;
  /// Counts the run reads back mid-run: def `def` (an int64 scalar, one
  /// kernel of its own) holds the value of data symbol `symbol`. Defs after
  /// it may use the symbol; none before it does.
  struct Sync {
    int def = -1;
    Expr symbol;
  };
  std::vector<Sync> syncs;

  std::string print() const;
};

/// Choices of the lowering.
struct LowerOptions {
  /// MatMul -> scale/mask -> Softmax -> MatMul chains as one attention def
  /// (TensorDef::attention); off: each op lowered alone (the naive kernels,
  /// the reference, and `aotc compile --no-fuse-attention`).
  bool fuseAttention = false;
  /// A 1 x 1 Conv of stride above 1 (ResNet's downsampling; any group)
  /// reads a materialized copy of the pixels it reads (subsampledCopy) and
  /// runs at stride 1 over it: its pixels then merge into one dimension
  /// (collapse_dims.h) and its register tiles read neighbouring pixels.
  /// On CPU-style targets with register tiles (pipeline.cpp).
  bool subsampleStridedPointwiseConvs = false;
  /// The rows per panel in which a MatMul or Gemm of static sizes M x N x K
  /// by a constant B reads its A (element type t; \p computed: A is
  /// computed by a kernel of the model, not a graph input) through a
  /// materialized copy [batch..., ceil(M / rows), K, rows]
  /// (lower_contraction.cpp), or 0 (A read in place); unset: every A in
  /// place. On CPU-style targets with register tiles,
  /// compiler/schedule/row_panels.h (pipeline.cpp).
  std::function<int64_t(int64_t m, int64_t n, int64_t k, DType t,
                        bool computed)>
      rowPanel;
};

/// Lowers every node reachable from the outputs. Fails with an error naming
/// the node for anything the lowering does not support.
Expected<LoweredGraph> lowerGraph(const Graph &g,
                                  const LowerOptions &opts = {});

/// Every defined expression of \p d, once, in this order: body, epilogue,
/// an attention's score and its epilogue. Passes that read or rewrite defs'
/// expressions go through these so that none is missed.
void forEachExpr(const TensorDef &d, const std::function<void(const Expr &)> &f);
void forEachExpr(TensorDef &d, const std::function<void(Expr &)> &f);

/// The distinct defs \p e reads, in first-seen order (none for an
/// undefined expression).
std::vector<int> accessedDefs(const Expr &e);
/// The distinct defs \p d's body and epilogue read, in first-seen order.
std::vector<int> accessedDefs(const TensorDef &d);
/// \p lg's symbol ranges with \p d's index variables over its static
/// extents and its reduction variables over its static reduction extents.
RangeEnv defRanges(const LoweredGraph &lg, const TensorDef &d);

/// The state op lowerings share.
class LowerCtx {
public:
  LowerCtx(const Graph &g, LoweredGraph &out, LowerOptions opts = {})
      : graph_(g), out_(out), opts_(opts) {}

  const Graph &graph() const { return graph_; }
  const LowerOptions &options() const { return opts_; }
  const RangeEnv &env() const { return out_.env; }

  /// The def holding a value; -1 if the value has none (unlowered).
  int defOf(const Value *v) const;
  const TensorDef &def(int id) const { return out_.defs.at(id); }
  int add(TensorDef d);
  /// The op being lowered: defs added from now on record it in TensorDef::op.
  void setCurrentOp(std::string op) { currentOp_ = std::move(op); }
  void bind(const Value *v, int id) { valueDefs_[v] = id; }

  const Expr &idx(int k) const { return out_.vars.idx(k); }
  const Expr &rvar(int k) const { return out_.vars.rvar(k); }
  const Expr &acc(DType t) const { return out_.vars.acc(t); }
  std::vector<Expr> idxVars(int rank) const { return out_.vars.idxVars(rank); }

  /// Access to \p id at a full multi-index.
  Expr read(int id, std::vector<Expr> indices) const;
  /// Access to \p id broadcast (NumPy, right-aligned) to an output of shape
  /// \p outShape indexed by \p outIdx: size-1 dims read index 0.
  Expr readBroadcast(int id, const std::vector<Expr> &outShape,
                     const std::vector<Expr> &outIdx) const;
  /// Same, for a graph value.
  Expr readValue(const Value *v, const std::vector<Expr> &indices) const {
    return read(defOf(v), indices);
  }

  /// Adds a pointwise def for node output \p out with the given body.
  int addPointwise(const Value *out, Expr body, bool isView = false);

  /// Makes def \p def (an int64 scalar) the value of data symbol \p symbol,
  /// read back by the run before any later def uses the symbol.
  void addSync(int def, const Expr &symbol) {
    out_.syncs.push_back({def, symbol});
  }

  /// Registers a run-time error message ("{value}" and "{extent}" stand for
  /// the numbers a kernel records) and returns its IndexCheck code.
  int addError(std::string message);

  /// The def of a copy of \p v that several lowerings may read (two
  /// strided 1 x 1 convolutions of one input read one subsampled copy):
  /// the one made under \p key, else \p make's, remembered.
  int copyOf(const Value *v, const std::string &key,
             const std::function<int()> &make);

private:
  const Graph &graph_;
  LoweredGraph &out_;
  LowerOptions opts_;
  std::map<const Value *, int> valueDefs_;
  std::map<std::pair<const Value *, std::string>, int> copies_;
  std::string currentOp_;
};

/// Literal of type \p t with value \p v (float or integer).
Expr literal(DType t, double v);
/// The derived symbol shape inference declared for \p definition (a size
/// that depends on values given at run time: axes, steps), built by the
/// same helper there (ir/indexing.h); an internal error for \p n if it
/// declared none.
Expr declaredSymbol(const LowerCtx &ctx, const Node &n, const Expr &definition);
/// The lowest / highest value of a type (-inf / +inf for floats).
Expr lowestValue(DType t);
Expr highestValue(DType t);
/// \p acc combined with \p v by \p c; max and min propagate NaN like NumPy
/// and PyTorch (v wins when it is NaN, so once acc is NaN it stays NaN).
Expr combineWith(Combiner c, const Expr &acc, const Expr &v);
/// The value \p c starts from: 0, 1, the lowest or the highest of \p t.
Expr combinerIdentity(Combiner c, DType t);

// Op families, one file each. Each lowers one node and binds its outputs.
Status lowerElementwise(const Node &n, LowerCtx &ctx);
Status lowerContraction(const Node &n, LowerCtx &ctx);
Status lowerReduction(const Node &n, LowerCtx &ctx);
Status lowerShapeOp(const Node &n, LowerCtx &ctx);
Status lowerResize(const Node &n, LowerCtx &ctx);
/// LRN (lower_lrn.cpp).
Status lowerLRN(const Node &n, LowerCtx &ctx);
/// EyeLike and OneHot (lower_generate.cpp).
Status lowerGenerate(const Node &n, LowerCtx &ctx);
/// QuantizeLinear and DequantizeLinear (lower_quantize.cpp).
Status lowerQuantize(const Node &n, LowerCtx &ctx);
/// ScatterND, ScatterElements and Scatter (lower_scatter.cpp).
Status lowerScatterND(const Node &n, LowerCtx &ctx);
Status lowerScatterElements(const Node &n, LowerCtx &ctx);
Status lowerDataDependent(const Node &n, LowerCtx &ctx);
/// A strided 1 x 1 Conv's copy of the pixels of \p x [N, C, spatial...]
/// that it reads (a materialized pointwise def; returns its id): element p
/// of size \p dims[k] is x's p * \p strides[k].
int subsampledCopy(LowerCtx &ctx, const Value *x,
                   const std::vector<int64_t> &strides,
                   const std::vector<Expr> &dims);
/// A Conv's zero-padded copy of \p x [N, C, spatial...] (a materialized
/// pointwise def; returns its id): spatial element p of padded size
/// \p paddedDims[k] is x's p - \p begins[k] where that is inside x, else 0.
int zeroPaddedCopy(LowerCtx &ctx, const Value *x,
                   const std::vector<int64_t> &begins,
                   const std::vector<Expr> &paddedDims);
/// WinogradConv (compiler/passes/winograd.h), in lower_winograd.cpp.
Status lowerWinogradConv(const Node &n, LowerCtx &ctx);
/// MatMul \p n as the end of an attention chain (TensorDef::attention)
/// where LowerOptions::fuseAttention is on and the chain matches; false
/// (nothing lowered) otherwise.
Expected<bool> lowerFusedAttention(const Node &n, LowerCtx &ctx);

/// The index into a dimension of size \p dim of an operand broadcast to a
/// result dimension of size \p outDim, read at \p outIdx: 0 where dim is
/// 1 (and outDim is not); outIdx where dim is a constant or provably
/// outDim; otherwise min(outIdx, dim - 1): a symbolic dim that shape
/// inference let be outDim or 1 at run time (against a constant of 2 or
/// more, or another symbolic dim, whose result is then derived per run;
/// broadcastShapes: the run checks that it is one of them).
Expr broadcastIndex(const Expr &dim, const Expr &outDim, const Expr &outIdx,
                    const RangeEnv &env);

/// The index of a MatMul operand's batch dimensions (\p dims, all but its
/// last two) read by a result of batch dimensions \p outDims at \p outIdx:
/// right-aligned, each dimension by broadcastIndex.
std::vector<Expr> matMulBatchIndex(const std::vector<Expr> &dims,
                                   const std::vector<Expr> &outDims,
                                   const std::vector<Expr> &outIdx,
                                   const RangeEnv &env);

/// The explicit pads of a Conv or pooling node: the begin pad of each spatial
/// dim, then the end pad of each.
Expected<std::vector<int64_t>> spatialPads(const Node &n, size_t spatialRank);

/// Builds a reduction of \p input over \p axes (sorted, non-negative) with
/// keepdims semantics. \p term maps the input multi-index (with r-vars on the
/// reduced axes) to the reduced term; \p epilogue maps acc (may be
/// undefined).
int addAxisReduction(LowerCtx &ctx, const std::string &name, DType dtype,
                     const std::vector<Expr> &inShape,
                     const std::vector<int> &axes, bool keepdims,
                     Combiner combiner,
                     const std::function<Expr(const std::vector<Expr> &)> &term,
                     Expr epilogue);

} // namespace aotc

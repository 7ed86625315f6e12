#!/usr/bin/env python3
"""Differential fuzzing of aotc against ONNX Runtime.

Generates random valid ONNX graphs (fuzzgen.py), computes their outputs with
ONNX Runtime, writes them as ONNX backend-test case directories, runs
`aotc test` over them in batches and classifies every graph:

  pass       aotc gives ONNX Runtime's outputs (integers and bools exactly,
             floats within --rtol/--atol)
  refused    a compile error that names what is unsupported (clean)
  unproven   a compile error of the Loop IR verifier: an access or view the
             bounds prover could not prove for a valid model (a prover limit,
             not an unsupported feature; never a wrong answer). Listed always;
             a failure with --strict-proofs
  rounding   an output of contractions, Add, Sub, Relu, MaxPool, Sin and Cos differs by
             no more than float rounding of its sums' terms, where they
             cancel; or a Cast to an integer of a computed float within
             units of an integer, or a comparison of a computed float
             within units of the other operand, flips (rounding_only;
             listed always, not a failure)
  WRONG      an output differs
  ERROR      a run-time error for a valid model, or an internal error
  CRASH      aotc died (signal, abort) or timed out on the case
  skipped    the generator's graph is invalid or undefined for ONNX Runtime

Exits 1 with --check if any graph is WRONG, ERROR or CRASH. With --minimize,
each failure is reduced to the first intermediate value that differs and
saved as a regression case under --regressions.

  .venv/bin/python tests/fuzz/run_fuzz.py --aotc build/compiler/tools/aotc \\
      --seed 1 --count 300 --check
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzgen  # noqa: E402

BAD = ("WRONG", "ERROR", "CRASH")


def write_case(path, model, inputs, outputs):
    # A folder from an earlier run (--keep DIR again, other flags) may hold
    # more inputs or outputs than this case has: aotc test would read them.
    # Only the data set written here is replaced: callers that gather several
    # sets in one case (check_register_tile.py, check_row_kernels.py) rename
    # each away before writing the next.
    shutil.rmtree(os.path.join(path, "test_data_set_0"), ignore_errors=True)
    os.makedirs(os.path.join(path, "test_data_set_0"))
    onnx.save(model, os.path.join(path, "model.onnx"))
    for i, v in enumerate(inputs):
        with open(os.path.join(path, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(v)).SerializeToString())
    for i, v in enumerate(outputs):
        with open(os.path.join(path, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(v)).SerializeToString())


def classify(line):
    """(class, detail) of one `FAIL name: why` line of aotc test."""
    why = line.split(": ", 1)[1] if ": " in line else line
    if why.startswith("compile: "):
        msg = why[len("compile: "):]
        if "internal error" in msg:
            return "ERROR", msg
        if "Loop IR verifier" in msg:
            return "unproven", msg
        return "refused", msg
    if "output" in why and ("element" in why or "expected" in why):
        return "WRONG", why
    return "ERROR", why


# Contractions whose output element is a float sum of many terms.
SUMS = ("Conv", "ConvTranspose", "MatMul", "Gemm")
# A sum of float32 terms computed in another order (aotc's tiles, Winograd's
# transforms, ONNX Runtime's blocking) may differ from the reference by a
# few units of rounding of the terms' magnitude, sum |terms|: where the
# terms cancel (seed 674036: a 3 x 3 Conv over 64 channels of values up to
# 400, an element of -0.0043 whose terms' magnitudes add up to 1316), that
# is more than --atol. A missing or wrong term moves the sum by about one
# term, sum |terms| / K, hundreds of times more.
ROUNDING_UNITS = 16
# Units of rounding of exp (OpenCL allows 3 ulp, ORT's approximations more)
# and the division, relative to a Softmax's result.
EXP_UNITS = 8
WRONG_DETAIL = re.compile(r"output (\d+): element (\d+): got (\S+), expected (\S+) "
                          r"\(worst \|error\| (\S+)\)")


def run_node(model, node, inputs):
    """\p node alone in float64 over \p inputs (one per input name; None for
    an absent one), by ONNX's reference evaluator."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    feed, names = {}, []
    for k, x in enumerate(inputs):
        if x is None:
            names.append("")
            continue
        names.append("x%d" % k)
        feed["x%d" % k] = x
    single = helper.make_node(node.op_type, names, ["y"])
    single.attribute.extend(node.attribute)
    graph = helper.make_graph(
        [single], "terms",
        [helper.make_tensor_value_info(n, onnx.TensorProto.DOUBLE, None) for n in feed],
        [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, None)])
    m = helper.make_model(graph, opset_imports=list(model.opset_import))
    return ReferenceEvaluator(m).run(None, feed)[0]


def rounding_bounds(model, values):
    """Per float value of \p model, an elementwise bound on how far float
    rounding in any order of its sums may move it from the exact result,
    where the graph up to it is made of contractions (SUMS), Add, Sub, Mul,
    Relu, MaxPool (the fuzzer's conv chains), Sin, Cos and Softmax (its
    attention); other values have none.
    A contraction adds ROUNDING_UNITS units of its terms' magnitude (the node
    over the absolute values of its inputs) and carries its operands' bounds
    as independent errors (the root of the node over their squares); Add
    and Sub add their operands' bounds and a unit of their result; Relu
    keeps its input's, MaxPool the largest in its window. An estimate for
    the oracle's tolerance, not a proof."""
    bounds = {}
    for init in model.graph.initializer:
        bounds[init.name] = 0.0
    for i in model.graph.input:
        bounds[i.name] = 0.0
    for node in model.graph.node:
        out = node.output[0] if node.output else ""
        y = values.get(out)
        if y is None or y.dtype.kind != "f":
            continue
        unit = float(np.finfo(y.dtype).eps) / 2
        ins = list(node.input)
        if any(n and n not in bounds for n in ins):
            continue
        if node.op_type in SUMS:
            if len(ins) > 2 and ins[2] and np.any(bounds[ins[2]]):
                continue  # a bias computed at run time: no bound
            mag_in = [np.abs(values[n].astype(np.float64)) if n else None for n in ins]
            try:
                mag = run_node(model, node, mag_in)
            except Exception:  # noqa: BLE001
                # ONNX's reference cannot run it (its ConvTranspose with
                # groups fails to broadcast, seed 126359): no bound, so the
                # case stays WRONG rather than stopping the campaign.
                continue
            # The operands' errors carried as independent ones (root of the
            # sum of squares): their signs do not line up, and a bound that
            # added them up would grow by the weights' sum per layer.
            carried = np.zeros(y.shape)
            for k in (0, 1):
                if not np.any(bounds[ins[k]]):
                    continue
                sq = [None if x is None else x * x for x in mag_in[:2]]
                sq[k] = np.broadcast_to(bounds[ins[k]], mag_in[k].shape) ** 2
                carried = carried + run_node(model, node, sq)
            bounds[out] = ROUNDING_UNITS * unit * mag + np.sqrt(carried)
        elif node.op_type in ("Add", "Sub") and len(ins) == 2:
            b = np.broadcast_to(bounds[ins[0]], y.shape) + np.broadcast_to(bounds[ins[1]], y.shape)
            bounds[out] = b + unit * np.abs(y.astype(np.float64))
        elif node.op_type == "Mul" and len(ins) == 2:
            # |a db + b da| plus a unit of the result.
            a, b = (np.abs(values[n].astype(np.float64)) for n in ins)
            bounds[out] = (a * bounds[ins[1]] + b * bounds[ins[0]] +
                           unit * np.abs(y.astype(np.float64)))
        elif node.op_type == "Softmax":
            # dp_i = p_i (dx_i - sum_j p_j dx_j): at most p_i (B_i + the
            # row's largest B), plus EXP_UNITS units of p_i for exp and the
            # division (seed 8222197, --large: attention whose two top
            # logits of 188 tie within 0.8; a 31-term dot product's rounding
            # of 7e-5 moved an output by 6e-4, as NumPy's float32 in the
            # same order does).
            opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
            axis = next((a.i for a in node.attribute if a.name == "axis"), -1 if opset >= 13 else 1)
            nd = y.ndim
            axes = ((axis % nd,) if opset >= 13 else tuple(range(axis % nd, nd))) if nd else ()
            p = np.abs(y.astype(np.float64))
            b = np.broadcast_to(bounds[ins[0]], y.shape).astype(np.float64)
            row = b.max(axis=axes, keepdims=True) if axes else b
            bounds[out] = p * (b + row) + EXP_UNITS * unit * p
        elif node.op_type == "Relu":
            bounds[out] = np.broadcast_to(bounds[ins[0]], y.shape)
        elif node.op_type in ("Sin", "Cos"):
            # Slopes at most 1: the input's bound carries, plus a unit of
            # the result (seed 20272536, --large: cos of a ConvTranspose
            # sum of 23889.9, whose last unit of 0.002 moves the cosine by
            # as much).
            bounds[out] = np.broadcast_to(bounds[ins[0]], y.shape) + unit
        elif node.op_type == "MaxPool" and len(node.output) == 1:
            b = np.broadcast_to(bounds[ins[0]], values[ins[0]].shape).astype(np.float64)
            bounds[out] = run_node(model, node, [b])
    return bounds


# Ops that move or select their input's values without computing new ones:
# a Cast whose input reaches back through them to a graph input, an
# initializer or a Constant casts values both systems hold exactly.
MOVES = ("Reshape", "Transpose", "Gather", "GatherElements", "GatherND", "Slice",
         "Concat", "Identity", "Squeeze", "Unsqueeze", "Flatten", "Expand", "Tile",
         "SpaceToDepth", "DepthToSpace", "Pad", "Split", "Abs", "Neg", "Relu",
         "Max", "Min", "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "Where")
# A float within this many units of rounding (relative, at least 1) of an
# integer: its truncation to an integer type can go either way.
CAST_UNITS = 8


def computed_op(producer, values, src):
    """The op that computed float value \p src, through MOVES (their float
    inputs); None where every float it holds is data (an input or a
    constant, which both systems hold exactly)."""
    n = producer.get(src)
    if n is None or n.op_type == "Constant":
        return None
    if n.op_type not in MOVES:
        return n.op_type
    for i in n.input:
        v = values.get(i)
        if i and v is not None and v.dtype.kind == "f":
            op = computed_op(producer, values, i)
            if op:
                return op
    return None


# Float comparisons, whose bool output a unit of rounding of either operand
# flips where the two are that close.
COMPARISONS = ("Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal")
# Units of rounding (relative to the larger operand) within which a
# comparison of a computed float goes either way: ONNX Runtime's
# transcendentals are a few units off (its Tanh of 2.2094532e-4 is one unit
# below the correctly rounded tanh, which equals x: seed 8711831).
COMPARE_UNITS = 4


def comparison_boundary(model, values, name, element, got, expected):
    """A reason if output \p name is a float comparison whose \p got and
    \p expected differ, and whose two operands at \p element (in the
    reference) lie within COMPARE_UNITS units of rounding of each other, one
    of them computed (not data): the answer is decided by rounding. None
    otherwise."""
    producer = {o: n for n in model.graph.node for o in n.output}
    node = producer.get(name)
    if node is None or node.op_type not in COMPARISONS or abs(got - expected) != 1:
        return None
    out = values.get(name)
    ops = [values.get(i) for i in node.input[:2]]
    if out is None or any(v is None or v.dtype.kind != "f" for v in ops):
        return None
    try:
        a, b = (np.broadcast_to(v, out.shape).reshape(-1) for v in ops)
    except ValueError:
        return None
    if element >= a.size:
        return None
    x, y = float(a[element]), float(b[element])
    info = np.finfo(ops[0].dtype)
    unit = float(info.eps) * max(abs(x), abs(y), float(info.tiny))
    if not (np.isfinite(x) and np.isfinite(y)) or abs(x - y) > COMPARE_UNITS * unit:
        return None
    op = computed_op(producer, values, node.input[0]) or computed_op(producer, values,
                                                                     node.input[1])
    if op is None:
        return None  # both operands are data
    return ("comparison at a tie: %s's operands at element %d, %.9g and %.9g (computed by %s), "
            "lie within %d units of rounding of each other" % (node.op_type, element, x, y, op,
                                                               COMPARE_UNITS))


def cast_boundary(model, values, name, element, got, expected):
    """A reason if output \p name is a Cast from a computed float to an
    integer type, \p got and \p expected differ by one, and the reference's
    float at \p element lies within CAST_UNITS units of rounding of an
    integer: ONNX Runtime's own transcendentals are approximations (its Tanh
    gives -1 for tanh(-8.194887) = -0.99999985, seed 20261621), and the
    truncation of a value that close to an integer is decided by rounding.
    None otherwise."""
    producer = {o: n for n in model.graph.node for o in n.output}
    node = producer.get(name)
    if node is None or node.op_type != "Cast" or abs(got - expected) != 1:
        return None
    x = values.get(node.input[0])
    if x is None or x.dtype.kind != "f" or element >= x.size:
        return None
    op = computed_op(producer, values, node.input[0])
    if op is None:
        return None  # the cast's values are data, held exactly by both
    v = float(x.reshape(-1)[element])
    unit = float(np.finfo(x.dtype).eps) * max(1.0, abs(v))
    if np.isfinite(v) and abs(v - np.round(v)) <= CAST_UNITS * unit:
        return ("cast at an integer: element %d's float %.9g (computed by %s) lies within %d "
                "units of rounding of %g, where truncation goes either way"
                % (element, v, op, CAST_UNITS, np.round(v)))
    return None


def rounding_only(case, detail):
    """A reason if the WRONG \p detail is float rounding where sums cancel:
    the failing output has a rounding bound (rounding_bounds), the failing
    element differs from the reference by at most twice its bound (both
    results are roundings of the exact one), and the output's worst error by
    at most twice its largest bound. None otherwise."""
    m = WRONG_DETAIL.search(detail)
    if not m:
        return None
    out, element = int(m.group(1)), int(m.group(2))
    got, expected, worst = float(m.group(3)), float(m.group(4)), float(m.group(5))
    name = case.model.graph.output[out].name
    values = fuzzgen.run_reference(case.model, case.inputs)
    cast = (cast_boundary(case.model, values, name, element, got, expected) or
            comparison_boundary(case.model, values, name, element, got, expected))
    if cast:
        return cast
    ref = values.get(name)
    if ref is None or ref.dtype.kind != "f" or not np.isfinite(got):
        return None
    bound = rounding_bounds(case.model, values).get(name)
    if bound is None:
        return None
    bound = np.broadcast_to(bound, ref.shape).reshape(-1)
    if element >= bound.size:
        return None
    if abs(got - expected) <= 2 * bound[element] and worst <= 2 * float(bound.max()):
        return ("sums cancel: element %d may move by %.3g by rounding (%d units of its "
                "sums' terms, carried through the graph)" % (element, bound[element],
                                                             ROUNDING_UNITS))
    return None


# LeakSanitizer's own failure at exit (it could not stop the process's
# threads: "does not work under ptrace", or its tracer crashed) is not a
# finding; a finding reads "ERROR: LeakSanitizer: detected memory leaks".
LSAN_SELF_FAILURE = "LeakSanitizer has encountered a fatal error"
SANITIZER_FINDINGS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer:",
                      "runtime error:")


def run_tool(cmd, **kwargs):
    """subprocess.run with captured text output, run once more when the
    only failure was LeakSanitizer's own (in the ASan build, a few of the
    hundreds of aotc processes of a check end that way; the second run is
    judged as it is)."""
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kwargs)
    both = p.stdout + p.stderr
    if p.returncode != 0 and LSAN_SELF_FAILURE in both and \
            not any(f in both for f in SANITIZER_FINDINGS):
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kwargs)
    return p


# The end of the standard error of run_aotc's last process that did not
# finish its report (a crash: the sanitizer's report, a signal), for callers
# to print with the failure.
last_crash = ""


def test_with_profiles(aotc, dirs, env, profiles=("generic-avx2", "generic-avx512", "generic-gpu")):
    """Runs `aotc test` over dirs once per device profile (their heuristics
    pick different kernels for the same shapes); the failures, each named
    by its profile. Prints each run's summary line."""
    failures = []
    for profile in profiles:
        res = run_tool([aotc, "test", "-v", "--device-profile", profile, *dirs], env=env)
        print(f"{profile}:", res.stdout.strip().splitlines()[-1] if res.stdout.strip() else res.stderr)
        failed = [f"{profile}: {line}" for line in res.stdout.splitlines() if line.startswith("FAIL")]
        if res.returncode != 0 and not failed:
            failed.append(f"aotc test --device-profile {profile} exited {res.returncode}: "
                          f"{res.stderr.strip()}")
        failures += failed
    return failures


def run_aotc(aotc, dirs, args, env):
    """Runs aotc test over dirs; {case name: (class, detail)}, or None if the
    process did not finish (crash or timeout; last_crash says which). A
    process that ends in LeakSanitizer's own failure runs once more
    (run_tool); window_grid.py runs this under ASan."""
    global last_crash
    cmd = [aotc, "test", "--rtol", str(args.rtol), "--atol", str(args.atol),
           "-v"] + profile_flags(args) + dirs
    try:
        p = run_tool(cmd, env=env, timeout=args.timeout * max(1, len(dirs)))
    except subprocess.TimeoutExpired:
        last_crash = "timed out"
        return None
    lines = p.stdout.splitlines()
    if not lines or not re.match(r"^\d+ passed, \d+ failed$", lines[-1]):
        last_crash = "exit %d: %s" % (p.returncode, p.stderr[-1500:])
        return None
    out = {}
    for line in lines:
        if line.startswith("PASS "):
            out[line[5:].strip()] = ("pass", "")
        elif line.startswith("FAIL "):
            name = line[5:].split(":", 1)[0]
            out[name] = classify(line)
    return out


def profile_flags(args):
    """The aotc flags of --device-profile (window_grid.py's arguments have
    none)."""
    profile = getattr(args, "device_profile", None)
    flags = ["--device-profile", profile] if profile else []
    flags += ["--row-panels-always"] if getattr(args, "row_panels_always", False) else []
    return flags + (["--narrow-indices"] if getattr(args, "narrow_indices", False) else [])


def cl_warnings(aotc, d, clang, env, flags=()):
    """Warnings (or errors) of a standard OpenCL C compiler on the kernels
    aotc emits for case d (compiled with \p flags); None if clean. Drivers
    differ in what they accept: the emitted code must be plain OpenCL C 1.2."""
    p = subprocess.run([aotc, "compile", os.path.join(d, "model.onnx"), "--emit=cl", *flags],
                       capture_output=True, text=True, env=env, errors="replace")
    if p.returncode != 0:
        return None  # refused: reported by aotc test
    c = subprocess.run([clang, "-x", "cl", "-cl-std=CL1.2", "-fsyntax-only", "-Werror",
                        "-Xclang", "-finclude-default-header", "-"],
                       input=p.stdout, capture_output=True, text=True, errors="replace")
    if c.returncode == 0:
        return None
    lines = [l for l in c.stderr.splitlines() if "error:" in l or "warning:" in l]
    return "OpenCL C compiler: " + (lines[0] if lines else c.stderr[:200]).split(": ", 1)[-1]


def run_batch(aotc, dirs, args, env):
    res = run_aotc(aotc, dirs, args, env)
    if res is not None:
        return res
    if len(dirs) == 1:
        return {os.path.basename(dirs[0]): ("CRASH", "aotc died or timed out")}
    half = len(dirs) // 2
    out = run_batch(aotc, dirs[:half], args, env)
    out.update(run_batch(aotc, dirs[half:], args, env))
    return out


def minimize(aotc, seed, args, env, workdir):
    """The first intermediate value whose result differs: the graph cut
    there, with its reference. Returns (case dir, class, detail) or None."""
    built = fuzzgen.build(seed, args.max_ops, not args.plain_names, args.large,
                          args.shared_weights, args.einsum, args.scatter, args.inverted,
                          args.gemms, args.symbolic_ones, args.generators, args.quantize)
    if built is None:
        return None
    model, inputs, _, _ = built
    values = fuzzgen.run_reference(model, inputs)
    for node in model.graph.node:
        for out in node.output:
            cut = onnx.ModelProto()
            cut.CopyFrom(model)
            del cut.graph.output[:]
            v = values[out]
            vi = onnx.helper.make_tensor_value_info(
                out, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), [None] * v.ndim)
            cut.graph.output.append(vi)
            # Drop the nodes the cut output does not need.
            need, keep = {out}, []
            for n in reversed(cut.graph.node):
                if any(o in need for o in n.output):
                    keep.append(n)
                    need.update(i for i in n.input if i)
            del cut.graph.node[:]
            cut.graph.node.extend(reversed(keep))
            used = need
            inits = [i for i in cut.graph.initializer if i.name in used]
            del cut.graph.initializer[:]
            cut.graph.initializer.extend(inits)
            keep_in = [(i, x) for i, x in zip(cut.graph.input, inputs) if i.name in used]
            del cut.graph.input[:]
            cut.graph.input.extend([i for i, _ in keep_in])
            d = os.path.join(workdir, "min_%d_%s" % (seed, re.sub(r"\W", "_", out)[:20]))
            write_case(d, cut, [x for _, x in keep_in], [v])
            res = run_batch(aotc, [d], args, env).get(os.path.basename(d))
            if res and res[0] in BAD:
                return d, res[0], res[1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--time-budget", type=float, default=0,
                    help="stop generating after this many seconds")
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--max-ops", type=int, default=6)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds per case before a batch counts as hung")
    ap.add_argument("--plain-names", action="store_true")
    ap.add_argument("--large", action="store_true",
                    help="dims up to 64 (whole vectors and register tiles and their remainders), "
                         "at most 32768 elements a tensor, instead of up to 7")
    ap.add_argument("--shared-weights", action="store_true",
                    help="also chains of MatMuls that share one weight (directly or through a "
                         "Transpose), as ALBERT's layers do")
    ap.add_argument("--einsum", action="store_true",
                    help="also Einsums of random equations over one or two operands")
    ap.add_argument("--scatter", action="store_true",
                    help="also ScatterElements and ScatterND with constant indices")
    ap.add_argument("--inverted", action="store_true",
                    help="also MobileNetV2's inverted residual blocks (whose projections run "
                         "chained with the next 1 x 1 convolution on CPU profiles)")
    ap.add_argument("--device-profile", default=None,
                    help="compile the cases for this profile (aotc test --device-profile); "
                         "default: aotc test's own")
    ap.add_argument("--narrow-indices", action="store_true",
                    help="compile as aotc --narrow-indices (32-bit index math where the ranges "
                         "prove it fits; the GPU profiles' default)")
    ap.add_argument("--generators", action="store_true",
                    help="also OneHot (indices from the graph or new, a constant depth) and "
                         "EyeLike")
    ap.add_argument("--quantize", action="store_true",
                    help="also QuantizeLinear of inputs and constants (per tensor or per axis, "
                         "uint8 or int8) and DequantizeLinear, mostly as QDQ pairs")
    ap.add_argument("--symbolic-ones", action="store_true",
                    help="inputs' dims of 1 may be declared symbolic too, so that broadcasts "
                         "meet a symbolic dim that is 1 at run time against another symbolic dim")
    ap.add_argument("--gemms", action="store_true",
                    help="also chains of MatMuls and Gemms by constant weights (the GEMMs "
                         "whose A --row-panels-always reads through panels)")
    ap.add_argument("--row-panels-always", action="store_true",
                    help="compile as aotc --row-panels-always (every MatMul and Gemm by a "
                         "constant reads its A through panels of its tile's rows, whatever "
                         "its size)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--strict-proofs", action="store_true",
                    help="count 'unproven' graphs (the verifier's compile errors on valid "
                         "models) as failures")
    ap.add_argument("--keep", help="keep the case directories here")
    ap.add_argument("--minimize", action="store_true")
    ap.add_argument("--regressions",
                    help="save minimized failures here (with --minimize)")
    ap.add_argument("--generate-only", action="store_true",
                    help="write the cases (with --keep) without running aotc")
    ap.add_argument("--clang",
                    help="also compile each case's OpenCL C with this clang "
                         "(-Werror): any warning is an ERROR")
    ap.add_argument("--results",
                    help="write {case: class} of every graph as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    bad_classes = BAD + (("unproven",) if args.strict_proofs else ())

    work = args.keep or tempfile.mkdtemp(prefix="aotc-fuzz-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("AOTC_DEVICE", "cpu")
    env.setdefault("AOTC_CACHE_DIR", os.path.join(work, "cache"))
    env["AOTC_VERIFY_EACH"] = "1"

    start = time.time()
    counts = collections.Counter()
    skipped = collections.Counter()
    per_op = collections.defaultdict(collections.Counter)
    failures = []
    classes = {}
    pending = []
    ops_of = {}
    cases = {}

    def flush():
        if not pending:
            return
        res = run_batch(args.aotc, pending, args, env)
        for d in pending:
            name = os.path.basename(d)
            cls, detail = res.get(name, ("CRASH", "no result"))
            if cls == "pass" and args.clang:
                why = cl_warnings(args.aotc, d, args.clang, env, profile_flags(args))
                if why:
                    cls, detail = "ERROR", why
            if cls == "WRONG":
                why = rounding_only(cases[name], detail)
                if why:
                    print("rounding %s: %s; %s" % (name, detail[:200], why), flush=True)
                    cls, detail = "rounding", why
            classes[name] = cls
            counts[cls] += 1
            for op in set(ops_of[name]):
                per_op[op][cls] += 1
            if cls in bad_classes:
                failures.append((name, cls, detail))
                print("%s %s: %s" % (cls, name, detail[:300]), flush=True)
            elif cls == "unproven":
                print("%s %s: %s" % (cls, name, detail[:300]), flush=True)
            elif args.verbose:
                print("%s %s %s" % (cls, name, detail[:200]), flush=True)
        pending.clear()

    seed = args.seed
    generated = 0
    while generated < args.count:
        if args.time_budget and time.time() - start > args.time_budget:
            break
        case = fuzzgen.make_case(seed, args.max_ops, not args.plain_names, args.large,
                                 args.shared_weights, args.einsum, args.scatter, args.inverted,
                                 args.gemms, args.symbolic_ones, args.generators,
                                 args.quantize)
        if isinstance(case, str):
            skipped[case.split(":")[0]] += 1
        else:
            name = "seed%d" % seed
            d = os.path.join(work, name)
            write_case(d, case.model, case.inputs, case.outputs)
            ops_of[name] = case.ops
            cases[name] = case
            generated += 1
            if not args.generate_only:
                pending.append(d)
            if len(pending) >= args.batch:
                flush()
        seed += 1
    flush()

    elapsed = time.time() - start
    print("\n%d graphs (seeds %d..%d) in %.0f s: %s; skipped %d (%s)" % (
        generated, args.seed, seed - 1, elapsed,
        ", ".join("%s %d" % kv for kv in sorted(counts.items())),
        sum(skipped.values()),
        ", ".join("%s %d" % kv for kv in skipped.most_common())))
    if args.verbose or failures:
        print("per op (pass/refused/bad):")
        for op, c in sorted(per_op.items()):
            print("  %-20s %4d %4d %4d" % (op, c["pass"], c["refused"],
                                          sum(c[b] for b in bad_classes)))
    if args.results:
        with open(args.results, "w") as f:
            json.dump(classes, f, indent=0, sort_keys=True)
    if args.minimize:
        for name, cls, detail in failures:
            s = int(name[4:])
            m = minimize(args.aotc, s, args, env, work)
            if not m:
                print("minimize %s: the failure needs the whole graph" % name)
                continue
            d, mcls, mdetail = m
            print("minimized %s -> %s %s: %s" % (name, os.path.basename(d), mcls, mdetail[:200]))
            if args.regressions:
                dest = os.path.join(args.regressions, "seed%d" % s)
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(d, dest)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    bad = sum(counts[b] for b in bad_classes)
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Pool and Conv output sizes on a grid, against ONNX Runtime.

Every combination of input size, kernel, stride, dilation, pads, ceil_mode
and auto_pad below (1-D windows: the rule is per dim) becomes one node of a
model per op, each with its own output. aotc's inferred output sizes
(`aotc compile --emit=graph`) must equal ONNX Runtime's; a random subset of
the nodes is also compiled and run on the OpenCL device and its values
compared (`aotc test`). Where ONNX Runtime departs from the ONNX spec (the
spec's sizes are computed here too), the combination is counted apart, not
as aotc's failure.

  .venv/bin/python tests/fuzz/window_grid.py --aotc build/compiler/tools/aotc
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fuzz  # noqa: E402

SIZES = [1, 2, 3, 4, 5, 7, 8]
PADS = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 1), (0, 2), (2, 2)]


def spec_size(n, k, s, d, pb, pe, ceil, auto):
    """ONNX's output size (operators.md, MaxPool/Conv), or None if invalid."""
    ek = d * (k - 1) + 1
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        return -(-n // s)
    if auto == "VALID":
        return (n - ek) // s + 1 if n >= ek else None
    span = n + pb + pe - ek
    if span < 0:
        return None
    if not ceil:
        return span // s + 1
    o = -(-span // s) + 1
    if (o - 1) * s >= n + pb:  # the last window would start in the padding
        o -= 1
    return o


def configs(op):
    for n in SIZES:
        for k in (1, 2, 3):
            for s in (1, 2, 3):
                for d in ((1, 2) if op != "AveragePool" else (1,)):
                    ek = d * (k - 1) + 1
                    for auto in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
                        pads = PADS if auto == "NOTSET" else [(0, 0)]
                        for pb, pe in pads:
                            if pb >= k or pe >= k:
                                continue  # ONNX Runtime: pads below the kernel
                            for ceil in ((0, 1) if op != "Conv" and auto == "NOTSET" else (0,)):
                                want = spec_size(n, k, s, d, pb, pe, ceil, auto)
                                if want is None or want < 1:
                                    continue
                                yield dict(n=n, k=k, s=s, d=d, pb=pb, pe=pe, ceil=ceil,
                                           auto=auto, spec=want)


def build(op, cfgs, rng):
    inputs, nodes, outputs, inits, feeds = [], [], [], [], {}
    for n in SIZES:
        inputs.append(helper.make_tensor_value_info("x%d" % n, TensorProto.FLOAT, [1, 1, n]))
        feeds["x%d" % n] = rng.standard_normal((1, 1, n)).astype(np.float32)
    for k in (1, 2, 3):
        if op == "Conv":
            inits.append(numpy_helper.from_array(
                rng.standard_normal((1, 1, k)).astype(np.float32), "w%d" % k))
    for i, c in enumerate(cfgs):
        attrs = dict(kernel_shape=[c["k"]], strides=[c["s"]])
        if c["auto"] == "NOTSET":
            attrs["pads"] = [c["pb"], c["pe"]]
        else:
            attrs["auto_pad"] = c["auto"]
        if c["d"] != 1:
            attrs["dilations"] = [c["d"]]
        if c["ceil"]:
            attrs["ceil_mode"] = 1
        if op == "AveragePool" and i % 2:
            attrs["count_include_pad"] = 1
        ins = ["x%d" % c["n"]] + (["w%d" % c["k"]] if op == "Conv" else [])
        nodes.append(helper.make_node(op, ins, ["o%d" % i], name="n%d" % i, **attrs))
        outputs.append(helper.make_tensor_value_info("o%d" % i, TensorProto.FLOAT, [None] * 3))
    graph = helper.make_graph(nodes, "grid_" + op.lower(), inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, feeds


def ort_run(model, feeds):
    """Each node's output from ONNX Runtime, one session per node (it refuses
    some combinations the spec allows); None where it fails."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    out = {}
    for node, vi in zip(model.graph.node, model.graph.output):
        one = onnx.ModelProto()
        one.CopyFrom(model)
        del one.graph.node[:]
        one.graph.node.append(node)
        del one.graph.output[:]
        one.graph.output.append(vi)
        keep = [i for i in one.graph.input if i.name == node.input[0]]
        del one.graph.input[:]
        one.graph.input.extend(keep)
        try:
            sess = ort.InferenceSession(one.SerializeToString(), opts,
                                        providers=["CPUExecutionProvider"])
            out[vi.name] = sess.run([vi.name], {node.input[0]: feeds[node.input[0]]})[0]
        except Exception:  # noqa: BLE001 - ORT refuses or fails this one
            out[vi.name] = None
    return out


def aotc_sizes(aotc, path):
    p = subprocess.run([aotc, "compile", path, "--emit=graph"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit("aotc refused the grid model: " + p.stderr.strip()[:500])
    sizes = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*%(o\d+): \w+\[([^\]]*)\] = ", line)
        if m:
            sizes[m.group(1)] = [int(x) for x in m.group(2).split(",")]
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aotc", required=True)
    ap.add_argument("--run", type=int, default=40,
                    help="nodes per op also run on the device (values)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    work = tempfile.mkdtemp(prefix="aotc-grid-")
    env = dict(os.environ)
    env.setdefault("AOTC_DEVICE", "cpu")
    env.setdefault("AOTC_CACHE_DIR", os.path.join(work, "cache"))
    failures, total, deviations, ran = [], 0, 0, 0
    for op in ("MaxPool", "AveragePool", "Conv"):
        cfgs = list(configs(op))
        model, feeds = build(op, cfgs, rng)
        onnx.checker.check_model(model)
        ref = ort_run(model, feeds)
        path = os.path.join(work, op + ".onnx")
        onnx.save(model, path)
        got = aotc_sizes(args.aotc, path)
        agree = []
        for i, c in enumerate(cfgs):
            name = "o%d" % i
            ort_size = ref[name].shape[2] if ref[name] is not None else None
            total += 1
            if ort_size != c["spec"]:
                deviations += 1  # ONNX Runtime departs from the spec
                if got.get(name, [None] * 3)[2] != c["spec"]:
                    failures.append("%s %s: aotc %s, ONNX spec %d (ORT %d)" % (
                        op, c, got.get(name), c["spec"], ort_size))
                continue
            if got.get(name) != list(ref[name].shape):
                failures.append("%s %s: aotc %s, ONNX Runtime %s" % (
                    op, c, got.get(name), list(ref[name].shape)))
            else:
                agree.append(i)
        # Values: a random subset, compiled and run as one model.
        # Half of them where the rules bite: ceil_mode, auto_pad, dilations.
        edgy = [i for i in agree if cfgs[i]["ceil"] or cfgs[i]["auto"] != "NOTSET"
                or cfgs[i]["d"] > 1]
        first = list(rng.choice(edgy, size=min(args.run // 2, len(edgy)), replace=False))
        rest = [i for i in agree if i not in first]
        pick = sorted(first + list(rng.choice(rest, size=min(args.run - len(first), len(rest)),
                                              replace=False)))
        sub = onnx.ModelProto()
        sub.CopyFrom(model)
        keep = {"o%d" % i for i in pick}
        del sub.graph.node[:]
        sub.graph.node.extend(n for n in model.graph.node if n.output[0] in keep)
        del sub.graph.output[:]
        for i in pick:
            v = ref["o%d" % i]
            sub.graph.output.append(helper.make_tensor_value_info(
                "o%d" % i, TensorProto.FLOAT, list(v.shape)))
        d = os.path.join(work, "values_" + op)
        run_fuzz.write_case(d, sub, [feeds[i.name] for i in sub.graph.input],
                            [ref["o%d" % i] for i in pick])
        res = run_fuzz.run_aotc(args.aotc, [d], argparse.Namespace(
            rtol=1e-4, atol=1e-5, timeout=600), env)
        ran += len(pick)
        cls = (res or {}).get(os.path.basename(d),
                              ("CRASH", "aotc died: " + run_fuzz.last_crash))
        if cls[0] != "pass":
            m = re.search(r"output (\d+):", cls[1])
            which = cfgs[pick[int(m.group(1))]] if m else "?"
            detail = cls[1] if cls[0] == "CRASH" else cls[1][:300]
            failures.append("%s values: %s %s; node %s" % (op, cls[0], detail, which))
        print("%-12s %4d combinations, %3d run on the device: %s" % (
            op, len(cfgs), len(pick), "ok" if cls[0] == "pass" else cls[0]))
    print("%d combinations (%d where ONNX Runtime departs from the spec), %d "
          "run on the device: %d failures" % (total, deviations, ran, len(failures)))
    for f in failures[:30]:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

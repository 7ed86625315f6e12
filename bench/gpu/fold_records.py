#!/usr/bin/env python3
"""The weights lifecycle of models with a folding program, recorded on this
machine's CPU device and checked on another OpenCL device (the lent GPU).

record DIR [--onnx M.onnx ...]: compiles Conv+BatchNormalization models (a
small generated one, every weight updated, and the given exports, e.g.
`export_models.py --keep-names` networks, their 1-D weights updated) for the
CPU and the generic-gpu profiles, runs each
on the CPU device at load, after an update of the active set and after an
update of the inactive set + run_const_fold + swap, and saves the inputs,
the new weights and the three outputs (DIR/NAME.npz, DIR/fold_records.json).

check DIR [--device gpu]: loads each .so on the device, replays the same
steps and compares every output with the recorded one (relative 1e-4).
Needs only numpy and bench/gpu/aotc_ctypes.py (no onnx, no onnxruntime).
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402

PROFILES = {"cpu": [], "gpu": ["--device-profile", "generic-gpu"]}


def small_model(path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(5)

    def bn(p, c):
        return [nh.from_array(rng.standard_normal(c).astype(np.float32), p + "_gamma"),
                nh.from_array(rng.standard_normal(c).astype(np.float32), p + "_beta"),
                nh.from_array(rng.standard_normal(c).astype(np.float32), p + "_mean"),
                nh.from_array(rng.uniform(0.3, 2, c).astype(np.float32), p + "_var")]
    inits = [nh.from_array(rng.standard_normal((32, 3, 3, 3)).astype(np.float32), "w1"),
             nh.from_array(rng.standard_normal(32).astype(np.float32), "b1"),
             nh.from_array(rng.standard_normal((10, 32, 1, 1)).astype(np.float32), "w2")]
    inits += bn("bn1", 32) + bn("bn2", 10)
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["c1", "bn1_gamma", "bn1_beta", "bn1_mean", "bn1_var"],
                         ["n1"]),
             h.make_node("Relu", ["n1"], ["r1"]), h.make_node("Conv", ["r1", "w2"], ["c2"]),
             h.make_node("BatchNormalization", ["c2", "bn2_gamma", "bn2_beta", "bn2_mean", "bn2_var"],
                         ["y"])]
    g = h.make_graph(nodes, "convbn", [h.make_tensor_value_info("x", T.FLOAT, ["n", 3, 19, 23])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 10, 19, 23])], inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


def initializers(path):
    import onnx
    from onnx import numpy_helper as nh
    return {i.name: nh.to_array(i) for i in onnx.load(path).graph.initializer}


def new_weights(weights, seed, vectors_only):
    """Fresh values for every float initializer (variances > 0), or only the
    1-D ones (normalization parameters, biases: what keeps a network's
    records small enough to carry)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, a in weights.items():
        if a.dtype != np.float32 or a.ndim == 0 or (vectors_only and a.ndim != 1):
            continue
        v = rng.standard_normal(a.shape)
        if "var" in name:
            v = np.abs(v) + 0.5
        else:
            v = a + 0.1 * v.astype(np.float32) * (np.abs(a).max() + 1e-3)
        out[name] = v.astype(np.float32)
    return out


def steps(model, x, update1, update2):
    """The three outputs: at load, after updating the active set, after
    updating the inactive set, folding it and swapping."""
    outs = [model.run([x])[0]]
    model.update_constants(update1, validate_full=False)
    outs.append(model.run([x])[0])
    model.update_constants(update2, use_inactive=True, validate_full=False)
    model._check(model.lib.aotc_container_run_const_fold(model.c, 1))
    model._check(model.lib.aotc_container_swap_constant_buffer(model.c))
    outs.append(model.run([x])[0])
    return outs


def record(a):
    os.makedirs(a.dir, exist_ok=True)
    sources = [os.path.join(a.dir, "convbn.onnx")]
    small_model(sources[0])
    sources += a.onnx
    entries = []
    for src in sources:
        base = os.path.splitext(os.path.basename(src))[0]
        weights = initializers(src)
        small = src == sources[0]
        u1, u2 = new_weights(weights, 1, not small), new_weights(weights, 2, not small)
        import onnx
        inp = onnx.load(src, load_external_data=False).graph.input[0]
        dims = [d.dim_value or 2 for d in inp.type.tensor_type.shape.dim]
        dims[0] = 2
        x = np.random.default_rng(3).standard_normal(dims).astype(np.float32)
        for profile, flags in PROFILES.items():
            name = f"{base}-{profile}"
            so = os.path.join(a.dir, name + ".so")
            r = subprocess.run([a.aotc, "compile", src, "-o", so] + flags, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"compile {src}: {r.stderr}")
            outs = steps(Model(so, device="cpu"), x, u1, u2)
            if np.array_equal(outs[0], outs[1]) or np.array_equal(outs[1], outs[2]):
                raise SystemExit(f"{name}: an update did not change the output")
            np.savez(os.path.join(a.dir, name + ".npz"), x=x, out0=outs[0], out1=outs[1], out2=outs[2],
                     **{f"u1:{k}": v for k, v in u1.items()}, **{f"u2:{k}": v for k, v in u2.items()})
            entries.append({"so": name + ".so", "data": name + ".npz"})
            print(f"recorded {name}: {len(u1)} weights updated")
        if src == sources[0]:
            os.remove(src)
    with open(os.path.join(a.dir, "fold_records.json"), "w") as f:
        json.dump(entries, f, indent=1)


def check(a):
    with open(os.path.join(a.dir, "fold_records.json")) as f:
        entries = json.load(f)
    bad = 0
    for e in entries:
        d = np.load(os.path.join(a.dir, e["data"]))
        u1 = {k[3:]: d[k] for k in d.files if k.startswith("u1:")}
        u2 = {k[3:]: d[k] for k in d.files if k.startswith("u2:")}
        try:
            m = Model(os.path.join(a.dir, e["so"]), device=a.device)
            outs = steps(m, d["x"], u1, u2)
        except RuntimeError as err:
            print(f"FAIL {e['so']}: {err}")
            bad += 1
            continue
        errs = []
        for k, o in enumerate(outs):
            ref = d[f"out{k}"].astype(np.float64)
            errs.append(float(np.abs(o - ref).max() / max(np.abs(ref).max(), 1e-30)))
        ok = all(err <= 1e-4 for err in errs)
        bad += not ok
        print(f"{'ok' if ok else 'FAIL'} {e['so']} on {m.device_name}: relative errors at load "
              f"{errs[0]:.2g}, after update {errs[1]:.2g}, after fold+swap {errs[2]:.2g}")
    print(f"{len(entries) - bad} of {len(entries)} match")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("record")
    r.add_argument("dir")
    r.add_argument("--aotc", default="build/compiler/tools/aotc")
    r.add_argument("--onnx", nargs="*", default=[])
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--device", default="gpu")
    a = ap.parse_args()
    if a.mode == "record":
        record(a)
        return 0
    return check(a)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How long a model takes from nothing to its first result on a fresh
machine: aotc with and without a program binary embedded at compile time
(`aotc compile --prebuild cpu`), against ONNX Runtime, alternated.

For each model: compiles it twice (default, and with --prebuild cpu under
a fresh PoCL cache, so the compile pays PoCL's whole build), then ROUNDS
times in turn:
  - `aotc run X.so --repeat 1` with empty caches (a fresh AOTC_CACHE_DIR and
    POCL_CACHE_DIR each time: the first load on a new machine or container),
    for both builds;
  - the same again with the caches it left (the second load);
  - a Python process that imports ONNX Runtime, creates the session and
    runs once.
Each figure is a whole process's wall time (start, load, the runtime's
warm-up run, one timed run), median over the rounds.

  .venv-bench/bin/python bench/cpu/cold_load.py --models resnet18,resnet50 --rounds 3
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ORT_RUN = r"""
import sys, numpy as np, onnx, onnxruntime as ort
path, batch = sys.argv[1], int(sys.argv[2])
m = onnx.load(path, load_external_data=False)
inits = {i.name for i in m.graph.initializer}
feeds = {}
for i in m.graph.input:
    if i.name in inits:
        continue
    t = i.type.tensor_type
    shape = [d.dim_value if d.dim_value else batch for d in t.shape.dim]
    if t.elem_type == onnx.TensorProto.INT64:
        feeds[i.name] = np.ones(shape, np.int64)
    else:
        feeds[i.name] = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
o = ort.SessionOptions()
o.intra_op_num_threads, o.inter_op_num_threads = 2, 1
ort.InferenceSession(path, o, providers=["CPUExecutionProvider"]).run(None, feeds)
"""


def timed(cmd, env=None):
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"cold_load: {' '.join(cmd)} failed: {r.stderr.strip()}")
    return time.monotonic() - start, r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aotc", default=os.environ.get("AOTC", os.path.join(ROOT, "build/compiler/tools/aotc")))
    ap.add_argument("--models", default="mlp,resnet18,mobilenet_v2,resnet50,bert_base")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "bench/models"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="aotc-cold-")
    results = []
    try:
        for name in args.models.split(","):
            onnx_path = os.path.join(args.models_dir, name + ".onnx")
            plain, pre = os.path.join(work, name + ".so"), os.path.join(work, name + "-prebuilt.so")
            t_plain, _ = timed([args.aotc, "compile", onnx_path, "-o", plain, "--vector-lanes", "host"])
            pocl = tempfile.mkdtemp(dir=work)
            t_pre, r = timed([args.aotc, "compile", onnx_path, "-o", pre, "--vector-lanes", "host",
                              "--prebuild", "cpu"], env=dict(os.environ, POCL_CACHE_DIR=pocl))
            embedded = [l for l in r.stderr.splitlines() if "embedded the program" in l]
            row = {"model": name, "compile_s": t_plain, "compile_prebuild_s": t_pre,
                   "so_bytes": os.path.getsize(plain), "so_prebuilt_bytes": os.path.getsize(pre),
                   "embedded": embedded[0] if embedded else "", "cold": {}, "warm": {}, "ort": []}
            for _ in range(args.rounds):
                for tag, so in (("default", plain), ("prebuilt", pre)):
                    ac, pc = tempfile.mkdtemp(dir=work), tempfile.mkdtemp(dir=work)
                    env = dict(os.environ, AOTC_CACHE_DIR=ac, POCL_CACHE_DIR=pc, AOTC_DEVICE="cpu")
                    # Symbolic dims at their smallest (batch 1): the load is the point.
                    cmd = [args.aotc, "run", so, "--repeat", "1"]
                    row["cold"].setdefault(tag, []).append(timed(cmd, env)[0])
                    row["warm"].setdefault(tag, []).append(timed(cmd, env)[0])
                    shutil.rmtree(ac)
                    shutil.rmtree(pc)
                row["ort"].append(timed([sys.executable, "-c", ORT_RUN, onnx_path, str(args.batch)])[0])
            med = lambda xs: statistics.median(xs)  # noqa: E731
            print(f"{name}: compile {t_plain:.2f} s, with --prebuild cpu {t_pre:.2f} s "
                  f"(.so {row['so_bytes'] / 1e6:.1f} -> {row['so_prebuilt_bytes'] / 1e6:.1f} MB); "
                  f"first load to first result, empty caches: default {med(row['cold']['default']):.2f} s, "
                  f"prebuilt {med(row['cold']['prebuilt']):.2f} s; second load: "
                  f"{med(row['warm']['default']):.2f} / {med(row['warm']['prebuilt']):.2f} s; "
                  f"ONNX Runtime (process, import, session, run) {med(row['ort']):.2f} s", flush=True)
            results.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "batch": args.batch, "models": results}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ONNX node tests whose shape-like inputs are graph inputs, run with those
inputs bound as constants.

aotc needs shapes, axes, pads, scales and the like at compile time; ONNX's
node tests often pass them as graph inputs, which aotc refuses ("must be
known at compile time"). This check binds each input such a refusal names to
its value in test_data_set_0 (an initializer), drops it from the inputs and
runs `aotc test` on the rest: every lowering that reads such values is
checked against ONNX's stored outputs. Usage:

    check_bound_inputs.py AOTC NODE_DIR [--list OUT]

Prints one line per case (PASS/FAIL/REFUSED) and a summary; exits 1 on any
FAIL that is not a clean refusal.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import onnx

aotc, root = sys.argv[1], sys.argv[2]
listing = sys.argv[sys.argv.index("--list") + 1] if "--list" in sys.argv else None
clean = re.compile(r"(unsupported|not supported|must be known at compile time)")
needs = re.compile(r"input \d+ \('([^']+)'\) \([^)]*\) must be known at compile time|"
                   r"input \d+ \('([^']+)'\) must be known at compile time")


def compile_error(case_dir, tmp):
    r = subprocess.run([aotc, "compile", os.path.join(case_dir, "model.onnx"), "-o",
                        os.path.join(tmp, "m.so")], capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


def bind(src, dst, names):
    """Copies case src to dst with the graph inputs in names made initializers
    (values from test_data_set_0) and the data sets renumbered."""
    model = onnx.load(os.path.join(src, "model.onnx"))
    inputs = [i.name for i in model.graph.input]
    keep = [k for k, n in enumerate(inputs) if n not in names]
    sets = sorted(d for d in os.listdir(src) if d.startswith("test_data_set_"))
    for k, n in enumerate(inputs):
        if n in names:
            t = onnx.TensorProto()
            with open(os.path.join(src, sets[0], f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            t.name = n
            model.graph.initializer.append(t)
    for vi in [i for i in model.graph.input if i.name in names]:
        model.graph.input.remove(vi)
    os.makedirs(dst)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    for s in sets[:1]:
        os.makedirs(os.path.join(dst, s))
        for f in os.listdir(os.path.join(src, s)):
            if f.startswith("output_"):
                shutil.copy(os.path.join(src, s, f), os.path.join(dst, s, f))
        for new, old in enumerate(keep):
            shutil.copy(os.path.join(src, s, f"input_{old}.pb"),
                        os.path.join(dst, s, f"input_{new}.pb"))


counts = {"PASS": 0, "FAIL": 0, "REFUSED": 0}
lines = []
with tempfile.TemporaryDirectory() as tmp:
    for case in sorted(os.listdir(root)):
        src = os.path.join(root, case)
        if not os.path.exists(os.path.join(src, "model.onnx")):
            continue
        err = compile_error(src, tmp)
        if not err or "must be known at compile time" not in err:
            continue
        names, cur, status, msg = set(), src, None, err
        for attempt in range(4):
            m = needs.search(msg or "")
            if not m:
                status = "REFUSED"
                break
            names.add(m.group(1) or m.group(2))
            cur = os.path.join(tmp, f"{case}_{attempt}")
            bind(src, cur, names)
            msg = compile_error(cur, tmp)
            if msg is None:
                break
        if status is None and msg is not None:
            status = "REFUSED" if clean.search(msg) else "FAIL"
        if status is None:
            r = subprocess.run([aotc, "test", cur], capture_output=True, text=True)
            status = "PASS" if "1 passed, 0 failed" in r.stdout else "FAIL"
            msg = "" if status == "PASS" else (r.stdout + r.stderr).strip().splitlines()[-2:]
        counts[status] += 1
        line = f"{status} {case} (bound: {', '.join(sorted(names))})" + (f": {msg}" if status != "PASS" else "")
        lines.append(line)
        print(line, flush=True)
if listing:
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
print(f"bound inputs: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['REFUSED']} refused")
sys.exit(1 if counts["FAIL"] else 0)

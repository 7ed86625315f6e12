#!/usr/bin/env python3
"""The record/replay path that carries e2e checks to the lent GPU
(AOTC_RECORD_DIR in compiled_model.py, bench/gpu/replay_records.py) must
report what differs: recorded runs of three small models (float32 with a
symbolic batch, an int64 sum that wraps, exact float16 casts) replay
clean on the CPU device, and each tampering (one float32 element far off,
one integer, one float16 bit of an exact record, a wrong shape) fails the
replay naming that run. Usage: check_replay.py AOTC"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

import compiled_model

aotc = sys.argv[1]
tmp = tempfile.mkdtemp()
rec = os.path.join(tmp, "records")
os.environ["AOTC_RECORD_DIR"] = rec
rng = np.random.default_rng(5)
replay = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu",
                      "replay_records.py")


def model(name, nodes, inputs, outputs):
    return h.make_model(h.make_graph(nodes, name, inputs, outputs), opset_imports=[h.make_opsetid("", 19)])


f32, _ = compiled_model.compile_model(aotc, tmp, "r_f32", model(
    "f", [h.make_node("Tanh", ["x"], ["t"]), h.make_node("Mul", ["t", "x"], ["y"])],
    [h.make_tensor_value_info("x", T.FLOAT, ["n", 7])], [h.make_tensor_value_info("y", T.FLOAT, ["n", 7])]))
i64, _ = compiled_model.compile_model(aotc, tmp, "r_i64", model(
    "i", [h.make_node("Add", ["a", "b"], ["y"])],
    [h.make_tensor_value_info("a", T.INT64, [9]), h.make_tensor_value_info("b", T.INT64, [9])],
    [h.make_tensor_value_info("y", T.INT64, [9])]))
cast, _ = compiled_model.compile_model(aotc, tmp, "r_cast", model(
    "c", [h.make_node("Cast", ["x"], ["y"], to=T.FLOAT16)],
    [h.make_tensor_value_info("x", T.FLOAT, [100])], [h.make_tensor_value_info("y", T.FLOAT16, [100])]),
    exact=True)
f32.run([rng.standard_normal((1, 7)).astype(np.float32)])
f32.run([rng.standard_normal((5, 7)).astype(np.float32)])
big = np.iinfo(np.int64).max
i64.run([np.full(9, big, np.int64), np.arange(9, dtype=np.int64)])
cast.run([(rng.standard_normal(100) * 1000).astype(np.float32)])

failed = 0


def run_replay():
    r = subprocess.run([sys.executable, replay, rec, "--device", "cpu"], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def expect(ok, what, out):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        print(out)
        failed += 1


rc, out = run_replay()
expect(rc == 0 and "4 of 4 runs match" in out and "replay ok" in out, "untouched records replay clean", out)


def tamper(data, change, needle):
    path = os.path.join(rec, data)
    saved = dict(np.load(path))
    d = {k: v.copy() for k, v in saved.items()}
    change(d)
    np.savez(path, **d)
    rc, out = run_replay()
    expect(rc != 0 and f"FAIL {data}" in out and needle in out and "3 of 4 runs match" in out,
           f"tampered {data} fails ({needle})", out)
    np.savez(path, **saved)


def far(d):
    d["out0"].flat[3] += 0.01 * np.abs(d["out0"]).max()


def one_int(d):
    d["out0"][4] += 1


def one_bit(d):
    d["out0"].view(np.uint16)[17] ^= 1


def shape(d):
    d["out0"] = d["out0"][:, :6].copy()


tamper("r_f32.1.npz", far, "max error")
tamper("r_i64.0.npz", one_int, "1 elements differ")
tamper("r_cast.0.npz", one_bit, "1 elements differ")
tamper("r_f32.0.npz", shape, "recorded float32(1, 6)")
print("replay check ok" if failed == 0 else f"replay check: {failed} failed")
sys.exit(1 if failed else 0)

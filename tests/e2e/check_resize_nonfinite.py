#!/usr/bin/env python3
"""Resize over channels holding inf and NaN against ONNX Runtime.

An axis whose scale is 1 and whose size does not change must read the input at the
output's index: interpolating along it with taps of weight 1 and 0 turned an inf or a
NaN in the next channel into NaN (0 x inf) in a channel that holds none.
For linear, cubic and nearest modes over x[n, 5, 4, 3] with scales [1, 1, 2, 2] and
[1, 1, 1, 2], +inf, -inf and NaN in channels 1, 3 and 4 and random values elsewhere,
at batch 1 and 2: channels 0 and 2 (all finite) are finite and equal ONNX Runtime's.
(Inside a channel that holds an inf, a zero-weight spatial tap is where the two may
differ: ONNX Runtime reads it, aotc clamps the coordinate first.)
Usage: check_resize_nonfinite.py AOTC
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(37)
tmp = tempfile.mkdtemp()
failed = checks = 0

for mode in ("linear", "cubic", "nearest"):
    for scales in ([1, 1, 2, 2], [1, 1, 1, 2]):
        tag = f"{mode} scales {scales}"
        g = h.make_graph(
            [h.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode)], "resize_nonfinite",
            [h.make_tensor_value_info("x", T.FLOAT, ["n", 5, 4, 3])],
            [h.make_tensor_value_info("y", T.FLOAT, ["n", 5, 4 * scales[2], 3 * scales[3]])],
            [nh.from_array(np.array(scales, np.float32), "scales")])
        proto = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        path = os.path.join(tmp, "r.onnx")
        so = os.path.join(tmp, f"r_{mode}_{scales[2]}.so")  # dlopen caches by path
        onnx.save(proto, path)
        r = subprocess.run([aotc, "compile", path, "-o", so], capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            print("FAIL", tag, "compile:", r.stderr.strip())
            continue
        sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        model = Model(so, device="cpu")
        for n in (1, 2):
            x = rng.standard_normal((n, 5, 4, 3)).astype(np.float32)
            x[0, 1, 2, 1] = np.inf   # the next channel of channel 0's element
            x[0, 3, 0, 0] = -np.inf
            x[-1, 4, 3, 2] = np.nan  # the last channel's
            ref = sess.run(None, {"x": x})[0]
            out = np.asarray(model.run([x])[0]).reshape(ref.shape)
            checks += 1
            o, rf = out[:, [0, 2]], ref[:, [0, 2]]
            same = np.isfinite(o) & np.isfinite(rf) & (np.abs(o - rf) <= 1e-5 * np.maximum(1.0, np.abs(rf)))
            if not same.all():
                failed += 1
                bad = np.argwhere(~same)[:3]
                print("FAIL", tag, f"batch {n}: {int((~same).sum())} elements of channels 0 and 2 differ, e.g.",
                      [(tuple(int(v) for v in b), float(o[tuple(b)]), float(rf[tuple(b)])) for b in bad])
print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("resize nonfinite ok")

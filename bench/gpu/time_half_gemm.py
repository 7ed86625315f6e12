#!/usr/bin/env python3
"""Times MatMul + Relu (N x N x N, constant B) in float32, float16 and
bfloat16 through aotc on one OpenCL device, host to host, medians of 20
runs after 3 warm-ups; .so files from `prepare`.
  time_half_gemm.py prepare AOTC DIR [N] [flags...]   (on the build machine)
  time_half_gemm.py run DIR [--device gpu]            (where it runs)"""
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import BF16, Model  # noqa: E402

TYPES = {"float32": 1, "float16": 10, "bfloat16": 16}


def prepare(aotc, d, n, flags):
    import onnx
    from onnx import helper as h
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(3)
    for name, t in TYPES.items():
        b = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
        if name == "bfloat16":
            init = h.make_tensor("B", t, [n, n], (b.view(np.uint32) >> 16).astype(np.uint16).tobytes(), raw=True)
        else:
            init = onnx.numpy_helper.from_array(b.astype(np.float16 if t == 10 else np.float32), "B")
        g = h.make_graph([h.make_node("MatMul", ["a", "B"], ["m"]), h.make_node("Relu", ["m"], ["y"])], "g",
                         [h.make_tensor_value_info("a", t, [n, n])], [h.make_tensor_value_info("y", t, [n, n])],
                         [init])
        path = os.path.join(d, f"mm_{name}_{n}.onnx")
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 22)]), path)
        subprocess.run([aotc, "compile", path, "-o", path[:-5] + ".so"] + flags, check=True)
        os.remove(path)


def run(d, device):
    res = []
    for so in sorted(f for f in os.listdir(d) if f.endswith(".so")):
        m = Model(os.path.join(d, so), device=device)
        _, name, n = so[:-3].split("_")
        n = int(n)
        a = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
        x = a.astype(np.float16) if name == "float16" else \
            (a.view(np.uint32) >> 16).astype(np.uint16).view(BF16) \
            if name == "bfloat16" else a
        bufs = [np.empty(n * n * 4, np.uint8)]
        for _ in range(3):
            m.run([x], out_buffers=bufs)
        ts = []
        for _ in range(20):
            t0 = time.perf_counter()
            m.run([x], out_buffers=bufs)
            ts.append((time.perf_counter() - t0) * 1e3)
        med = float(np.median(ts))
        res.append({"type": name, "n": n, "median_ms": med, "gflops": 2 * n ** 3 / med / 1e6,
                    "device": m.device_name})
        print(f"{name:9s} {n}^3 MatMul+Relu: median {med:.2f} ms ({2 * n ** 3 / med / 1e6:.0f} GFLOP/s) on {m.device_name}")
    return res


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 2048, sys.argv[5:])
    else:
        dev = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "gpu"
        r = run(sys.argv[2], dev)
        if os.environ.get("OUT"):
            json.dump(r, open(os.path.join(os.environ["OUT"], "half_gemm.json"), "w"), indent=1)

#!/usr/bin/env python3
"""The CPU benchmark harness's own parts whose mistakes would put wrong figures
in docs/PERFORMANCE.md (bench/cpu):

  - tools.compiled_kernels reads the kernels and launches from `aotc
    compile`'s summary line in each of its forms ("65 kernels in 4
    launches", "3 kernels in 1 launch", "1 kernels"), and from a real
    compile of a model whose kernels run as one persistent launch (the
    singular "launch" was read as no count: the MLP's 3 kernels in 1 launch
    were reported as 3 launches);
  - the timing worker (worker.py) leaves NumPy's OpenBLAS without worker
    threads: one spun after NumPy's import and took a CPU from the measured
    system's threads in a first run (gemm_512: 0.7 -> 4.8 ms in some fresh
    processes on 2 CPUs). Importing the worker in a fresh process must not
    start a thread.

Usage: check_bench_tools.py AOTC    (prints "bench tools ok")
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tools  # noqa: E402
from e2e_graphs import Checks  # noqa: E402

aotc = sys.argv[1]
checks = Checks("bench tools")

for text, want in (("aotc: wrote m.so (65 kernels in 4 launches, 13 more in the folding program", (65, 4)),
                   ("aotc: wrote m.so (3 kernels in 1 launch, arena (32768 * batch) bytes", (3, 1)),
                   ("aotc: wrote m.so (1 kernels, arena 0 bytes", (1, 1))):
    got = tools.compiled_kernels(text)
    checks.check()
    if (got.get("kernels"), got.get("launches")) != want:
        checks.fail(f"compiled_kernels({text!r}) = {got}, expected kernels {want[0]}, launches {want[1]}")

# Two GEMMs by constants with a Relu between: two kernels, one persistent launch on CPUs.
rng = np.random.default_rng(7)
w1 = nh.from_array(rng.standard_normal((64, 96)).astype(np.float32), "w1")
w2 = nh.from_array(rng.standard_normal((96, 48)).astype(np.float32), "w2")
g = h.make_graph([h.make_node("MatMul", ["x", "w1"], ["a"]), h.make_node("Relu", ["a"], ["r"]),
                  h.make_node("MatMul", ["r", "w2"], ["y"])], "two_gemms",
                 [h.make_tensor_value_info("x", T.FLOAT, ["batch", 64])],
                 [h.make_tensor_value_info("y", T.FLOAT, ["batch", 48])], [w1, w2])
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "two_gemms.onnx")
with open(path, "wb") as f:
    f.write(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString())
res = tools.aotc_compile(aotc, path, os.path.join(tmp, "two_gemms.so"), 120, ["--vector-lanes", "16"])
checks.check()
if "refused" in res or res.get("kernels") != 2 or res.get("launches") != 1:
    checks.fail(f"compiling two GEMMs: {res}, expected 2 kernels in 1 launch")

# A fresh process that imports the worker (and so NumPy) has one thread.
probe = ("import os, sys; sys.path.insert(0, %r); import worker; "
         "print(len(os.listdir('/proc/self/task')))" % os.path.join(ROOT, "bench", "cpu"))
env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
checks.check()
if r.returncode != 0 or r.stdout.strip() != "1":
    checks.fail(f"threads after importing bench/cpu/worker.py: {r.stdout.strip()!r} "
                f"(expected 1; stderr {r.stderr.strip()[-300:]!r})")
checks.done()

"""A model whose one weight is larger than 2 GiB, compiled and run end to end.

MatMul x[1, K] . W[K, 1] with K = 560,000,000 (2.24 GB of float32 in
model.onnx.data). W is 1 at every 64th element and 3 at the last one (past
the 2 GiB offset), so x = 1 gives exactly 8750003 with float32 arithmetic:
a wrong offset anywhere in the weight shows. The constants exceed 1 GiB, so
aotc writes them to OUT.so.weights, which the runtime maps.

  .venv/bin/python bench/large/check_large_weights.py AOTC_BIN WORKDIR

Needs about 7 GB of disk and 7 GB of memory; not part of CI. Prints the
compile time and peak RSS, the file sizes, and the run's result and time.
"""
import os
import resource
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
import aotc_ctypes  # noqa: E402

K = 560_000_000


def main():
    aotc, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "model.onnx")
    w = np.zeros(K, dtype=np.float32)
    w[::64] = 1.0
    w[-1] = 3.0
    w.tofile(model + ".data")
    expect = float(w.astype(np.float64).sum())
    del w
    t = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[K, 1],
                    data_location=TensorProto.EXTERNAL)
    for key, value in [("location", "model.onnx.data"), ("offset", "0"),
                       ("length", str(K * 4))]:
        e = t.external_data.add()
        e.key, e.value = key, value
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "large",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])], [t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    with open(model, "wb") as f:
        f.write(m.SerializeToString())
    so = os.path.join(work, "large.so")
    start = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", aotc, "compile", model, "-o", so],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("compile failed: " + r.stdout + r.stderr)
    peak_kb = int(r.stderr.strip().splitlines()[-1])
    print(f"compile: {time.time() - start:.1f} s, peak RSS {peak_kb / 1e6:.2f} GB")
    print(f"large.so: {os.path.getsize(so)} bytes, large.so.weights: "
          f"{os.path.getsize(so + '.weights')} bytes")
    model_so = aotc_ctypes.Model(so, device="cpu")
    x = np.ones((1, K), dtype=np.float32)
    for attempt in range(2):
        start = time.time()
        y = model_so.run([x], capacity=64)[0]
        print(f"run {attempt}: y = {float(y.reshape(-1)[0]):.1f} (expect {expect:.1f}) "
              f"in {time.time() - start:.2f} s, max RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
        if float(y.reshape(-1)[0]) != expect:
            sys.exit("WRONG")
    print("ok")


if __name__ == "__main__":
    main()

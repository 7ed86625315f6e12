#!/usr/bin/env python3
"""The GPU suite's host side (bench/gpu/aotc_ctypes.py), checked on the OpenCL CPU device so that
it cannot rot between GPU runs: a weightless .so refuses to run, takes its weights by initializer
name (a packed weight too), then matches PyTorch's outputs host to host and device-resident
(cl_mem buffers through the ctypes OpenCL helper, aotc_container_run_device) and pipelined
(aotc_container_run_device_async on the helper's queue); and bound (Model.bind: argument structs
built once, as the CPU suite's worker times runs).
Usage: check_suite_ctypes.py AOTC"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(root, "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
case = os.path.join(root, "tests", "models", "mlp_gelu")
with tempfile.TemporaryDirectory() as tmp:
    so = os.path.join(tmp, "m.so")
    for profile in ("generic-gpu", "generic-avx2"):  # packed weights only under the CPU profile
        subprocess.run([aotc, "compile", os.path.join(case, "model.onnx"), "--weightless",
                        "--device-profile", profile, "-o", so], check=True, capture_output=True)
        m = Model(so, device="cpu", cache_dir=os.path.join(tmp, "cache"))
        inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(os.path.join(case, "model.onnx")).graph.initializer}
        names = [n for n, _, _ in m.constants()]
        assert names and set(names) <= set(inits), (names, list(inits))
        for d in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
            x = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "input_0.pb")))
            want = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "output_0.pb")))
            if d.endswith("_0"):
                try:
                    m.run([x])
                    raise SystemExit("FAIL: a weightless .so ran before its weights were given")
                except RuntimeError as e:
                    assert "weight" in str(e) or "constant" in str(e), e
                m.update_constants({n: inits[n] for n in names}, validate_full=True)
            got = m.run([x])[0]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
            # Bound (Model.bind, bench/cpu/worker.py's loop): the same outputs, and
            # an input changed in place between runs is read anew.
            xb, buf = np.array(x, copy=True), np.full(want.nbytes + 64, 0xFF, np.uint8)
            bound = m.bind([xb], [buf])
            np.testing.assert_allclose(bound()[0], want, rtol=1e-4, atol=1e-5)
            xb *= 0.5
            half = m.run([xb])[0].copy()
            got2 = bound()[0]
            assert got2.shape == want.shape and got2.dtype == np.float32, (got2.shape, got2.dtype)
            np.testing.assert_array_equal(got2, half)
            assert not np.allclose(got2, want), "the bound run did not read the changed input"
            cl = m.opencl()
            xin = np.ascontiguousarray(x)
            bin_, bout = cl.buffer(xin.nbytes, xin), cl.buffer(want.nbytes)
            (dt, shape), = m.run_device([(bin_, xin)], [(bout, want.nbytes)])
            assert dt == np.float32 and shape == want.shape, (dt, shape)
            dev = cl.read(bout, np.full(want.shape, np.nan, np.float32))
            np.testing.assert_allclose(dev, want, rtol=1e-4, atol=1e-5)
            # Pipelined, as the suite times it: runs enqueued on the helper's queue
            # without waiting, one clFinish, then each run waited for.
            pnan = np.full(want.shape, np.nan, np.float32)
            cl.release(bout)
            bout = cl.buffer(want.nbytes, pnan)
            runs = [m.run_device_async([(bin_, xin)], [(bout, want.nbytes)], cl.queue) for _ in range(3)]
            cl.finish()
            for r in runs:
                m.wait(r)
            np.testing.assert_allclose(cl.read(bout, pnan.copy()), want, rtol=1e-4, atol=1e-5)
            cl.release(bin_)
            cl.release(bout)
            print(f"{profile} {os.path.basename(d)}: batch {x.shape[0]} host, device-resident and pipelined ok")
        del m
print("suite ctypes ok")

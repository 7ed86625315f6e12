#!/usr/bin/env python3
"""Register tiles in row groups (register_tile.cpp, rowGroup): on CPU
profiles, where the operand read along M is larger than the caches hold
(more than 8 MB along the whole reduction), the M tiles run in groups
whose rows fit (4 MB), each group's tiles innermost and the N tiles around
them (gemm_4096: 376 -> 294 ms here; groups of 8 MB above 16 MB until stop
80, when gemm_2048 went 53.7 -> 34.7 ms on a Zen 5). Checked against ONNX
Runtime:

  - A[2016, 4096] x const B[4096, 96] + bias, Relu: 32 MB of A, grouped
    in whole groups (252 M tiles of 8 under generic-avx512, in 8 x 48
    tiles, and under zen5-avx512: divisors)
    (the OpenCL kernel decomposes its work-item id into a group g0 and a
    tile within it), under every CPU profile and the GPU one (no groups:
    its tiles keep N innermost);
  - A[2056, 4096] x B and A[2008, 4096] x B: as many rows, but 257 tiles of
    8 rows under zen5-avx512 and 251 of 8 under generic-avx512, primes:
    grouped with a partial last group, whose missing tiles' work-items do
    nothing (the kernel tests its tile against the count; these were left
    ungrouped before stop 48);
  - A[768, 4096] x B: 12 MB of rows, grouped under zen5-avx512 (they were
    not before stop 80, when groups began above 16 MB);
  - A[96, 4096] x B: its rows fit, no groups.

The threshold is the device's last-level cache (DeviceProfile::cacheBytes,
0 in the built-ins: 32 MB; groups above a quarter of it, of an eighth of
it): generic-avx512 with a 1 GB cache ("big-cache") leaves the 2016 rows
ungrouped (an AVX-512 Xeon with 480 MB ran gemm_4096 13% slower grouped),
with a 2 MB one ("small-cache") groups the 96 rows (1.5 MB) in pairs of
tiles; both run against ONNX Runtime too.

Every output element is compared (the inputs are random, never zeros).

Usage: check_row_groups.py AOTC    (prints "row groups ok")
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
import run_fuzz  # noqa: E402
from e2e_graphs import profile_variant  # noqa: E402

K, N = 4096, 96
PROFILES = ("generic-avx2", "generic-avx512", "zen5-avx512", "generic-gpu")


def model(m, rng):
    b = numpy_helper.from_array((rng.standard_normal((K, N)) / 64).astype(np.float32), "b")
    bias = numpy_helper.from_array(rng.standard_normal(N).astype(np.float32), "bias")
    nodes = [helper.make_node("MatMul", ["a", "b"], ["t"]),
             helper.make_node("Add", ["t", "bias"], ["u"]),
             helper.make_node("Relu", ["u"], ["y"])]
    g = helper.make_graph(nodes, f"row_groups_{m}",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, N])], [b, bias])
    mo = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mo.ir_version = 8
    return mo


def main():
    aotc = os.path.abspath(sys.argv[1])
    rng = np.random.default_rng(20261128)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AOTC_CACHE_DIR=os.path.join(tmp, "cache"))
        profiles = list(PROFILES)
        # generic-avx512 as `aotc devices --profile` prints it, with a cache
        # of 1 GB and of 2 MB.
        for label, size in (("big-cache", 1 << 30), ("small-cache", 2 << 20)):
            path = os.path.join(tmp, f"{label}.json")
            profile_variant(aotc, "generic-avx512", path, env=env, name=label, cache_bytes=size)
            profiles.append(path)
        big, small = profiles[-2], profiles[-1]
        dirs = []
        # (rows, profile -> no groups (False), whole groups ("whole") or
        # a partial last group ("partial"))
        for m, grouped in ((2016, {"zen5-avx512": "whole", "generic-avx512": "whole",
                                   "generic-avx2": "whole", big: False}),
                           (2056, {"zen5-avx512": "partial"}),
                           (2008, {"generic-avx512": "partial"}),
                           (768, {"zen5-avx512": "whole"}),
                           (96, {"zen5-avx512": False, "generic-avx2": False,
                                 small: "whole"})):
            mo = model(m, rng)
            a = rng.standard_normal((m, K)).astype(np.float32)
            sess = ort.InferenceSession(mo.SerializeToString(), providers=["CPUExecutionProvider"])
            case = os.path.join(tmp, f"rows_{m}")
            run_fuzz.write_case(case, mo, [a], sess.run(None, {"a": a}))
            dirs.append(case)
            for profile, want in list(grouped.items()) + [("generic-gpu", False)]:
                cl = subprocess.run([aotc, "compile", os.path.join(case, "model.onnx"), "--emit=cl",
                                     "--device-profile", profile], capture_output=True, text=True, env=env)
                if cl.returncode != 0:
                    failures.append(f"rows {m}, {profile}: compile failed: {cl.stderr.strip()}")
                    continue
                has = "const long g0 = " in cl.stdout
                guard = re.search(r"if \(\(\(\d+ \* g0\) \+ t0i\) < \d+\)", cl.stdout) is not None
                got = ("partial" if guard else "whole") if has else False
                if got != want:
                    failures.append(f"rows {m}, {os.path.basename(profile)}: expected "
                                    f"{want or 'no'} row groups, got {got or 'none'}")
        failures += run_fuzz.test_with_profiles(aotc, dirs, env, profiles)
    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("row groups ok")


if __name__ == "__main__":
    main()

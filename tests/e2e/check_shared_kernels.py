#!/usr/bin/env python3
"""Kernels whose code is the same run one OpenCL function
(codegen/opencl/share_kernels.h), end to end on the CPU device:

  - a model of three residual blocks over 32 channels, a 1 x 1 layer to 64
    and three blocks over 64 compiled by default prints at least five
    OpenCL functions fewer than it has kernels, `--no-share-kernels` one
    per kernel; `aotc inspect` and the metadata say how many;
  - both match ONNX Runtime at batch 1, 3 and 0 and are bit-identical;
  - built from source in two parts at once (AOTC_BUILD_JOBS=2,
    program_split.h), the shared build creates each kernel from the part
    that defines its function: two cache entries, the same outputs;
  - a weight of the last block (whose kernels run the second block's
    functions) updated at run time changes the outputs as ONNX Runtime's
    model with the new weight computes them;
  - a second load reads the program from the cache;
  - a profile names every kernel on its own (the launches of one function
    keep their names).
Usage: check_shared_kernels.py AOTC    (prints "shared kernels ok")
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, ColdCaches, Net, compare_ort, net_feeds  # noqa: E402

cold = ColdCaches()
tmp = cold.root
aotc = sys.argv[1]
rng = np.random.default_rng(60)
checks = Checks("shared kernels")
fail = checks.fail

n = Net("shared", 32, (9, 11), rng)
x = "x"
for _ in range(3):
    x = n.residual_block(x, 32)
x = n.op("Relu", [n.conv(x, 32, 64)])
for _ in range(3):
    x = n.residual_block(x, 64)
n.output(x)
proto = n.model()
onnx_path = os.path.join(tmp, "blocks.onnx")
onnx.save(proto, onnx_path)
feeds = net_feeds(proto, rng)


def compile_(tag, flags):
    # Each kernel launched on its own (a persistent kernel runs them all, its
    # parts sharing functions the same way: persistent_kernels.h). The 3 x 3
    # convolutions direct, one kernel each: as Winograd (the 64-channel ones
    # over 9 x 11, winograd.h) their transforms and GEMMs are size variants,
    # two functions per kernel with or without sharing.
    flags = flags + ["--no-persistent-kernels", "--no-winograd"]
    so = os.path.join(tmp, tag + ".so")
    r = subprocess.run([aotc, "compile", onnx_path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        sys.exit(1)
    launches = int(re.search(r"\((\d+) kernels", r.stderr).group(1))
    cl = subprocess.run([aotc, "compile", onnx_path, "--emit=cl"] + flags,
                        capture_output=True, text=True, check=True).stdout
    return so, launches, cl.count("__kernel void ")


shared_so, launches, functions = compile_("shared", [])
own_so, own_launches, own_functions = compile_("own", ["--no-share-kernels"])
print(f"{launches} kernels: {functions} OpenCL functions shared, {own_functions} without")
checks.check()
if own_launches != launches or own_functions != launches:
    fail(f"--no-share-kernels: {own_functions} functions for {own_launches} kernels")
# The later blocks of each width run the earlier ones' functions: of the 14
# kernels (a convolution each, storing into the next one's padded input),
# the first convolutions of the second and third 32-channel blocks and both
# convolutions of the second and third 64-channel ones.
checks.check()
if functions > launches - 5:
    fail(f"{functions} OpenCL functions for {launches} kernels")

inspect = subprocess.run([aotc, "inspect", shared_so], capture_output=True, text=True).stdout
checks.check()
if f"kernels: {launches} ({functions} OpenCL functions)" not in inspect:
    fail("inspect: " + next((l for l in inspect.splitlines() if l.startswith("kernels:")), "no kernels line"))
if f"aotc.num_kernel_functions = {functions}" not in inspect:
    fail("inspect: no aotc.num_kernel_functions metadata")
own_inspect = subprocess.run([aotc, "inspect", own_so], capture_output=True, text=True).stdout
checks.check()
if f"kernels: {launches}\n" not in own_inspect:
    fail("inspect without sharing: " + own_inspect[:200])
names = [l.split(":")[0].strip() for l in inspect.split("kernels:", 1)[1].splitlines()[1:launches + 1]]


def load(so, want_source):
    m = Model(so, device="cpu", cache_dir=cache)
    checks.check()
    if m.program_source != want_source:
        fail(f"{so}: program source {m.program_source}, expected {want_source}")
    return m


def same(tag, a, b):
    for f in feeds:
        checks.check()
        if any(not np.array_equal(p, q) for p, q in zip(a.run(f), b.run(f))):
            fail(f"{tag}, batch {f[0].shape[0]}: outputs differ from the unshared build's")


os.environ["AOTC_BUILD_JOBS"] = "1"
cache = cold()
shared = load(shared_so, 0)
compare_ort(checks, "shared", shared, proto, feeds)
own = load(own_so, 0)
compare_ort(checks, "own functions", own, proto, feeds)
same("shared", shared, own)

# In two parts built at once: each kernel from the part with its function.
os.environ["AOTC_BUILD_JOBS"] = "2"
os.environ["AOTC_PROGRAM_BUILDER"] = os.path.join(os.path.dirname(os.path.abspath(aotc)),
                                                  "aotc-build-program")
parts_cache = cache
cache = cold()
parts = load(shared_so, 0)
entries = [e for e in os.listdir(cache) if e.endswith(".clbin")]
checks.check()
if len(entries) != 2:
    fail(f"shared build in parts: cache entries {entries}, expected 2")
same("shared, in two parts", parts, own)
del parts, own
cache = parts_cache

# A weight of the last block, whose kernels run the second block's code.
last_w = [nd.input[1] for nd in proto.graph.node if nd.op_type == "Conv"][-1]
new_w = rng.standard_normal(nh.to_array(next(i for i in proto.graph.initializer
                                             if i.name == last_w)).shape).astype(np.float32) * 0.2
shared.update_constants({last_w: new_w}, validate_full=False)
updated = onnx.ModelProto()
updated.CopyFrom(proto)
for i in updated.graph.initializer:
    if i.name == last_w:
        i.CopyFrom(nh.from_array(new_w, last_w))
compare_ort(checks, f"after updating {last_w}", shared, updated, feeds)
del shared

again = load(shared_so, 1)
compare_ort(checks, "from the cache", again, proto, feeds[:1])
del again

# A profile names each kernel: the launches of one function keep theirs.
r = subprocess.run([aotc, "run", shared_so, "--dim", "n=2", "--repeat", "1",
                    "--profile", os.path.join(tmp, "trace.json")],
                   capture_output=True, text=True, env=dict(os.environ, AOTC_CACHE_DIR=cache))
checks.check()
if r.returncode != 0:
    fail("aotc run --profile: " + r.stderr)
else:
    listed = {l.split()[0] for l in r.stdout.splitlines() if l.startswith("k")}
    missing = [k for k in names if k not in listed]
    if len(names) != launches or missing:
        fail(f"profile: kernels {missing} not listed ({len(names)} names)")

checks.done()

#!/usr/bin/env python3
"""A program built from source in parts by several aotc-build-program
processes at once (runtime/src/program_split.h, program_cache.cpp), with
fresh caches for every load (and a fresh PoCL kernel cache for the process):

  - AOTC_BUILD_JOBS=2 builds two parts (program source 0, two cache
    entries), AOTC_BUILD_JOBS=3 three; the outputs match ONNX Runtime at
    batch 1, 3 and 0 and are bit-identical to those of the program built
    whole (AOTC_BUILD_JOBS=1, one cache entry);
  - a second load takes every part from the cache (source 1), also where
    the builder is then missing; one part's entry corrupted is rebuilt
    alone (source 0, the entry valid again);
  - a builder that cannot run (a path that does not exist) or that fails
    (/bin/false) falls back to the whole build: right outputs, one entry.
Usage: check_parallel_build.py AOTC    (prints "parallel build ok")
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, ColdCaches, Net, net_feeds, compare_ort  # noqa: E402

# Before OpenCL starts in this process: PoCL's own kernel cache starts empty.
fresh_cache = ColdCaches()
tmp = fresh_cache.root

aotc = sys.argv[1]
tool = os.path.join(os.path.dirname(os.path.abspath(aotc)), "aotc-build-program")
rng = np.random.default_rng(59)
checks = Checks("parallel build")
fail = checks.fail


# Residual blocks over channel blocks: at least 12 kernels (three parts of 4).
n = Net("parts", 32, (9, 11), rng)
x = "x"
for _ in range(6):
    x = n.residual_block(x, 32)
n.output(x)
proto = n.model()
onnx_path = os.path.join(tmp, "blocks.onnx")
with open(onnx_path, "wb") as f:
    f.write(proto.SerializeToString())
so = os.path.join(tmp, "blocks.so")
# One OpenCL function per kernel: the blocks' kernels would otherwise share
# five functions (share_kernels.h), too few to split; each launched on its
# own (a persistent kernel runs them all: persistent_kernels.h).
r = subprocess.run([aotc, "compile", onnx_path, "-o", so, "--no-share-kernels",
                    "--no-persistent-kernels"],
                   capture_output=True, text=True)
if r.returncode != 0 or int(r.stderr.split(" kernels")[0].split("(")[-1]) < 12:
    print(r.stderr)
    sys.exit(1)
feeds = net_feeds(proto, rng)


def load(tag, jobs, builder, want_source, want_entries, cache=None):
    """Loads with AOTC_BUILD_JOBS=jobs and AOTC_PROGRAM_BUILDER=builder, checks
    the program's source, the cache's entries and the outputs against ONNX
    Runtime; returns the outputs and the cache."""
    os.environ["AOTC_BUILD_JOBS"] = str(jobs)
    os.environ["AOTC_PROGRAM_BUILDER"] = builder
    cache = cache or fresh_cache()
    m = Model(so, device="cpu", cache_dir=cache)
    checks.check()
    if m.program_source != want_source:
        fail(f"{tag}: program source {m.program_source}, expected {want_source}")
    entries = sorted(e for e in os.listdir(cache) if e.endswith(".clbin"))
    checks.check()
    if len(entries) != want_entries:
        fail(f"{tag}: cache entries {entries}, expected {want_entries}")
    compare_ort(checks, tag, m, proto, feeds)
    outs = [m.run(f) for f in feeds]
    del m
    return outs, cache


def same(tag, a, b):
    checks.check()
    for fa, fb in zip(a, b):
        for oa, ob in zip(fa, fb):
            if oa.shape != ob.shape or not np.array_equal(oa, ob):
                fail(f"{tag}: outputs differ from the whole program's")
                return


whole, _ = load("whole (jobs 1)", 1, tool, 0, 1)
parts, cache = load("two parts", 2, tool, 0, 2)
same("two parts", parts, whole)
again, _ = load("two parts from the cache", 2, tool, 1, 2, cache)
same("two parts from the cache", again, whole)
three, _ = load("three parts", 3, tool, 0, 3)
same("three parts", three, whole)

# One part's entry corrupted: that part alone is built again.
entries = sorted(e for e in os.listdir(cache) if e.endswith(".clbin"))
victim = os.path.join(cache, entries[0])
kept = open(os.path.join(cache, entries[1]), "rb").read()
with open(victim, "r+b") as f:
    f.seek(os.path.getsize(victim) // 2)
    f.write(b"\x00corrupt\x00")
rebuilt, _ = load("one part corrupted", 2, tool, 0, 2, cache)
same("one part corrupted", rebuilt, whole)
checks.check()
if open(os.path.join(cache, entries[1]), "rb").read() != kept:
    fail("the part whose entry was valid was written again")
healed, _ = load("after the rebuild", 2, tool, 1, 2, cache)
same("after the rebuild", healed, whole)
# Every part cached: a load without the tool takes them from the cache
# (the whole program's entry was never written; it used to be built again
# from source in this process).
# AOTC_PROGRAM_BUILDER empty counts as unset; PATH without the tool.
os.environ["PATH"] = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                                     if not os.access(os.path.join(d, "aotc-build-program"), os.X_OK))
no_tool, _ = load("parts cached, no builder", 2, "", 1, 2, cache)
same("parts cached, no builder", no_tool, whole)

# Builders that cannot help: the program is built whole, as before.
missing, _ = load("builder missing", 2, os.path.join(tmp, "no-such-builder"), 0, 1)
same("builder missing", missing, whole)
failing, _ = load("builder failing", 2, "/bin/false", 0, 1)
same("builder failing", failing, whole)

checks.done()

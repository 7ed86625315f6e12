"""The compilers of the benchmark, run as child processes and timed: aotc
(compile, inspect), IREE (iree-import-onnx + iree-compile for llvm-cpu on the
host CPU), and the machine-limits program (bench/cpu/limits.c)."""

import json
import os
import re
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

IREE_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
              "--iree-llvmcpu-target-cpu=host", "--iree-opt-data-tiling=true",
              "--iree-llvmcpu-enable-ukernels=all"]


def timed(cmd, env=None, timeout=None):
    """Runs cmd; returns rc, wall_s, out, err."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = 124
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        return dict(rc=rc, wall_s=wall, out=out.read().decode(errors="replace"), err=err.read().decode(errors="replace"))


def first_error_line(r):
    """The first line that says what went wrong (an "error" line if any)."""
    lines = [l.strip() for l in (r["err"] + "\n" + r["out"]).splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return l[:300]
    return (lines[0][:300] if lines else f"exit status {r['rc']}")


def aotc_compile(aotc, onnx_path, so_path, timeout, flags=()):
    r = timed([aotc, "compile", onnx_path, "-o", so_path, *flags], timeout=timeout)
    res = dict(compile_s=r["wall_s"])
    if r["rc"] != 0:
        res["refused"] = ("timed out after %d s" % timeout) if r["rc"] == 124 else first_error_line(r)
        return res
    res.update(compiled_kernels(r["out"] + r["err"]))
    return res


def compiled_kernels(text):
    """The model's kernels and launches from `aotc compile`'s summary line ("wrote m.so (65 kernels
    in 4 launches, 13 more in the folding program ...)", "(3 kernels in 1 launch, ..." or "(1
    kernels, ..."): the kernels a run
    executes, not `aotc inspect`'s table, which since persistent kernels (stop 69) also counts
    each persistent kernel, its parts and the folding program's kernels."""
    m = re.search(r"\((\d+) kernels(?: in (\d+) launch(?:es)?)?", text)
    if not m:
        return {}
    kernels = int(m.group(1))
    return dict(kernels=kernels, launches=int(m.group(2)) if m.group(2) else kernels)


def iree_compile(venv_bin, onnx_path, work, timeout):
    """iree-import-onnx then iree-compile; returns the times and the .vmfb, or "error"."""
    mlir, vmfb = os.path.join(work, "model.mlir"), os.path.join(work, "model.vmfb")
    r = timed([os.path.join(venv_bin, "iree-import-onnx"), onnx_path, "-o", mlir], timeout=timeout)
    res = dict(import_s=r["wall_s"])
    if r["rc"] != 0:
        res["error"] = "iree-import-onnx: " + first_error_line(r)
        return res
    r = timed([os.path.join(venv_bin, "iree-compile"), mlir, *IREE_FLAGS, "-o", vmfb], timeout=timeout)
    res["compile_s"] = r["wall_s"]
    os.remove(mlir)
    if r["rc"] != 0:
        res["error"] = ("iree-compile: timed out after %d s" % timeout) if r["rc"] == 124 \
            else "iree-compile: " + first_error_line(r)
        return res
    res["total_s"] = res["import_s"] + res["compile_s"]
    res["vmfb"] = vmfb
    return res


def machine_limits(work, threads):
    """Builds and runs bench/cpu/limits.c (FMA peak on 1 and N threads, copy and read bandwidth)."""
    exe = os.path.join(work, "limits")
    cc = os.environ.get("CC", "cc")
    r = timed([cc, "-O3", "-march=native", "-pthread", os.path.join(HERE, "limits.c"), "-o", exe])
    if r["rc"] != 0:
        raise SystemExit(f"bench: cannot build limits.c with {cc} (apt-get install gcc): "
                         + first_error_line(r))
    r = timed([exe, str(threads)])
    if r["rc"] != 0:
        raise SystemExit("bench: limits failed: " + first_error_line(r))
    return json.loads(r["out"])


def fma_peak_now(work, threads):
    """The FMA peak on `threads` threads measured now (best of 3 short repetitions, about 0.2 s), by
    the limits binary machine_limits built; None if it cannot run."""
    r = timed([os.path.join(work, "limits"), str(threads), "30000000", "fma"])
    if r["rc"] != 0:
        return None
    try:
        return json.loads(r["out"])["fma_gflops"]
    except (ValueError, KeyError):
        return None

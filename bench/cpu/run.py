"""The CPU benchmark's driver: aotc beside ONNX Runtime and IREE on the same
models, inputs, thread count and machine, in one run. bench/cpu.sh runs it in
.venv-bench; bench/cpu/README.md says what it measures and how.

For each model: compile with aotc (timed; a refusal is recorded, not hidden)
and IREE; load aotc once with empty program caches (cold). Then for each batch:
start one worker process per system (bench/cpu/worker.py: load, first run,
outputs), compare every output with ONNX Runtime's, and time the systems
interleaved (aotc, ORT, IREE, aotc, ...) until each has at least --min-runs
timed runs and has spent --budget seconds, or has --max-runs. The machine's
limits (bench/cpu/limits.c) are measured in the same run. Writes
bench/results/DATE-cpu-HOST.{json,md,png} (bench/cpu/report.py).
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import models as registry  # noqa: E402
import report  # noqa: E402
import tools  # noqa: E402

SYSTEMS = ("aotc", "ort", "iree")


def log(*a):
    print("bench:", *a, flush=True)


# --------------------------------------------------------------------------------------------
# Workers
# --------------------------------------------------------------------------------------------


# Warm loads per configuration whose first runs are measured (their median is judged).
WARM_PROBES = 3


class WorkerError(Exception):
    pass


class Worker:
    """A system's worker process (bench/cpu/worker.py), driven line by line."""

    def __init__(self, system, model_path, inputs, outputs, args, env=None, extra=()):
        self.system = system
        self.timeout = args.worker_timeout
        self.errlog = open(outputs + ".stderr", "w+")
        cmd = [sys.executable, os.path.join(HERE, "worker.py"), system, model_path, inputs, outputs,
               "--threads", str(args.threads), *extra]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errlog, env=env, text=True, bufsize=1)
        self.hello = self._read()

    def _read(self):
        ready, _, _ = select.select([self.p.stdout], [], [], self.timeout)
        if not ready:
            self.kill()
            raise WorkerError(f"no answer in {self.timeout} s (raise --worker-timeout)")
        line = self.p.stdout.readline()
        if not line:
            rc = self.p.wait()
            self.errlog.seek(0)
            tail = [l.strip() for l in self.errlog.read().splitlines() if l.strip()]
            raise WorkerError(f"worker died (exit status {rc})" + (f": {tail[-1][:300]}" if tail else ""))
        msg = json.loads(line)
        if "error" in msg:
            self.p.wait()
            raise WorkerError(msg["error"])
        return msg

    def run(self):
        self.p.stdin.write("run\n")
        self.p.stdin.flush()
        return self._read()["t"]

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        msg = self._read()
        self.p.wait()
        self.errlog.close()
        return msg["peak_rss_kb"]

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


def make_inputs(model, batch, path):
    rng = np.random.default_rng(1000 + (batch or 0))
    arrays = []
    for spec, shape in zip(model.inputs, registry.shapes(model, batch or 1)):
        if spec.dtype == "bool":
            arrays.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif spec.dtype in ("int64", "int32", "uint32", "int16", "uint16", "int8", "uint8"):
            arrays.append(rng.integers(0, spec.high, size=shape).astype(spec.dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(spec.dtype))
    np.savez(path, *arrays)


def max_rel_err(out_path, ref_path):
    """max |out - ref| / max |ref| over each output (the largest over the outputs)."""
    with np.load(out_path) as o, np.load(ref_path) as r:
        if len(o.files) != len(r.files):
            return None, f"{len(o.files)} outputs, ONNX Runtime has {len(r.files)}"
        # Outputs by name: the worker saves them under the reference's keys.
        return compare.max_rel_err([o[k] for k in r.files], [r[k] for k in r.files], "ONNX Runtime")


def time_interleaved(workers, args):
    """Runs the workers in turn until each is done; returns {system: [seconds]}, {system: error}.
    A worker is done after --max-runs runs, or after --min-runs runs once it has spent --budget
    seconds; one whose first run took over --max-run-s stops after one timed run."""
    times = {w.system: [] for w in workers}
    errors = {}
    active = list(workers)
    while active:
        for w in list(active):
            try:
                times[w.system].append(w.run())
            except WorkerError as ex:
                errors[w.system] = str(ex)
                active.remove(w)
                continue
            n, total = len(times[w.system]), sum(times[w.system])
            min_runs = 1 if w.hello["first_s"] > args.max_run_s else args.min_runs
            if n >= args.max_runs or (n >= min_runs and total >= args.budget):
                active.remove(w)
    return times, errors


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Estimates:
    """Seconds per run of each system, from what this run measured so far: the previous batch
    of the same model (scaled by the batch), or for a GEMM the last GEMM's GFLOP/s."""

    def __init__(self):
        self.gemm_gflops = {}

    def note(self, model, cfg):
        for s in SYSTEMS:
            r = cfg.get(s) or {}
            if model.family == "gemm" and "gflops" in r:
                self.gemm_gflops[s] = r["gflops"]

    def guess(self, system, model, batch, rec):
        if model.family == "gemm":
            g = self.gemm_gflops.get(system)
            if g:
                return model.flops(1) / g / 1e9, f"the previous GEMM's {g:.1f} GFLOP/s"
            return None, None
        for cfg in reversed(rec["configs"]):
            r = cfg.get(system) or {}
            t = r.get("median_s", r.get("first_s"))
            if t and cfg["batch"]:
                return t * batch / cfg["batch"], f"{t:.1f} s at batch {cfg['batch']}"
        return None, None


def bench_model(model, args, work, estimates):
    mdir = fresh_dir(os.path.join(work, model.name))
    onnx_path = args.user_paths.get(model.name) or os.path.join(args.models_dir, model.name + ".onnx")
    rec = dict(name=model.name, family=model.family, desc=model.desc, aotc={}, iree={}, configs=[])
    a, ir = rec["aotc"], rec["iree"]

    # aotc: compile, inspect.
    so = os.path.join(mdir, "model.so")
    if "aotc" in args.systems:
        a.update(tools.aotc_compile(args.aotc, onnx_path, so, args.compile_timeout,
                                    args.aotc_flags.split()))
        if "refused" in a:
            log(f"{model.name}: aotc refused: {a['refused']}")
        else:
            a["so_mb"] = os.path.getsize(so) / 2**20
            log(f"{model.name}: aotc compile {a['compile_s']:.2f} s, {a.get('kernels')} kernels "
                f"in {a.get('launches')} launches")

    # IREE: import + compile.
    if "iree" in args.systems:
        import onnx
        fn = onnx.load(onnx_path, load_external_data=False).graph.name
        ir.update(tools.iree_compile(args.venv_bin, onnx_path, mdir, args.compile_timeout))
        ir["function"] = fn
        if "error" in ir:
            log(f"{model.name}: IREE failed: {ir['error']}")
        else:
            log(f"{model.name}: IREE import {ir['import_s']:.2f} s + compile {ir['compile_s']:.2f} s")

    # aotc's program caches (its own and PoCL's) start empty: the first config's aotc worker
    # loads cold; a probe process then loads warm.
    caches = dict(aotc=fresh_dir(os.path.join(mdir, "aotc-cache")),
                  pocl=fresh_dir(os.path.join(mdir, "pocl-cache")))
    env = dict(os.environ, POCL_CACHE_DIR=caches["pocl"], AOTC_CACHE_DIR=caches["aotc"])
    # The program builder beside aotc, as an installed aotc has it on PATH: a cold load
    # builds the program's parts in parallel (runtime/src/program_split.h).
    builder = os.path.join(os.path.dirname(os.path.abspath(args.aotc)), "aotc-build-program")
    if "AOTC_PROGRAM_BUILDER" not in env and os.access(builder, os.X_OK):
        env["AOTC_PROGRAM_BUILDER"] = builder
    batches = [None] if model.family in ("gemm", "static") else args.batches
    for i, batch in enumerate(batches):
        cfg = bench_config(model, batch, args, mdir, so, caches, env, rec, estimates)
        ca = cfg.get("aotc") or {}
        # The first run after a warm load, measured in WARM_PROBES processes (at the first batch
        # all of them probes after the cold worker; later batches load warm, and their timing
        # worker's first run is one of them), and judged by the median: single runs on this VM
        # meet stalls of 3-17 ms at random, the first no more often than the 2nd to 5th (fresh
        # processes, MLP batch 1: 2.5-3.1 ms first, 5.2-17.1 ms at runs 2-5), and the steady
        # figure it is compared with is a median too. Every sample is in the JSON.
        if "load_s" in ca:
            if i == 0:
                ca["cold"] = True
                a["load_cold_s"] = ca["load_s"]
            samples, loads = ([] if i == 0 else [ca["first_s"]]), []
            try:
                while len(samples) < WARM_PROBES:
                    w = Worker("aotc", so, cfg["inputs"], os.path.join(mdir, "warm-out.npz"), args, env,
                               ["--cache-dir", caches["aotc"]])
                    loads.append(w.hello["load_s"])
                    samples.append(w.hello["first_s"])
                    w.quit()
                ca["first_warm_samples_s"] = samples
                ca["first_warm_s"] = statistics.median(samples)
                if i == 0:
                    a["load_warm_s"] = statistics.median(loads)
                    log(f"{model.name}: aotc load cold {a['load_cold_s']:.2f} s, warm {a['load_warm_s']:.2f} s; "
                        f"first run cold {ca['first_s']:.2f} s, warm "
                        f"{' / '.join(f'{t * 1e3:.2f}' for t in samples)} ms")
            except WorkerError as ex:
                a["warm_error"] = str(ex)
                log(f"{model.name}: aotc warm load failed: {ex}")
        cfg.pop("inputs", None)
        estimates.note(model, cfg)
        rec["configs"].append(cfg)
    if not args.keep_work:
        shutil.rmtree(mdir, ignore_errors=True)
    return rec


def bench_config(model, batch, args, mdir, so, caches, env, rec, estimates):
    tag = f"{model.name}" + (f" batch {batch}" if batch else "")
    cfg = dict(batch=batch, flops=model.flops(batch or 1) if model.flops else None)
    inputs = cfg["inputs"] = os.path.join(mdir, f"inputs-{batch}.npz")
    make_inputs(model, batch, inputs)
    onnx_path = args.user_paths.get(model.name) or os.path.join(args.models_dir, model.name + ".onnx")
    plan = []
    if "aotc" in args.systems and "refused" not in rec["aotc"]:
        plan.append(("aotc", so, env, ["--cache-dir", caches["aotc"]]))
    plan.append(("ort", onnx_path, None, []))
    if "iree" in args.systems and "vmfb" in rec["iree"]:
        plan.append(("iree", rec["iree"]["vmfb"], None, ["--iree-function", rec["iree"]["function"]]))
    workers = []
    for system, path, wenv, extra in plan:
        res = cfg[system] = {}
        est, src = estimates.guess(system, model, batch, rec)
        if system != "ort" and est and est > 2 * args.max_run_s:
            res["skipped"] = (f"about {est:.0f} s a run (estimated from {src}), over 2 × --max-run-s "
                              f"({args.max_run_s:g} s)")
            log(f"{tag}: {system} skipped: {res['skipped']}")
            continue
        out = os.path.join(mdir, f"out-{system}-{batch}.npz")
        try:
            w = Worker(system, path, inputs, out, args, wenv, extra)
            res.update(load_s=w.hello["load_s"], first_s=w.hello["first_s"],
                       rss_base_mb=w.hello["rss_base_kb"] / 1024)
            if w.hello["first_s"] > args.max_run_s:
                res["slow"] = (f"first run {w.hello['first_s']:.0f} s, over --max-run-s "
                               f"({args.max_run_s:g} s): 1 timed run")
            res["outputs"] = out
            workers.append(w)
        except WorkerError as ex:
            res["error"] = str(ex)
            log(f"{tag}: {system} failed: {ex}")

    # Accuracy against ONNX Runtime (each system's first run).
    ref = cfg["ort"].get("outputs")
    for system in ("aotc", "iree"):
        res = cfg.get(system)
        if res and "outputs" in res and ref:
            err, why = max_rel_err(res["outputs"], ref)
            res["max_rel_err"] = err
            if why:
                res["mismatch"] = why
            if why or err is None or err > args.tolerance:
                log(f"{tag}: WRONG ANSWER from {system}: max rel err {err} {why or ''}")

    # The FMA peak beside the timed runs (before and after, the better of the two), for the share
    # of the peak the config reaches: the run's peak is measured once at its start, and this VM's
    # speed drifts by up to 20% over a suite (docs/PERFORMANCE.md, stop 68).
    peaks = [tools.fma_peak_now(args.work, args.threads)] if cfg["flops"] else []
    times, errors = time_interleaved(workers, args)
    if cfg["flops"]:
        peaks.append(tools.fma_peak_now(args.work, args.threads))
        peaks = [p for p in peaks if p]
        if peaks:
            cfg["fma_gflops_beside"] = max(peaks)
    for w in workers:
        res = cfg[w.system]
        res.pop("outputs", None)
        if w.system in errors:
            res["error"] = errors[w.system]
            w.kill()
        else:
            try:
                res["peak_rss_mb"] = w.quit() / 1024
            except WorkerError as ex:
                res["error"] = str(ex)
        ts = times[w.system]
        if ts:
            res.update(runs=len(ts), median_s=statistics.median(ts), p90_s=compare.percentile(ts, 0.9),
                       min_s=min(ts))
            if cfg["flops"]:
                res["gflops"] = cfg["flops"] / res["median_s"] / 1e9
    for system in ("aotc", "iree"):
        s, o = cfg.get(system) or {}, cfg["ort"]
        if "median_s" in s and "median_s" in o:
            cfg[f"ratio_{system}_ort"] = s["median_s"] / o["median_s"]
    log(f"{tag}: " + ", ".join(
        f"{s} {cfg[s]['median_s'] * 1e3:.2f} ms ({cfg[s]['runs']} runs)"
        for s in SYSTEMS if s in cfg and "median_s" in cfg[s]))
    return cfg


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def file_id(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    st = os.stat(path)
    return dict(path=path, sha256=h.hexdigest()[:16],
                mtime=datetime.datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds"))


def git_commit(path):
    try:
        return subprocess.run(["git", "-C", path, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description="aotc CPU benchmark against ONNX Runtime and IREE")
    ap.add_argument("--aotc", default=os.environ.get("AOTC", os.path.join(ROOT, "build/compiler/tools/aotc")),
                    help="the aotc binary (default: $AOTC, else build/compiler/tools/aotc)")
    ap.add_argument("--models", default="all", help="comma list of models or families (gemm, conv, net, all)")
    ap.add_argument("--batches", default="1,8", help="batch sizes of the non-GEMM models (default 1,8)")
    ap.add_argument("--quick", action="store_true",
                    help=f"a smoke run: {', '.join(registry.QUICK)} at batch 1, 1 s budget")
    ap.add_argument("--threads", type=int, default=2, help="threads of every system (default 2)")
    ap.add_argument("--budget", type=float, default=5.0,
                    help="seconds of timed runs per system and config before stopping (default 5)")
    ap.add_argument("--min-runs", type=int, default=3, help="timed runs at least (default 3)")
    ap.add_argument("--max-runs", type=int, default=20, help="timed runs at most (default 20)")
    ap.add_argument("--max-run-s", type=float, default=30.0,
                    help="a system whose first run takes longer gets 1 timed run, and one whose run is "
                         "estimated at over twice this is skipped for that config (default 30)")
    ap.add_argument("--systems", default="aotc,ort,iree", help="comma list of aotc, ort, iree")
    ap.add_argument("--tolerance", type=float, default=1e-3,
                    help="max relative error against ONNX Runtime above which a result is flagged")
    ap.add_argument("--compile-timeout", type=int, default=900)
    ap.add_argument("--aotc-flags", default="--vector-lanes host",
                    help="extra aotc compile flags (default: tiles for this machine's vectors, "
                         "as IREE compiles for --iree-llvmcpu-target-cpu=host)")
    ap.add_argument("--worker-timeout", type=int, default=900)
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "bench/models"))
    ap.add_argument("--work", default=os.path.join(ROOT, "bench/work"))
    ap.add_argument("--results", default=None,
                    help="folder of the result files (default bench/results; with --quick bench/work/results)")
    ap.add_argument("--doc", default=None,
                    help="the page whose CPU section gets the tables (default docs/PERFORMANCE.md "
                         "for a whole run; '', --quick or a subset of models, batches or systems: none)")
    ap.add_argument("--keep-work", action="store_true", help="keep compiled models and outputs")
    ap.add_argument("--onnx", action="append", default=[],
                    help="benchmark this ONNX file instead of the suite's models (repeatable; "
                         "`aotc bench MODEL.onnx`); results go to bench/work/results")
    ap.add_argument("--dim", action="append", default=[],
                    help="NAME=VALUE for a symbolic dim of an --onnx model (others are the batch)")
    ap.add_argument("--command", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.user_paths = {}
    if args.onnx:
        dims = dict((kv.split("=", 1)[0], int(kv.split("=", 1)[1])) for kv in args.dim)
        for p in args.onnx:
            if not os.path.isfile(p):
                ap.error(f"--onnx {p}: no such file")
            m = registry.from_onnx(os.path.abspath(p), dims)
            registry.BY_NAME[m.name] = m
            args.user_paths[m.name] = os.path.abspath(p)
        args.models = ",".join(args.user_paths)
        if args.results is None:
            args.results = os.path.join(ROOT, "bench/work/results")
        if args.doc is None:
            args.doc = ""
    if args.quick:
        if args.models == "all":
            args.models = ",".join(registry.QUICK)
        args.batches, args.budget = "1", 1.0
    if args.results is None:
        args.results = os.path.join(ROOT, "bench/work/results" if args.quick else "bench/results")
    # Only a whole run (every model, the default batches and systems) rewrites the page: a
    # subset's tables would replace the whole suite's there. --doc PAGE asks for it anyway.
    whole = args.models == "all" and args.batches == "1,8" and \
        sorted(s for s in args.systems.split(",") if s) == ["aotc", "iree", "ort"]
    if args.doc is None:
        args.doc = os.path.join(ROOT, "docs/PERFORMANCE.md") if whole and not args.quick else ""
        if not whole and not args.quick:
            print("bench: a subset run: docs/PERFORMANCE.md is left alone (--doc PAGE to write it)")
    args.batches = [int(b) for b in args.batches.split(",")]
    args.systems = [s for s in args.systems.split(",") if s]
    for s in args.systems:
        if s not in SYSTEMS:
            ap.error(f"unknown system {s!r}")
    args.venv_bin = os.path.dirname(sys.executable)
    args.aotc = os.path.abspath(args.aotc)
    if "aotc" in args.systems and not os.access(args.aotc, os.X_OK):
        sys.exit(f"bench: no aotc at {args.aotc}: build it (bash scripts/setup.sh) or pass --aotc / AOTC")
    names = registry.select(args.models)

    start = time.time()
    os.makedirs(args.work, exist_ok=True)
    # A copy of the aotc binary, so that a rebuild during the run changes nothing.
    if "aotc" in args.systems:
        aotc_id = file_id(args.aotc)
        snap = os.path.join(args.work, "aotc")
        shutil.copy2(args.aotc, snap)
        args.aotc_original, args.aotc = args.aotc, snap
    missing = [n for n in names if n not in args.user_paths and
               not os.path.exists(os.path.join(args.models_dir, n + ".onnx"))]
    quantized = [n for n in missing if registry.BY_NAME[n].export[0] == "quantize"]
    exported = [n for n in missing if n not in quantized]
    exported += [registry.BY_NAME[n].export[1]["source"] for n in quantized
                 if not os.path.exists(os.path.join(args.models_dir,
                                                    registry.BY_NAME[n].export[1]["source"] + ".onnx"))]
    if exported:
        log("exporting " + ", ".join(exported))
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export_models.py"), "--out", args.models_dir,
                        *sorted(set(exported))], check=True)
    for n in quantized:
        # ONNX Runtime's dynamic quantization of the float model, as its
        # users make one (int8 weights are symmetric: zero points 0).
        from onnxruntime.quantization import QuantType, quantize_dynamic
        source = os.path.join(args.models_dir, registry.BY_NAME[n].export[1]["source"] + ".onnx")
        log(f"quantizing {os.path.basename(source)} -> {n}.onnx")
        quantize_dynamic(source, os.path.join(args.models_dir, n + ".onnx"),
                         weight_type=QuantType[registry.BY_NAME[n].export[1]["weights"]])

    log(f"machine limits ({args.threads} threads)")
    limits = tools.machine_limits(args.work, args.threads)
    log(f"FMA peak {limits['fma_gflops']:.0f} GFLOP/s ({limits['isa']}), copy {limits['copy_gbs_median']:.1f} GB/s, "
        f"read {limits['read_gbs_median']:.1f} GB/s")

    import onnxruntime
    import iree.compiler.version as iree_version
    results = dict(
        date=datetime.datetime.now().isoformat(timespec="seconds"), host=platform.node(),
        cpu=cpu_name(), command=args.command or " ".join(sys.argv), threads=args.threads,
        settings=dict(budget_s=args.budget, min_runs=args.min_runs, max_runs=args.max_runs,
                      max_run_s=args.max_run_s, quick=args.quick,
                      batches=args.batches, tolerance=args.tolerance, iree_flags=tools.IREE_FLAGS),
        versions=dict(onnxruntime=onnxruntime.__version__, iree=getattr(iree_version, "VERSION", "?"),
                      numpy=np.__version__, python=platform.python_version(),
                      aotc=dict(aotc_id, commit=git_commit(os.path.dirname(aotc_id["path"])))
                      if "aotc" in args.systems else None,
                      pocl_device=None),
        limits=limits, loadavg_start=os.getloadavg(), models=[])
    estimates = Estimates()
    for name in names:
        log(f"--- {name}")
        results["models"].append(bench_model(registry.BY_NAME[name], args, args.work, estimates))
        results["wall_s"] = time.time() - start
    results["wall_s"] = time.time() - start
    results["loadavg_end"] = os.getloadavg()
    results["versions"]["pocl_device"] = pocl_device(args)
    paths = report.write(results, args.results, args.doc)
    log(f"done in {results['wall_s'] / 60:.1f} min: " + ", ".join(paths))
    if args.onnx:  # `aotc bench MODEL.onnx`: the tables on the terminal too
        md = next((p for p in paths if p.endswith(".md")), None)
        if md:
            text = open(md).read()
            start_at = text.find("### Latency")
            end_at = text.find("![")
            print(text[start_at:end_at if end_at > start_at else None].rstrip(), flush=True)
    flagged = report.wrong_answers(results, args.tolerance)
    for line in flagged:
        log("WRONG ANSWER: " + line)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f", {os.cpu_count()} CPUs"
    except OSError:
        pass
    return platform.processor()


def pocl_device(args):
    if "aotc" not in args.systems:
        return None
    r = tools.timed([args.aotc, "devices"])
    for line in r["out"].splitlines():
        if "pthread" in line or "cpu" in line.lower():
            return line.strip()[:200]
    return None


if __name__ == "__main__":
    main()

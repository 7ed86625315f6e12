#!/usr/bin/env python3
"""The GPU suite (issue 6, item 4): aotc through NVIDIA's OpenCL beside PyTorch eager,
torch.compile, AOTInductor and cuBLAS, on the CPU suite's models, on the lent GPU machine.

Run there by bench/gpu/run_suite.sh; the model .so files are built here by bench/gpu/suite.sh
(weightless: the weights of the big models do not fit what travels to that machine). Each model's
weights are made there from the same seeds and code as the CPU suite's (bench/cpu/export_models.py:
numpy for the GEMMs and convolutions, torch for the networks, exported with their state_dict names)
and given to aotc by name through aotc_container_update_constants; the peers run the same module
with the same weights and inputs. TF32 is off everywhere.

  suite.py run OUT --sodir DIR [--models LIST] [--batches 1,8] [--peers eager,compile,aoti]
  suite.py torch MODEL BATCH WORK [--peers ...]  child: weights, inputs, reference, PyTorch timings
  suite.py aotc MODEL BATCH WORK SO              child: aotc on the OpenCL GPU
  suite.py aoti MODEL WORK --batches 1,8         child: AOTInductor (one package, dynamic batch)

CUDA and OpenCL each run in their own child process; a crash in one costs only its figures. Each
child prints one JSON object as its last line. `run` appends every result to OUT/gpu_suite.jsonl
as it comes (a run cut off by the machine's time limit keeps what it measured) and prints a table.
Timing: wall time around one call, with the device synchronized inside it (aotc's run and
run_device return after the device finished; PyTorch's are followed by torch.cuda.synchronize()),
after warm-up, median and p90 over runs until a time budget (at least --min-runs). Kernel time:
aotc's from its OpenCL profiling events (sum of one run's kernels), PyTorch's from CUDA events
around the call (device-resident).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cpu"))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import models as registry  # noqa: E402

MODELS, BY_NAME = registry.GPU_MODELS, registry.GPU_BY_NAME
INPUT_SEED = 1234


def timed(fn, budget_s, min_runs, max_runs=500, warmup=3):
    """Median and p90 (ms) of fn() over runs until budget_s, at least min_runs."""
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return {"median_ms": statistics.median(times), "p90_ms": compare.percentile(times, 0.9), "runs": len(times)}


def max_rel_err(outs, refs):
    """compare.max_rel_err (the CPU suite's measure) with a count or shape mismatch as inf."""
    err, _ = compare.max_rel_err(outs, refs, "PyTorch")
    return math.inf if err is None else err


def batch_of(model, batch):
    """GEMMs have static shapes: batch is meaningless for them (reported as 1)."""
    return 1 if model.family == "gemm" else batch


def make_inputs(model, batch):
    rng = np.random.default_rng(INPUT_SEED + batch)
    out = []
    for spec, shape in zip(model.inputs, registry.shapes(model, batch)):
        if spec.dtype == "int64":
            out.append(rng.integers(0, spec.high, size=shape).astype(np.int64))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


# ----------------------------------------------------------------------------------------------
# The PyTorch side
# ----------------------------------------------------------------------------------------------


def torch_module(model):
    """(module, {initializer name: array}) for `model`: the network with its state_dict names,
    or for a GEMM / convolution a module around the CPU suite's numpy weights."""
    import torch
    import export_models as ex
    from onnx import numpy_helper
    kind, params = model.export
    if kind in ("gemm", "conv"):
        onnx_model = (ex.gemm if kind == "gemm" else ex.conv)(model.name, model.seed, **params)
        weights = {t.name: numpy_helper.to_array(t) for t in onnx_model.graph.initializer}

        class Layer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                for k, v in weights.items():
                    self.register_buffer(k, torch.from_numpy(v.copy()))

            def forward(self, x):
                if kind == "gemm":
                    return torch.matmul(x, self.B)
                return torch.nn.functional.conv2d(x, self.W, self.bias, stride=params["stride"],
                                                  padding=params["pad"], groups=params["groups"])
        return Layer().eval(), weights
    net = ex.build_net(model, keep_names=True)
    weights = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    return net, weights


def no_tf32():
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def cuda_timed(fn, budget_s, min_runs, sync):
    """timed() of fn followed by a device synchronization, plus the median device time from CUDA
    events around fn (kernel time, without the host's synchronization)."""
    import torch
    res = timed(lambda: (fn(), sync()), budget_s, min_runs)
    if torch.cuda.is_available():
        evs = []
        for _ in range(min(res["runs"], 50)):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            evs.append((a, b))
        torch.cuda.synchronize()
        res["device_ms"] = statistics.median(a.elapsed_time(b) for a, b in evs)
    return res


def child_torch(args):
    import torch
    no_tf32()
    model = BY_NAME[args.model]
    dev = args.device
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    out = {"model": model.name, "batch": batch_of(model, args.batch)}
    net, weights = torch_module(model)
    wpath = os.path.join(args.work, model.name + ".weights.npz")
    if not os.path.exists(wpath):
        np.savez(wpath, **weights)
    net = net.to(dev)
    xs = make_inputs(model, args.batch)
    xt = [torch.from_numpy(x).to(dev) for x in xs]
    with torch.no_grad():
        ref = net(*xt)
        refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
        np.savez(os.path.join(args.work, f"{model.name}.b{args.batch}.npz"),
                 **{f"in{i}": x for i, x in enumerate(xs)},
                 **{f"out{i}": r.cpu().numpy() for i, r in enumerate(refs)})
        peers = args.peers.split(",")
        if "eager" in peers:
            out["eager"] = cuda_timed(lambda: net(*xt), args.budget, args.min_runs, sync)

            def host_to_host():
                y = net(*[torch.from_numpy(x).to(dev) for x in xs])
                return y.cpu().numpy()
            out["eager_host"] = timed(host_to_host, args.budget, args.min_runs)
        print(json.dumps(out), flush=True)
        if "compile" in peers:
            try:
                os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
                mc = torch.compile(net)
                t = time.perf_counter()
                got = mc(*xt)
                sync()
                out["compile_first_call_s"] = time.perf_counter() - t
                out["compile_err"] = max_rel_err([got.cpu().numpy()], [refs[0].cpu().numpy()])
                out["compile"] = cuda_timed(lambda: mc(*xt), args.budget, args.min_runs, sync)
            except Exception as e:  # one peer failing must not hide the others
                out["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    print(json.dumps(out), flush=True)


def child_aoti(args):
    """--phase compile: export with a dynamic batch and compile (an AOTInductor package, or with
    --how so the bare shared object of torch._inductor.aot_compile); --phase run, in a fresh
    process as a deployment would: load it and time each batch against the torch child's
    reference."""
    import torch
    no_tf32()
    model = BY_NAME[args.model]
    out = {"model": model.name}
    batches = [int(b) for b in args.batches.split(",")]
    path = os.path.join(args.work, f"{model.name}.{args.how}")
    try:
        if args.phase == "compile":
            net, _ = torch_module(model)
            net = net.cuda()
            # The example batch must not be 1: export specializes a dim whose example size is 1.
            xs = [torch.from_numpy(x).cuda() for x in make_inputs(model, max(batches + [2]))]
            dynamic = None
            if model.family != "gemm":
                dim = torch.export.Dim("batch", min=1, max=1024)
                dynamic = tuple({0: dim} for _ in xs)
            t = time.perf_counter()
            with torch.no_grad():
                ep = torch.export.export(net, tuple(xs), dynamic_shapes=dynamic)
                if args.how == "pt2":
                    torch._inductor.aoti_compile_and_package(ep, package_path=path)
                else:
                    so = torch._inductor.aot_compile(ep.module(), tuple(xs))
                    so = so if isinstance(so, str) else [f for f in so if str(f).endswith(".so")][0]
                    os.replace(so, path)
            out["aoti_compile_s"] = time.perf_counter() - t
            print(json.dumps(out), flush=True)
            return
        t = time.perf_counter()
        if args.how == "pt2":
            runner = torch._inductor.aoti_load_package(path)
        else:
            runner = torch._export.aot_load(path, device="cuda")
        out["aoti_load_s"] = time.perf_counter() - t
        out["aoti_how"] = args.how
        for b in batches:
            if model.family == "gemm" and b != batches[0]:
                continue
            with np.load(os.path.join(args.work, f"{model.name}.b{b}.npz")) as f:
                xt = [torch.from_numpy(f[k]).cuda() for k in sorted(k for k in f.files if k.startswith("in"))]
                ref = f["out0"]
            with torch.no_grad():
                got = runner(*xt)
                got = got[0] if isinstance(got, (list, tuple)) else got
                res = cuda_timed(lambda: runner(*xt), args.budget, args.min_runs, torch.cuda.synchronize)
            res["err"] = max_rel_err([got.cpu().numpy()], [ref])
            out[f"b{batch_of(model, b)}"] = res
            print(json.dumps(out), flush=True)
    except Exception as e:
        out["aoti_error"] = f"{args.phase}: {type(e).__name__}: {str(e)[:300]}"
    print(json.dumps(out), flush=True)


# ----------------------------------------------------------------------------------------------
# The aotc side
# ----------------------------------------------------------------------------------------------


def child_aotc(args):
    from aotc_ctypes import Model
    model = BY_NAME[args.model]
    out = {"model": model.name, "batch": batch_of(model, args.batch)}
    cache = os.path.join(args.work, "cache", model.name)
    t = time.perf_counter()
    m = Model(args.so, device=args.device, cache_dir=cache)
    out["load_cold_ms"] = (time.perf_counter() - t) * 1e3
    out["device"] = m.device_name
    t = time.perf_counter()
    warm = Model(args.so, device=args.device, cache_dir=cache)
    out["load_warm_ms"] = (time.perf_counter() - t) * 1e3
    out["warm_from_cache"] = warm.program_from_cache
    del warm
    consts = m.constants()
    with np.load(os.path.join(args.work, model.name + ".weights.npz")) as f:
        values = {}
        for name, dtype, shape in consts:
            if name not in f.files:
                raise SystemExit(f"suite: the .so wants constant {name!r}, which the module lacks")
            v = f[name].astype(dtype, copy=False)
            if tuple(v.shape) != tuple(shape):
                raise SystemExit(f"suite: constant {name!r} is {list(v.shape)}, the .so wants {list(shape)}")
            values[name] = v
    t = time.perf_counter()
    m.update_constants(values, validate_full=True)
    out["update_constants_ms"] = (time.perf_counter() - t) * 1e3
    out["weights_mb"] = sum(v.nbytes for v in values.values()) / 1e6
    with np.load(os.path.join(args.work, f"{model.name}.b{args.batch}.npz")) as f:
        xs = [f[k] for k in sorted(k for k in f.files if k.startswith("in"))]
        refs = [f[k] for k in sorted(k for k in f.files if k.startswith("out"))]
    caps = [max(r.nbytes, 1) for r in refs]
    bufs = [np.empty(c, dtype=np.uint8) for c in caps]
    t = time.perf_counter()
    got = m.run(xs, out_buffers=bufs)
    out["first_run_ms"] = (time.perf_counter() - t) * 1e3
    out["err"] = max_rel_err(got, refs)
    out["host"] = timed(lambda: m.run(xs, out_buffers=bufs), args.budget, args.min_runs)
    # Device resident: inputs and outputs in OpenCL buffers of the container's context.
    cl = m.opencl()
    din = [(cl.buffer(x.nbytes, x), x) for x in xs]
    dout = [(cl.buffer(c), c) for c in caps]
    m.run_device(din, dout)
    dev_outs = [cl.read(b, np.empty_like(r)) for (b, _), r in zip(dout, refs)]
    out["device_err"] = max_rel_err(dev_outs, refs)
    out["resident"] = timed(lambda: m.run_device(din, dout), args.budget, args.min_runs)
    # Pipelined: runs enqueued back to back on the host's queue without waiting
    # (aotc_container_run_device_async), one clFinish per batch of them; per run.
    if hasattr(m.lib, "aotc_container_run_device_async"):
        def pipelined(count=10):
            runs = [m.run_device_async(din, dout, cl.queue) for _ in range(count)]
            cl.finish()
            for r in runs:
                m.wait(r)
        pipelined(1)
        dev_outs = [cl.read(b, np.empty_like(r)) for (b, _), r in zip(dout, refs)]
        out["pipelined_err"] = max_rel_err(dev_outs, refs)
        t = timed(pipelined, args.budget, args.min_runs)
        out["pipelined"] = {k: (v / 10 if k.endswith("_ms") else v) for k, v in t.items()}
    for b, _ in din + dout:
        cl.release(b)
    del cl
    # Kernel time: the same container with profiling on (its queues are made
    # again with profiling events), the median over runs of one run's kernel sum.
    m.set_profiling(True)
    sums, per_kernel = [], {}
    for i in range(max(3, min(20, out["host"]["runs"]))):
        m.run(xs, out_buffers=bufs)
        recs = [r for r in m.last_profile() if r["kind"] == "kernel"]
        if i:
            sums.append(sum(r["end_ns"] - r["start_ns"] for r in recs) / 1e6)
            for r in recs:
                per_kernel.setdefault(r["index"], []).append((r["end_ns"] - r["start_ns"]) / 1e6)
    out["kernel_ms"] = statistics.median(sums)
    names = m.kernel_summaries()
    out["kernels"] = len(names)
    # Where the time goes: the 10 kernels with the most device time (median per run).
    top = sorted(((statistics.median(v) * len(v) / len(sums), k) for k, v in per_kernel.items()), reverse=True)
    out["top_kernels"] = [{"kernel": names[k][0], "what": names[k][1][:160], "ms": t} for t, k in top[:10]]
    print(json.dumps(out), flush=True)


# ----------------------------------------------------------------------------------------------
# The driver
# ----------------------------------------------------------------------------------------------


def child(argv, timeout, clean_env=False):
    """Runs a child; returns its last JSON line (with an error field when it failed). A crash
    prints the child's Python stack (faulthandler). clean_env: without the OpenCL loader's
    variables (LD_LIBRARY_PATH, OCL_ICD_VENDORS), for the PyTorch-only children."""
    t = time.perf_counter()
    env = dict(os.environ)
    if clean_env:
        env.pop("LD_LIBRARY_PATH", None)
        env.pop("OCL_ICD_VENDORS", None)
    try:
        p = subprocess.run([sys.executable, "-X", "faulthandler", os.path.abspath(__file__)] + argv,
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        lines = [l for l in (e.stdout or b"").decode(errors="replace").splitlines() if l.startswith("{")]
        res = json.loads(lines[-1]) if lines else {}
        res["error"] = f"timed out after {timeout} s"
        return res
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    res = json.loads(lines[-1]) if lines else {}
    if p.returncode != 0:
        err = [l for l in p.stderr.strip().splitlines() if "Warning" not in l and "warnings.warn" not in l]
        res["error"] = f"exit {p.returncode}: " + " | ".join(err[-12:])[-1500:]
    res["wall_s"] = time.perf_counter() - t
    return res


def fmt(x, spec=".3f"):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def run(args):
    os.makedirs(args.out, exist_ok=True)
    work = args.work or os.path.join("/tmp", "aotc-gpu-suite")
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(args.out, "gpu_suite.jsonl"), "a")
    names = registry.select(args.models) if args.models != "all+" else [m.name for m in MODELS]
    names += [n for n in (args.extra or "").split(",") if n]
    batches = [int(b) for b in args.batches.split(",")]
    peers = args.peers.split(",")
    common = ["--budget", str(args.budget), "--min-runs", str(args.min_runs)]
    rows = []
    for name in names:
        model = BY_NAME[name]
        so = os.path.join(args.sodir, name + ".so")
        for b in ([batches[0]] if model.family == "gemm" else batches):
            # torch.compile of one matmul or convolution calls the same cuBLAS / cuDNN kernel as
            # eager: only the networks get it.
            tp = [p for p in peers if p != "aoti" and (p == "eager" or model.family == "net")]
            tp = tp or ["eager"]
            t = child(["torch", name, str(b), work, "--peers", ",".join(tp), "--device", args.torch_device]
                      + common, args.timeout, clean_env=True)
            a = child(["aotc", name, str(b), work, so, "--device", args.device] + common, args.timeout)
            row = {"model": name, "family": model.family, "batch": batch_of(model, b), "torch": t, "aotc": a}
            rows.append(row)
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(f"{name} b{row['batch']}: aotc {fmt(a.get('host', {}).get('median_ms'))} ms host, "
                  f"{fmt(a.get('resident', {}).get('median_ms'))} device-resident, "
                  f"{fmt(a.get('pipelined', {}).get('median_ms'))} pipelined (err "
                  f"{a.get('pipelined_err')}), err {a.get('err')}; "
                  f"eager {fmt(t.get('eager', {}).get('median_ms'))}, compile "
                  f"{fmt(t.get('compile', {}).get('median_ms'))} {a.get('error', '')}{t.get('error', '')}",
                  flush=True)
        if "aoti" in peers:
            aoti = ["aoti", name, work, "--batches", args.batches, "--how", args.aoti_how] + common
            r = child(aoti + ["--phase", "compile"], args.timeout, clean_env=True)
            if "aoti_compile_s" in r:
                r = {**r, **child(aoti + ["--phase", "run"], args.timeout, clean_env=True)}
            row = {"model": name, "family": model.family, "aoti": r}
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(f"{name} aoti: {json.dumps(r)[:300]}", flush=True)
    bad = [r for r in rows if not (r["aotc"].get("err", math.inf) <= args.tolerance
                                   and r["aotc"].get("device_err", math.inf) <= args.tolerance)]
    print(f"\n{'model':<18} {'b':>2} {'aotc host':>9} {'aotc dev':>9} {'aotc krn':>9} {'eager':>8} "
          f"{'compile':>8} {'err':>8}")
    for r in rows:
        a, t = r["aotc"], r["torch"]
        print(f"{r['model']:<18} {r['batch']:>2} {fmt(a.get('host', {}).get('median_ms')):>9} "
              f"{fmt(a.get('resident', {}).get('median_ms')):>9} {fmt(a.get('kernel_ms')):>9} "
              f"{fmt(t.get('eager', {}).get('median_ms')):>8} {fmt(t.get('compile', {}).get('median_ms')):>8} "
              f"{fmt(a.get('err'), '.1e'):>8}")
    print(f"{len(bad)} configs over the tolerance {args.tolerance} or failed")
    sys.exit(1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    timing = argparse.ArgumentParser(add_help=False)
    timing.add_argument("--budget", type=float, default=2.0, help="timed seconds per system and config")
    timing.add_argument("--min-runs", type=int, default=10)
    r = sub.add_parser("run", parents=[timing])
    r.add_argument("out")
    r.add_argument("--sodir", required=True, help="folder of NAME.so (bench/gpu/suite.sh builds them)")
    r.add_argument("--work", help="scratch folder for weights and references (default /tmp/aotc-gpu-suite)")
    r.add_argument("--models", default="all+", help="names or families (gemm, conv, net, all; all+: with gemm_8192)")
    r.add_argument("--extra", help="more model names (e.g. gemm_8192)")
    r.add_argument("--batches", default="1,8")
    r.add_argument("--peers", default="eager,compile", help="eager, compile, aoti")
    r.add_argument("--aoti-how", choices=["pt2", "so"], default="pt2")
    r.add_argument("--device", default="gpu", help="aotc's OpenCL device")
    r.add_argument("--torch-device", default="cuda", help="PyTorch's device (cpu: a dry run here)")
    r.add_argument("--tolerance", type=float, default=1e-4)
    r.add_argument("--timeout", type=int, default=400, help="seconds per child")
    t = sub.add_parser("torch", parents=[timing])
    t.add_argument("model")
    t.add_argument("batch", type=int)
    t.add_argument("work")
    t.add_argument("--peers", default="eager,compile")
    t.add_argument("--device", default="cuda")
    a = sub.add_parser("aotc", parents=[timing])
    a.add_argument("model")
    a.add_argument("batch", type=int)
    a.add_argument("work")
    a.add_argument("so")
    a.add_argument("--device", default="gpu")
    i = sub.add_parser("aoti", parents=[timing])
    i.add_argument("model")
    i.add_argument("work")
    i.add_argument("--batches", default="1,8")
    i.add_argument("--phase", choices=["compile", "run"], required=True)
    i.add_argument("--how", choices=["pt2", "so"], default="pt2",
                   help="pt2: aoti_compile_and_package / aoti_load_package; so: aot_compile / aot_load")
    args = ap.parse_args()
    {"run": run, "torch": child_torch, "aotc": child_aotc, "aoti": child_aoti}[args.cmd](args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs aotc model .so files on an OpenCL GPU, checks them against the
backend-test data (PyTorch's outputs), and times them beside PyTorch eager
and torch.compile on the same GPU.

Usage: check_gpu.py OUT_DIR CASE=SO [CASE=SO ...]   (AOTC_GPU_SKIP_PEERS=1: no PyTorch timings)
  CASE is a directory in ONNX backend-test layout (tests/models/NAME).
See bench/gpu/run_on_gpu.sh for the environment it needs.
"""
import glob
import json
import os
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402


def load_set(d):
    ins = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d + "/input_*.pb"))]
    outs = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d + "/output_*.pb"))]
    return ins, outs


def median_ms(fn, warmup=10, reps=100, sync=None):
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def torch_peers(case, batch):
    """Times the peers in a child process (bench/gpu/peers.py): a crash there
    costs only the peer figures, and CUDA and OpenCL do not share a process."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, os.path.join(here, "peers.py"), case, str(batch)],
                       capture_output=True, text=True, timeout=500)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    out = json.loads(lines[-1]) if lines else {}
    if p.returncode != 0:
        out["peers_error"] = f"exit {p.returncode}: " + p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else f"exit {p.returncode}"
    return out


def main():
    out_dir = sys.argv[1]
    report = []
    for arg in sys.argv[2:]:
        case_dir, so = arg.split("=")
        case = os.path.basename(case_dir.rstrip("/"))
        t0 = time.perf_counter()
        model = Model(so, device="gpu", cache_dir=os.path.join(out_dir, "cache"))
        load_ms = (time.perf_counter() - t0) * 1e3
        entry = {"case": case, "device": model.device_name, "load_ms": load_ms, "sets": []}
        for d in sorted(glob.glob(case_dir + "/test_data_set_*")):
            ins, want = load_set(d)
            got = model.run(ins)
            errs = []
            for g, w in zip(got, want):
                assert g.shape == w.shape, (g.shape, w.shape)
                # NaN where NaN is expected and an infinity where the same
                # one is expected are matches (softmax over a row of -inf).
                same = (np.isnan(g) & np.isnan(w)) | (g == w)
                d = np.where(same, 0.0, g.astype(np.float64) - w)
                err = float(np.max(np.abs(d))) if d.size else 0.0
                wf = np.where(np.isfinite(w), w, 0.0)
                rel = float(np.linalg.norm(np.nan_to_num(d, nan=np.inf)) / max(np.linalg.norm(wf), 1e-30))
                ok = bool(np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True))
                errs.append({"max_abs": err, "rel_l2": rel, "ok": ok})
            entry["sets"].append({"batch": int(ins[0].shape[0]), "outputs": errs})
        ins, _ = load_set(sorted(glob.glob(case_dir + "/test_data_set_*"))[-1])
        entry["aotc_run_ms"] = median_ms(lambda: model.run(ins))
        # A second load must come from the program-binary cache.
        again = Model(so, device="gpu", cache_dir=os.path.join(out_dir, "cache"))
        entry["second_load_from_cache"] = again.program_from_cache
        if os.environ.get("AOTC_GPU_SKIP_PEERS"):
            pass  # correctness and aotc timing only
        else:
          try:
            entry.update(torch_peers(case, ins[0].shape[0]))
          except Exception as ex:
            entry["torch_error"] = str(ex)[:300]
        report.append(entry)
        print(json.dumps(entry), flush=True)
    with open(os.path.join(out_dir, "gpu_report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("\ncase              batch  ok   max|err|   aotc ms  eager ms  compile ms  aoti ms   aoti compile s  inductor 1st call s")
    bad = 0
    for e in report:
        for s in e["sets"]:
            ok = all(o["ok"] for o in s["outputs"])
            bad += not ok
            print(f"{e['case']:<17} {s['batch']:>5}  {'yes' if ok else 'NO ':<4} "
                  f"{max(o['max_abs'] for o in s['outputs']):.2e}")
        print(f"{'':<17} {'':>5}  {'':<4} {'':<10} {e['aotc_run_ms']:>7.3f} "
              f"{e.get('torch_eager_ms', float('nan')):>9.3f} {e.get('torch_compile_ms', float('nan')):>11.3f}"
              f" {e.get('aoti_ms', float('nan')):>8.3f} {e.get('aoti_compile_s', float('nan')):>15.1f}"
              f" {e.get('torch_compile_first_call_s', float('nan')):>19.1f}")
    print(f"\n{bad} mismatching data sets")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

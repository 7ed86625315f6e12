#!/usr/bin/env python3
"""Runs aotc model .so files on an OpenCL GPU, checks them against the
backend-test data (PyTorch's outputs), and times them beside PyTorch eager
and torch.compile on the same GPU.

Usage: check_gpu.py OUT_DIR CASE=SO [CASE=SO ...]
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


def torch_peers(case, x):
    import torch
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "scripts"))
    import export_torch_models as e
    cls = {"mlp_gelu": e.MlpGelu, "cnn_small": e.CnnSmall, "mlp_tanh_sigmoid": e.MlpTanhSigmoid}[case]
    m = cls().eval().cuda()
    xt = torch.from_numpy(x).cuda()
    out = {}
    with torch.no_grad():
        out["torch_eager_ms"] = median_ms(lambda: m(xt), sync=torch.cuda.synchronize)
        out["torch_eager_with_copies_ms"] = median_ms(
            lambda: [t.cpu() for t in (m(torch.from_numpy(x).cuda()),) if torch.is_tensor(t)],
            sync=torch.cuda.synchronize)
        try:
            mc = torch.compile(m)
            mc(xt)
            out["torch_compile_ms"] = median_ms(lambda: mc(xt), sync=torch.cuda.synchronize)
        except Exception as ex:  # report, don't hide
            out["torch_compile_error"] = str(ex)[:200]
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
                err = float(np.max(np.abs(g.astype(np.float64) - w)))
                rel = float(np.linalg.norm(g.astype(np.float64) - w) / max(np.linalg.norm(w), 1e-30))
                ok = bool(np.allclose(g, w, rtol=1e-4, atol=1e-5))
                errs.append({"max_abs": err, "rel_l2": rel, "ok": ok})
            entry["sets"].append({"batch": int(ins[0].shape[0]), "outputs": errs})
        ins, _ = load_set(sorted(glob.glob(case_dir + "/test_data_set_*"))[-1])
        entry["aotc_run_ms"] = median_ms(lambda: model.run(ins))
        # A second load must come from the program-binary cache.
        again = Model(so, device="gpu", cache_dir=os.path.join(out_dir, "cache"))
        entry["second_load_from_cache"] = again.program_from_cache
        try:
            entry.update(torch_peers(case, ins[0]))
        except Exception as ex:
            entry["torch_error"] = str(ex)[:300]
        report.append(entry)
        print(json.dumps(entry), flush=True)
    with open(os.path.join(out_dir, "gpu_report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("\ncase              batch  ok   max|err|   aotc ms  eager ms  compile ms  (batch 64, host->host for aotc)")
    bad = 0
    for e in report:
        for s in e["sets"]:
            ok = all(o["ok"] for o in s["outputs"])
            bad += not ok
            print(f"{e['case']:<17} {s['batch']:>5}  {'yes' if ok else 'NO ':<4} "
                  f"{max(o['max_abs'] for o in s['outputs']):.2e}")
        print(f"{'':<17} {'':>5}  {'':<4} {'':<10} {e['aotc_run_ms']:>7.3f} "
              f"{e.get('torch_eager_ms', float('nan')):>9.3f} {e.get('torch_compile_ms', float('nan')):>11.3f}")
    print(f"\n{bad} mismatching data sets")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

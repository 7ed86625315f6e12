#!/usr/bin/env python3
"""Times the PyTorch peers of one model on the GPU: eager, torch.compile
(steady state and first-call compile time) and AOTInductor (export with a
dynamic batch + compile + package time, then steady state). Each step is
reported separately; one failing does not hide the others.
Usage: peers.py CASE BATCH   (prints one JSON line last)
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "scripts"))
import export_torch_models as e  # noqa: E402


def median_ms(fn, warmup=10, reps=100):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    case, batch = sys.argv[1], int(sys.argv[2])
    cls = {"mlp_gelu": e.MlpGelu, "cnn_small": e.CnnSmall, "mlp_tanh_sigmoid": e.MlpTanhSigmoid}[case]
    m = cls().eval().cuda()
    shape = {"mlp_gelu": (batch, 64), "cnn_small": (batch, 3, 16, 16), "mlp_tanh_sigmoid": (batch, 32)}[case]
    xt = torch.randn(*shape, device="cuda")
    out = {}
    with torch.no_grad():
        out["torch_eager_ms"] = median_ms(lambda: m(xt))
        try:
            mc = torch.compile(m)
            t = time.perf_counter()
            mc(xt)
            torch.cuda.synchronize()
            out["torch_compile_first_call_s"] = time.perf_counter() - t
            out["torch_compile_ms"] = median_ms(lambda: mc(xt))
        except Exception as ex:
            out["torch_compile_error"] = str(ex)[:200]
    print(json.dumps(out), flush=True)
    try:
        dim = torch.export.Dim("batch", min=2, max=65536)
        t = time.perf_counter()
        ep = torch.export.export(m, (xt,), dynamic_shapes=({0: dim},))
        pkg = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(os.environ.get("OUT", "/tmp"), case + ".pt2"))
        out["aoti_compile_s"] = time.perf_counter() - t
        print(json.dumps(out), flush=True)
        runner = torch._inductor.aoti_load_package(pkg)
        with torch.no_grad():
            out["aoti_ms"] = median_ms(lambda: runner(xt))
    except Exception as ex:
        out["aoti_error"] = str(ex)[:300]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

"""cuBLAS's SGEMM time (TF32 off, CUDA events, median) for the probe's sizes."""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
for n in [int(s) for s in sys.argv[1].split(",")]:
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    for _ in range(3):
        torch.mm(a, b)
    ts = []
    for _ in range(15):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.mm(a, b)
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    med = ts[len(ts) // 2]
    print(f"{n:5d} {'cublas':28s} {med:8.3f} ms {2 * n**3 / med * 1e-9:7.2f} TFLOP/s", flush=True)

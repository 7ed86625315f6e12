#!/usr/bin/env python3
"""A model exported by the current PyTorch with its default exporter, checked in
(tests/current_torch/llama_tiny: a 2-layer LLaMA-style decoder, RMSNorm,
rotary embeddings, grouped-query attention, SiLU-gated MLP, causal mask;
opset 20, weights in model.onnx.data, dynamic batch and sequence; written by
`scripts/export_current_models.py --models llama_tiny`). aotc compiles it
once and must match ONNX Runtime within 1e-4 at two batch sizes and two
sequence lengths. Usage: check_current_torch.py AOTC
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
path = os.path.join(here, "..", "current_torch", "llama_tiny", "model.onnx")
with tempfile.TemporaryDirectory() as tmp:
    so = os.path.join(tmp, "model.so")
    subprocess.run([aotc, "compile", path, "-o", so], check=True)
    m = Model(so, device="cpu")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    worst = 0.0
    for b, s in ((1, 5), (3, 5), (1, 19), (3, 19)):
        g = np.random.default_rng(b * 100 + s)
        xs = [g.integers(0, 128, (b, s)).astype(np.int64), np.ones((b, s), np.int64)]
        want = sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})
        got = m.run(xs)
        for gg, ww in zip(got, want):
            assert gg.shape == ww.shape, (gg.shape, ww.shape)
            err = float(np.abs(gg.astype(np.float64) - ww).max() / np.abs(ww).max())
            print(f"batch {b} seq {s}: {gg.shape}, max |aotc - ORT| / max |ORT| = {err:.2e}")
            worst = max(worst, err)
print(f"current torch llama_tiny: worst {worst:.2e}, {'ok' if worst <= 1e-4 else 'MISMATCH'}")
sys.exit(0 if worst <= 1e-4 else 1)

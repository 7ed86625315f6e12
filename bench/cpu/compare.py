"""Output comparison and statistics shared by the CPU suite (run.py) and the GPU
suite (bench/gpu/suite.py)."""

import math

import numpy as np


def max_rel_err(outs, refs, peer="the reference"):
    """(max |out - ref| / max |ref| over each output, the largest over the outputs; why) with
    why None, or (None, why) when the outputs' count or a shape differs; inf for a non-finite
    output."""
    if len(outs) != len(refs):
        return None, f"{len(outs)} outputs, {peer} has {len(refs)}"
    worst = 0.0
    for a, b in zip(outs, refs):
        if tuple(a.shape) != tuple(b.shape):
            return None, f"output shape {list(a.shape)}, {peer} {list(b.shape)}"
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if not np.all(np.isfinite(a64)):
            return math.inf, None
        scale = np.max(np.abs(b64)) if b64.size else 0.0
        err = np.max(np.abs(a64 - b64)) if b64.size else 0.0
        worst = max(worst, err / scale if scale > 0 else err)
    return float(worst), None


def percentile(xs, q):
    """The q-quantile of xs by nearest rank."""
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]

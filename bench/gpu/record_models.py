#!/usr/bin/env python3
"""Records runs of whole ONNX models on this machine's CPU device for a replay
on the lent GPU (bench/gpu/replay_records.py), the way record_checks.sh does
for the e2e checks: each model compiled with AOTC_COMPILE_FLAGS, run on
random inputs at each batch size, the .so, inputs and PoCL's outputs saved
into AOTC_RECORD_DIR.

  AOTC_RECORD_DIR=DIR [AOTC_COMPILE_FLAGS=...] record_models.py AOTC MODEL.onnx[:DIM=V,...] ...

A symbolic dim not given takes the batch (1, then 2)."""
import os
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
import compiled_model  # noqa: E402
from aotc_ctypes import DTYPES  # noqa: E402  (compiled_model put bench/gpu on the path)


def main():
    aotc = sys.argv[1]
    rng = np.random.default_rng(7)
    tmp = tempfile.mkdtemp()
    for arg in sys.argv[2:]:
        path, _, dims = arg.partition(":")
        fixed = dict(kv.split("=") for kv in dims.split(",") if kv)
        proto = onnx.load(path)
        # tests/models/NAME/model.onnx: the folder names it (every such
        # file is model.onnx, and one name per .so keeps a second from
        # loading the first's library).
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem == "model":
            stem = os.path.basename(os.path.dirname(os.path.abspath(path)))
        name = stem + "_" + \
            ("gpu" if "generic-gpu" in os.environ.get("AOTC_COMPILE_FLAGS", "") else "cpu")
        model, _ = compiled_model.compile_model(aotc, tmp, name, proto)
        inits = {i.name for i in proto.graph.initializer}
        for batch in (1, 2):
            feeds = []
            for vi in proto.graph.input:
                if vi.name in inits:
                    continue
                t = vi.type.tensor_type
                shape = [d.dim_value if d.HasField("dim_value") else int(fixed.get(d.dim_param, batch))
                         for d in t.shape.dim]
                dt = np.dtype(DTYPES[t.elem_type])
                feeds.append(rng.standard_normal(shape).astype(dt) if dt.kind == "f"
                             else rng.integers(0, 100, shape).astype(dt))
            outs = model.run(feeds)
            print(f"recorded {name} batch {batch}: {[o.shape for o in outs]}")


if __name__ == "__main__":
    main()

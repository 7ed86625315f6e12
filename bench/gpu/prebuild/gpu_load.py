"""On the lent GPU machine: loads each carried .so with an empty aotc cache
(a fresh folder each load) and reports where its program came from, the load
time and that both builds give the same outputs."""
import os, sys, tempfile, time
import numpy as np
sys.path.insert(0, "bench/gpu")
from aotc_ctypes import Model
for m, shape in (("mlp", (4, 64)), ("mv2", (1, 3, 224, 224))):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    outs = {}
    for tag in ("gpu", "gpu_pre", "gpu", "gpu_pre"):
        cache = tempfile.mkdtemp()
        t = time.monotonic()
        model = Model(f".devcarry/{m}_{tag}.so", device="gpu", cache_dir=cache)
        load = time.monotonic() - t
        y = model.run([x])[0]
        outs.setdefault(tag, y)
        print(f"{m} {tag}: program source {model.program_source}, load {load:.3f} s, "
              f"cache entries {len(os.listdir(cache))}")
    print(f"{m}: max |default - prebuilt| = {float(np.abs(outs['gpu'] - outs['gpu_pre']).max()):.3g}")

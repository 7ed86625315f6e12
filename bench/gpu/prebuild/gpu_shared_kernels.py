"""On the lent GPU machine: loads pairs of carried .so files, the default
build (kernels of the same code share one OpenCL function,
codegen/opencl/share_kernels.h) and the same model compiled with
--no-share-kernels (NAME_own.so beside NAME.so), each with an empty aotc
cache and the driver's compute cache off, the program built whole
(AOTC_BUILD_JOBS=1), alternated over ROUNDS rounds; reports the load time,
and for a model with weights (not NAME_wl) that both give the same outputs.
Prepared here: .devcarry/ with ocl-icd-libopencl1_*.deb and the .so files
(aotc compile MODEL --device-profile generic-gpu [--weightless]
[--no-share-kernels]). Run from the repository root through the device
tool: source bench/gpu/nvidia_opencl_env.sh; python3 THIS A.so ..."""
import os, sys, tempfile, time
import numpy as np
sys.path.insert(0, "bench/gpu")
os.environ["CUDA_CACHE_DISABLE"] = "1"
os.environ["AOTC_BUILD_JOBS"] = "1"
from aotc_ctypes import Model
rounds = int(os.environ.get("ROUNDS", "2"))
for so in sys.argv[1:]:
    own = so[:-3] + "_own.so"
    outs = {}
    for rnd in range(rounds):
        for path in (so, own):
            cache = tempfile.mkdtemp()
            t = time.monotonic()
            model = Model(path, device="gpu", cache_dir=cache)
            load = time.monotonic() - t
            print(f"{os.path.basename(path)} round {rnd}: program source "
                  f"{model.program_source}, load {load:.2f} s", flush=True)
            if "_wl" not in path:
                x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
                outs.setdefault(path, model.run([x])[0])
            del model
    if len(outs) == 2:
        a, b = outs.values()
        print(f"{os.path.basename(so)}: shared and own outputs "
              f"{'identical' if np.array_equal(a, b) else 'differ: max %.3g' % float(np.abs(a - b).max())}")

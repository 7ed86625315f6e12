"""On the lent GPU machine: loads each carried .so with an empty aotc cache
(a fresh folder each load) and the driver's compute cache off, its program
built from OpenCL C whole (AOTC_BUILD_JOBS=1) or in parts by several
aotc-build-program processes at once (runtime/src/program_split.h),
alternated; reports the load time, where the program came from, the cache
entries, and for a model with weights that both builds give the same outputs.
Prepared here: .devcarry/ with ocl-icd-libopencl1_*.deb, aotc-build-program
(build/compiler/tools), MODEL_wl.so (aotc compile MODEL --device-profile
generic-gpu --weightless: the load builds the program and runs nothing) and
mv2_gpu.so (with its weights). Run from the repository root through the
device tool: source bench/gpu/nvidia_opencl_env.sh; python3 THIS."""
import os, sys, tempfile, time
import numpy as np
sys.path.insert(0, "bench/gpu")
os.environ["CUDA_CACHE_DISABLE"] = "1"
os.environ["AOTC_PROGRAM_BUILDER"] = os.path.abspath(".devcarry/aotc-build-program")
from aotc_ctypes import Model
jobs_list = [int(j) for j in os.environ.get("JOBS", "1 8").split()]
for so in sys.argv[1:]:
    outs = {}
    for rnd in range(2):
        for jobs in jobs_list:
            os.environ["AOTC_BUILD_JOBS"] = str(jobs)
            cache = tempfile.mkdtemp()
            t = time.monotonic()
            model = Model(so, device="gpu", cache_dir=cache)
            load = time.monotonic() - t
            line = (f"{os.path.basename(so)} jobs {jobs} round {rnd}: program source "
                    f"{model.program_source}, load {load:.2f} s, cache entries {len(os.listdir(cache))}")
            if "_wl" not in so:
                x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
                outs.setdefault(jobs, model.run([x])[0])
            print(line, flush=True)
            del model
    if len(outs) > 1:
        ys = list(outs.values())
        print(f"{os.path.basename(so)}: max |whole - parts| = "
              f"{max(float(np.abs(ys[0] - y).max()) for y in ys[1:]):.3g}")

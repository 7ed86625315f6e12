#!/usr/bin/env bash
# The GPU suite, run on the lent GPU machine (carry .devcarry: the .so files bench/gpu/suite.sh
# built, and the OpenCL ICD loader package). Arguments go to `suite.py run` (default: every model,
# batches 1 and 8, peers eager and torch.compile); AOTInductor: --peers aoti, as its own call,
# since its compiles take minutes. Writes $OUT/gpu_suite.jsonl and $OUT/machine.json.
set -euo pipefail
export TORCHINDUCTOR_FORCE_DISABLE_CACHES=1  # time real compiles, not cache hits
source "$(dirname "$0")/nvidia_opencl_env.sh"
out=${OUT:-/tmp/out}; mkdir -p "$out"
python3 - "$out/machine.json" <<'PY'
import json, subprocess, sys, torch
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                      "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
json.dump({"nvidia_smi": smi, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version()}, open(sys.argv[1], "w"))
print(smi, "torch", torch.__version__)
PY
cp .devcarry/suite/compile.json "$out/" 2>/dev/null || true
python3 bench/gpu/suite.py run "$out" --sodir .devcarry/suite "$@"

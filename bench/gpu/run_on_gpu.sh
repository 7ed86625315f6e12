#!/usr/bin/env bash
# Runs model .so files built on the development machine on the lent GPU
# machine through NVIDIA's OpenCL driver. The GPU machine has no OpenCL ICD
# loader: the Debian package travels in .devcarry/ and is unpacked here.
# Carried: .devcarry/{ocl-icd-libopencl1_*.deb,*.so}. Writes $OUT/gpu_report.json.
set -euo pipefail
export TORCHINDUCTOR_FORCE_DISABLE_CACHES=1  # time real compiles, not cache hits
source "$(dirname "$0")/nvidia_opencl_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
out=${OUT:-/tmp/out}; mkdir -p "$out"
python3 bench/gpu/check_gpu.py "$out" \
  tests/models/mlp_gelu=.devcarry/mlp_gelu.so \
  tests/models/cnn_small=.devcarry/cnn_small.so \
  tests/models/mlp_tanh_sigmoid=.devcarry/mlp_tanh_sigmoid.so

#!/usr/bin/env bash
# Runs model .so files built on the development machine on the lent GPU
# machine through NVIDIA's OpenCL driver. The GPU machine has no OpenCL ICD
# loader: the Debian package travels in .devcarry/ and is unpacked here.
# Carried: .devcarry/{ocl-icd-libopencl1_*.deb,*.so}. Writes $OUT/gpu_report.json.
set -euo pipefail
export TORCHINDUCTOR_FORCE_DISABLE_CACHES=1  # time real compiles, not cache hits
mkdir -p /tmp/ocl /tmp/icd
dpkg -x .devcarry/ocl-icd-libopencl1_*.deb /tmp/ocl
export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
out=${OUT:-/tmp/out}; mkdir -p "$out"
python3 bench/gpu/check_gpu.py "$out" \
  tests/models/mlp_gelu=.devcarry/mlp_gelu.so \
  tests/models/cnn_small=.devcarry/cnn_small.so \
  tests/models/mlp_tanh_sigmoid=.devcarry/mlp_tanh_sigmoid.so

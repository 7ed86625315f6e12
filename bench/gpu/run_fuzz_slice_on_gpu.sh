#!/usr/bin/env bash
# On the lent GPU machine: the fuzz slice packed by scripts/gpu_fuzz_slice.sh
# (carried in .devcarry/), run through NVIDIA's OpenCL driver. Writes
# $OUT/fuzz_gpu_report.json.
set -euo pipefail
mkdir -p /tmp/ocl /tmp/icd /tmp/fuzz
dpkg -x .devcarry/ocl-icd-libopencl1_*.deb /tmp/ocl
export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

out=${OUT:-/tmp/out}; mkdir -p "$out"
for pack in .devcarry/fuzz_*.tar.xz; do
  name=$(basename "$pack" .tar.xz)
  tar -C /tmp/fuzz -xJf "$pack"
  echo "== $name"
  python3 bench/gpu/fuzz_slice_gpu.py "/tmp/fuzz/$name" "$out/$name" --jobs "${AOTC_FUZZ_JOBS:-12}" || status=1
done
exit ${status:-0}

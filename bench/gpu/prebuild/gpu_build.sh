#!/usr/bin/env bash
# On the lent GPU machine: builds the carried OpenCL sources for NVIDIA's
# device with aotc-build-program (--select gpu, options from each source's
# header) and times it; writes the binaries and program keys to $OUT.
# Prepared here (bench/results/2026-12-01-prebuild-h200.txt): .devcarry/ with
# ocl-icd-libopencl1_*.deb (apt-get download), aotc-build-program (from
# build/compiler/tools) and mlp.cl, mv2.cl (aotc compile MODEL
# --device-profile generic-gpu --emit=cl); then copy this script and
# gpu_load.py there and run it through the device tool with carry .devcarry.
# Back here: aotc compile MODEL --device-profile generic-gpu
# --program-binary M.key,M.bin -o .devcarry/M_gpu_pre.so (and without the
# flag .devcarry/M_gpu.so) for gpu_load.py.
set -euo pipefail
source bench/gpu/nvidia_opencl_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu
for m in mlp mv2; do
  s=$(date +%s.%N)
  .devcarry/aotc-build-program --select gpu --source .devcarry/$m.cl --out $OUT/$m.bin --key-out $OUT/$m.key
  e=$(date +%s.%N)
  echo "$m: built in $(awk "BEGIN{print $e - $s}") s, $(stat -c %s $OUT/$m.bin) bytes"
done
cat $OUT/mv2.key

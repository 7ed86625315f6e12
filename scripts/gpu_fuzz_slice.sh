#!/usr/bin/env bash
# Packs differential-fuzzing cases for the lent GPU:
#   scripts/gpu_fuzz_slice.sh [SEED COUNT NAME [--no-pocl]]
# Default: the tests' slice (e2e.fuzz_slice: seed 20261123, 240 graphs) as
# fuzz_slice, run here on PoCL first (each graph's class is recorded). Every
# case is compiled to a model .so; cases, .so files and the PoCL classes go
# to .devcarry/NAME.tar.xz, beside the OpenCL ICD loader package. On the GPU
# machine (carry .devcarry): bash bench/gpu/run_fuzz_slice_on_gpu.sh runs
# every pack through NVIDIA's OpenCL and compares with ONNX Runtime's
# outputs and with the PoCL classes (bench/gpu/fuzz_slice_gpu.py).
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-20261123}; count=${2:-240}; name=${3:-fuzz_slice}; mode=${4:-}
aotc=build/compiler/tools/aotc
[ -x "$aotc" ] || { echo "build first (scripts/test.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/$name" .devcarry
if [ "$mode" = --no-pocl ]; then
  .venv/bin/python tests/fuzz/run_fuzz.py --aotc "$aotc" --seed "$seed" \
    --count "$count" --keep "$work/$name" --generate-only | tail -1
else
  AOTC_DEVICE=cpu .venv/bin/python tests/fuzz/run_fuzz.py --aotc "$aotc" \
    --seed "$seed" --count "$count" --batch 60 --keep "$work/$name" \
    --results "$work/$name/pocl_results.json" | tail -1
fi
rm -rf "$work/$name/cache"
for d in "$work/$name"/seed*/; do
  case=$(basename "$d")
  AOTC_VERIFY_EACH=1 "$aotc" compile "$d/model.onnx" -o "$work/$name/$case.so" \
    > /dev/null 2>&1 || true
done
(cd .devcarry && ls ocl-icd-libopencl1_*.deb > /dev/null 2>&1 ||
  apt-get download ocl-icd-libopencl1 2> /dev/null)
tar -C "$work" -cJf ".devcarry/$name.tar.xz" "$name"
ls -la ".devcarry/$name.tar.xz"

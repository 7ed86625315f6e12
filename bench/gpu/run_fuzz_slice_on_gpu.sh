#!/usr/bin/env bash
# On the lent GPU machine: the fuzz packs made by scripts/gpu_fuzz_slice.sh
# (carried in .devcarry/), run through NVIDIA's OpenCL driver, then the
# profiler on the model .so files in .devcarry/profile/ (if any; their input
# shapes in .devcarry/profile/shapes.txt, one "file.so:SHAPE" a line).
#   bash bench/gpu/run_fuzz_slice_on_gpu.sh [PACK ...]   (default: every pack)
# Writes $OUT/<pack>/fuzz_gpu_report.json and $OUT/profile.json.
set -euo pipefail
mkdir -p /tmp/fuzz
source "$(dirname "$0")/nvidia_opencl_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

out=${OUT:-/tmp/out}; mkdir -p "$out"
packs=("$@")
if [ ${#packs[@]} -eq 0 ]; then
  for p in .devcarry/fuzz_*.tar.xz; do packs+=("$(basename "$p" .tar.xz)"); done
fi
for name in "${packs[@]}"; do
  tar -C /tmp/fuzz -xJf ".devcarry/$name.tar.xz"
  echo "== $name"
  # AOTC_FUZZ_DEADLINE (epoch seconds): no case starts after it; the rest
  # are listed as not run in the report.
  python3 bench/gpu/fuzz_slice_gpu.py "/tmp/fuzz/$name" "$out/$name" \
    --jobs "${AOTC_FUZZ_JOBS:-12}" --deadline "${AOTC_FUZZ_DEADLINE:-0}" || status=1
  rm -rf "/tmp/fuzz/$name" "$out/$name"/worker* "$out/$name/cache"
done
if [ -f .devcarry/profile/shapes.txt ]; then
  echo "== profile"
  (cd .devcarry/profile && xargs python3 ../../bench/gpu/profile_gpu.py --runs 20 \
     --json "$out/profile.json" < shapes.txt) || status=1
fi
exit ${status:-0}

#!/usr/bin/env bash
# Records the runs of e2e checks on this machine's CPU device for a replay on
# the lent GPU (bench/gpu/replay_records.py, run there by
# bench/gpu/run_replay_on_gpu.sh): each check runs twice, with the kernels
# the default (CPU) profile picks and with --device-profile generic-gpu's.
# Writes .devcarry/records.tar.xz (and the OpenCL ICD loader package); its
# folders are records/cpu and records/gpu.
#   bash bench/gpu/record_checks.sh [check.py ...]   (default: half floats, cumsum)
set -euo pipefail
cd "$(dirname "$0")/../.."
AOTC=${AOTC:-build/compiler/tools/aotc}
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(tests/e2e/check_half_floats.py tests/e2e/check_cumsum.py)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p .devcarry
[ -e .devcarry/ocl-icd-libopencl1_*.deb ] 2>/dev/null || (cd .devcarry && apt-get download ocl-icd-libopencl1)
for profile in cpu gpu; do
  flags=""
  [ $profile = gpu ] && flags="--device-profile generic-gpu"
  for c in "${checks[@]}"; do
    echo "record_checks: $c ($profile profile)"
    AOTC_RECORD_DIR="$work/records/$profile" AOTC_COMPILE_FLAGS="$flags" \
      .venv/bin/python "$c" "$AOTC" | tail -1
  done
done
tar cJf .devcarry/records.tar.xz -C "$work" records
du -h .devcarry/records.tar.xz

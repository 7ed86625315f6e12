#!/usr/bin/env bash
# On the lent GPU machine: replays the runs bench/gpu/record_checks.sh
# recorded here (carry .devcarry: records.tar.xz and the OpenCL ICD loader
# package) on NVIDIA's OpenCL driver. Writes $OUT/replay-{cpu,gpu}.json.
set -euo pipefail
source "$(dirname "$0")/nvidia_opencl_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
out=${OUT:-/tmp/out}; mkdir -p "$out"
rm -rf /tmp/replay && mkdir -p /tmp/replay && tar xJf .devcarry/records.tar.xz -C /tmp/replay
rc=0
for profile in cpu gpu; do
  echo "== kernels of the $profile profile"
  python3 bench/gpu/replay_records.py /tmp/replay/records/$profile --device gpu \
    --json "$out/replay-$profile.json" | grep -v '^ok ' || rc=1
done
exit $rc

#!/usr/bin/env bash
# On the lent GPU machine: replays runs recorded here on NVIDIA's OpenCL
# driver: bench/gpu/record_checks.sh's e2e checks (.devcarry/records.tar.xz,
# the default) or bench/gpu/record_models.py's models (a tarball of record
# folders). Carry the tarball and the OpenCL ICD loader package (.devcarry).
# Every folder in the tarball with a records.jsonl is replayed; writes
# $OUT/replay-<parent>-<folder>.json.
#   bash bench/gpu/run_replay_on_gpu.sh [.devcarry/TARBALL]
set -euo pipefail
source "$(dirname "$0")/nvidia_opencl_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
out=${OUT:-/tmp/out}; mkdir -p "$out"
tarball=${1:-.devcarry/records.tar.xz}
rm -rf /tmp/replay && mkdir -p /tmp/replay && tar xJf "$tarball" -C /tmp/replay
rc=0
for dir in $(find /tmp/replay -name records.jsonl -printf '%h\n' | sort); do
  name=$(basename "$(dirname "$dir")")-$(basename "$dir")  # records-cpu, rec2-gpu, ...
  echo "== $dir"
  python3 bench/gpu/replay_records.py "$dir" --device gpu --json "$out/replay-$name.json" \
    | grep -v '^ok ' || rc=1
done
exit $rc

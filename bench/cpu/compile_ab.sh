#!/usr/bin/env bash
# Compile times of two aotc builds, alternated model by model (this VM's
# load swings within minutes): `aotc compile --time-passes` of every model
# with A, then B, ROUNDS times; one line per compile with the first schedule
# stage, verify and the total in ms.
#
#   bash bench/cpu/compile_ab.sh OLD/aotc NEW/aotc 2 a.onnx b.onnx ...
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 AOTC_A AOTC_B ROUNDS MODEL.onnx..." >&2
  exit 2
fi
a=$1 b=$2 rounds=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "round model build schedule_ms verify_ms total_ms"
for ((r = 1; r <= rounds; ++r)); do
  for m in "$@"; do
    for v in A B; do
      bin=$a
      [ "$v" = B ] && bin=$b
      t=$("$bin" compile "$m" -o "$out/m.so" --time-passes 2>&1) || {
        echo "$bin failed on $m" >&2
        echo "$t" >&2
        exit 1
      }
      sched=$(echo "$t" | awk '$1 == "schedule" {print $2; exit}')
      ver=$(echo "$t" | awk '$1 == "verify" {print $2}')
      tot=$(echo "$t" | awk '$1 == "total" {print $2}')
      echo "$r $m $v $sched $ver $tot"
    done
  done
done

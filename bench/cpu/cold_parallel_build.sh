#!/usr/bin/env bash
# Cold first load of aotc models (process start to first result, empty aotc
# and PoCL caches) with the program built in parts by AOTC_BUILD_JOBS
# processes at once (runtime/src/program_split.h) against built whole
# (AOTC_BUILD_JOBS=1), and for each compile variant (aotc compile flags:
# `--variants "shared=;own=--no-share-kernels"` compares one OpenCL function
# per kernel with kernels of the same code sharing one,
# codegen/opencl/share_kernels.h), alternated, ROUNDS rounds per model.
# Each line also says how many OpenCL functions the variant's program has.
#
#   AOTC=build/compiler/tools/aotc bash bench/cpu/cold_parallel_build.sh \
#       [--jobs "2 1"] [--rounds 2] [--variants "NAME=FLAGS;..."] [MODEL ...]
#       (default: resnet18 mobilenet_v2 resnet50 bert_base from bench/models;
#       one variant, "default=")
set -euo pipefail
cd "$(dirname "$0")/../.."
aotc=${AOTC:-build/compiler/tools/aotc}
jobs="2 1"
rounds=2
variants="default="
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || models=(resnet18 mobilenet_v2 resnet50 bert_base)
IFS=';' read -r -a variant_list <<< "$variants"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for m in "${models[@]}"; do
  for v in "${variant_list[@]}"; do
    name=${v%%=*}; flags=${v#*=}
    # shellcheck disable=SC2086
    "$aotc" compile "bench/models/$m.onnx" --vector-lanes host $flags -o "$work/$m-$name.so" >/dev/null 2>&1
    # shellcheck disable=SC2086
    "$aotc" compile "bench/models/$m.onnx" --vector-lanes host $flags --emit cl 2>/dev/null |
      grep -c '^__kernel void ' > "$work/$m-$name.functions"
  done
  for round in $(seq "$rounds"); do
    for v in "${variant_list[@]}"; do
      name=${v%%=*}
      so=$work/$m-$name.so
      for j in $jobs; do
        d=$(mktemp -d -p "$work"); mkdir -p "$d/a" "$d/p"
        s=$(date +%s.%N)
        status=ok
        AOTC_BUILD_JOBS=$j AOTC_CACHE_DIR=$d/a POCL_CACHE_DIR=$d/p \
          "$aotc" run "$so" --dim batch=1 --repeat 1 >/dev/null 2>&1 || status=FAILED
        e=$(date +%s.%N)
        printf '%s variant=%s functions=%s round=%s jobs=%s cold_s=%.2f entries=%s %s\n' "$m" \
          "$name" "$(cat "$work/$m-$name.functions")" "$round" "$j" \
          "$(echo "$e - $s" | bc)" "$(ls "$d/a" | wc -l)" "$status"
        rm -rf "$d"
      done
    done
  done
done

#!/usr/bin/env bash
# Builds the .so variants of a GEMM kernel-configuration sweep for
# bench/gpu/sweep_configs.py into .devcarry/sweep/ (weightless, generic-gpu
# profile), and prints the command that times them on the GPU machine.
#
# Usage: AOTC=build/compiler/tools/aotc bash bench/gpu/build_sweep.sh
# Variants: the heuristic's own choice ("auto"), the register tile of stop 20
# (8 x 4 float4 per work-item, no local memory), and work-group tiles
# group_m x group_n x tm x tn x bk [x split_k] (compiler/schedule/local_tile.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
AOTC=${AOTC:-build/compiler/tools/aotc}
OUT=.devcarry/sweep
rm -rf "$OUT" && mkdir -p "$OUT"
SHAPES=${SHAPES:-"gemm_8192:8192x8192 gemm_4096:4096x4096 gemm_2048:2048x2048 gemm_1024:1024x1024 gemm_128x3072x768:128x768 gemm_128x768x3072:128x3072 gemm_128x768x768:128x768"}
TILES=${TILES:-"16x16x8x8x16 16x16x8x8x8 16x16x8x4x16 16x16x4x8x16 16x16x4x4x16 8x16x8x8x16 16x8x8x8x16 8x8x8x8x16 8x8x4x4x16 8x8x4x4x8"}
cases=()
for s in $SHAPES; do
  model=${s%%:*}
  shape=${s#*:}
  onnx=bench/gpu/models/$model.onnx
  "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu -o "$OUT/$model.auto.so"
  cases+=("$model.auto=$OUT/$model.auto.so:$shape")
  echo '{"kernels": {"k0_Y": {"m": 0, "n": 1, "tm": 8, "tn": 4, "lanes": 4}}}' > "$OUT/c.json"
  "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu --kernel-configs "$OUT/c.json" \
    -o "$OUT/$model.reg8x4.so"
  cases+=("$model.reg8x4=$OUT/$model.reg8x4.so:$shape")
  for g in $TILES; do
    IFS=x read -r gm gn tm tn bk split <<< "$g"
    echo "{\"kernels\": {\"k0_Y\": {\"m\": 0, \"n\": 1, \"tm\": $tm, \"tn\": $tn, \"lanes\": 4, \"group_m\": $gm, \"group_n\": $gn, \"bk\": $bk, \"split_k\": ${split:-1}}}}" > "$OUT/c.json"
    "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu --kernel-configs "$OUT/c.json" \
      -o "$OUT/$model.g$g.so"
    cases+=("$model.g$g=$OUT/$model.g$g.so:$shape")
  done
done
rm -f "$OUT/c.json"
echo "${cases[@]}" > "$OUT/cases.txt"
echo "built $(ls "$OUT"/*.so | wc -l) variants ($(du -sh "$OUT" | cut -f1)); on the GPU machine:"
echo "  source bench/gpu/nvidia_opencl_env.sh && python3 bench/gpu/sweep_configs.py --runs 10 \$(cat $OUT/cases.txt)"

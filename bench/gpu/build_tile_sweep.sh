#!/usr/bin/env bash
# Builds the .so variants of a work-group tile sweep over whole networks, for
# bench/gpu/sweep_network_configs.py, into .devcarry/tilesweep/ (weightless, generic-gpu profile),
# and prints the command that times them on the GPU machine.
#
# Usage: AOTC=build/compiler/tools/aotc bash bench/gpu/build_tile_sweep.sh
# Variants of each network in NETS: VARIANTS, words NAME:FLAGS (FLAGS comma-separated, may be
# empty); by default "nosv" (--no-size-variants: every kernel planned at batch 1) and "sv" (the
# default build: size variants, compiler/schedule/size_variants.cpp). E.g.
# VARIANTS="split: nosplit:--no-split-k" compares the default with deep GEMMs unsplit. Of each network in
# TILE_NETS also "tGMxGNxTMxTNxBKxSPLIT" (with --no-size-variants): every contraction that the
# heuristic gives a work-group tile (a GEMM, a batched MatMul, a convolution's GEMM view) gets
# that tile instead, on the same dimensions m and n; time those at the batch they are for.
set -euo pipefail
cd "$(dirname "$0")/../.."
AOTC=${AOTC:-build/compiler/tools/aotc}
OUT=.devcarry/tilesweep
rm -rf "$OUT" && mkdir -p "$OUT"
NETS=${NETS:-"mlp resnet18 resnet50 mobilenet_v2 bert_base"}
TILE_NETS=${TILE_NETS-"resnet50 bert_base"}
VARIANTS=${VARIANTS:-"nosv:--no-size-variants sv:"}
TILES=${TILES:-"8x8x4x4x16x1 8x8x4x4x16x2 8x8x8x8x16x1 8x8x8x8x16x2 16x8x8x8x16x1 16x16x4x4x16x1
  8x16x4x4x16x1 8x16x4x4x16x2 16x8x4x8x16x1"}
declare -A SHAPE=([mlp]=1024 [resnet18]=3x224x224 [resnet50]=3x224x224 [mobilenet_v2]=3x224x224
                  [bert_base]=128i [gpt2]=128i)
cases=()
tile_cases=()
for net in $NETS $TILE_NETS; do
  onnx=bench/gpu/models/$net.onnx
  [ -e "$onnx" ] || /usr/bin/python3 bench/gpu/export_gpu_models.py --out bench/gpu/models "$net"
done
for net in $NETS; do
  onnx=bench/gpu/models/$net.onnx
  for variant in $VARIANTS; do
    name=${variant%%:*}
    flags=${variant#*:}
    # shellcheck disable=SC2086
    "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu ${flags//,/ } \
      -o "$OUT/$net.$name.so"
    cases+=("$net.$name=$OUT/$net.$name.so:${SHAPE[$net]}")
  done
done
for net in $TILE_NETS; do
  onnx=bench/gpu/models/$net.onnx
  "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu --no-size-variants \
    --emit=kernel-configs > "$OUT/$net.base.json"
  tile_cases+=("${net}T.nosv=$OUT/$net.nosv.so:${SHAPE[$net]}")
  for v in $TILES; do
    python3 - "$OUT/$net.base.json" "$v" > "$OUT/c.json" <<'PY'
import json, sys
configs = json.load(open(sys.argv[1]))["kernels"]
gm, gn, tm, tn, bk, split = (int(x) for x in sys.argv[2].split("x"))
out = {}
for k, c in configs.items():
    if c["template"] != "contraction" or not c.get("group_m"):
        continue
    out[k] = {"template": "contraction", "m": c["m"], "n": c["n"], "tm": tm, "tn": tn, "lanes": 4,
              "group_m": gm, "group_n": gn, "bk": bk}
    if c.get("gemm_view"):
        out[k]["gemm_view"] = True
    if split > 1:
        out[k]["split_k"] = split
json.dump({"kernels": out}, sys.stdout)
PY
    "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu --no-size-variants \
      --kernel-configs "$OUT/c.json" -o "$OUT/$net.t$v.so"
    tile_cases+=("${net}T.t$v=$OUT/$net.t$v.so:${SHAPE[$net]}")
  done
done
rm -f "$OUT/c.json"
echo "${cases[@]}" > "$OUT/cases.txt"
echo "${tile_cases[@]}" > "$OUT/tile_cases.txt"
echo "built $(ls "$OUT"/*.so | wc -l) variants ($(du -sh "$OUT" | cut -f1)); on the GPU machine:"
echo "  source bench/gpu/nvidia_opencl_env.sh && python3 bench/gpu/sweep_network_configs.py --runs 20 \$(cat $OUT/cases.txt)"
echo "  python3 bench/gpu/sweep_network_configs.py --runs 20 --batches 8 \$(cat $OUT/tile_cases.txt)"

#!/usr/bin/env bash
# Builds the .so variants of a convolution configuration sweep over whole networks for
# bench/gpu/sweep_network_configs.py into .devcarry/viewsweep/ (weightless, generic-gpu
# profile), and prints the command that times them on the GPU machine.
#
# Usage: AOTC=build/compiler/tools/aotc bash bench/gpu/build_view_sweep.sh
# Variants of each network: "auto" (the heuristic's configurations), "reg" (every convolution
# with a window, or that the heuristic gives a GEMM view, as the register tile of 1 x 4 float4
# columns that stop 22 gave the small maps), and "vGMxGNxTMxTNxBKxSPLIT": every such
# convolution as that work-group tile on its GEMM view (compiler/schedule/gemm_view.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
AOTC=${AOTC:-build/compiler/tools/aotc}
OUT=.devcarry/viewsweep
rm -rf "$OUT" && mkdir -p "$OUT"
NETS=${NETS:-"resnet18 resnet50"}
TILES=${TILES:-"8x8x4x4x16x1 8x8x4x4x16x2 8x8x4x4x16x4 8x8x8x8x16x1 8x8x8x8x16x2 16x8x8x8x16x1"}
cases=()
for net in $NETS; do
  onnx=bench/gpu/models/$net.onnx
  [ -e "$onnx" ] || /usr/bin/python3 bench/gpu/export_gpu_models.py --out bench/gpu/models "$net"
  "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu -o "$OUT/$net.auto.so"
  cases+=("$net.auto=$OUT/$net.auto.so:3x224x224")
  "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu --emit=kernel-configs \
    > "$OUT/$net.auto.json"
  for v in reg $TILES; do
    python3 - "$OUT/$net.auto.json" "$v" > "$OUT/c.json" <<'EOF'
import json, sys
configs = json.load(open(sys.argv[1]))["kernels"]
v = sys.argv[2]
out = {}
for k, c in configs.items():
    # A convolution over [batch, co, h, w] tiled along co and w: a register tile with rows
    # (the large maps) or a GEMM view; not the 1 x 1 convolutions' plain work-group tiles.
    if c["template"] != "contraction" or c["m"] != 1 or c["n"] != 3:
        continue
    if "group_m" in c and not c.get("gemm_view"):
        continue
    if v == "reg":
        out[k] = {"template": "contraction", "m": -1, "n": 3, "tm": 1, "tn": 4, "lanes": 4}
        continue
    gm, gn, tm, tn, bk, split = (int(x) for x in v.split("x"))
    out[k] = {"template": "contraction", "m": 1, "n": 3, "tm": tm, "tn": tn, "lanes": 4,
              "group_m": gm, "group_n": gn, "bk": bk, "gemm_view": True}
    if split > 1:
        out[k]["split_k"] = split
json.dump({"kernels": out}, sys.stdout)
EOF
    name=$v; [ "$v" = reg ] || name=v$v
    "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu --kernel-configs "$OUT/c.json" \
      -o "$OUT/$net.$name.so"
    cases+=("$net.$name=$OUT/$net.$name.so:3x224x224")
  done
done
rm -f "$OUT/c.json"
echo "${cases[@]}" > "$OUT/cases.txt"
echo "built $(ls "$OUT"/*.so | wc -l) variants ($(du -sh "$OUT" | cut -f1)); on the GPU machine:"
echo "  source bench/gpu/nvidia_opencl_env.sh && python3 bench/gpu/sweep_network_configs.py --runs 20 \$(cat $OUT/cases.txt)"

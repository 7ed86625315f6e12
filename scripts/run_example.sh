#!/usr/bin/env bash
# The main job on the bundled example model: compile the MLP (Gemm, erf-GELU,
# Softmax; dynamic batch) to a model .so, inspect it, run it on the OpenCL
# device with the bundled input, and load it from a plain C host program.
set -euo pipefail
cd "$(dirname "$0")/.."
aotc=build/compiler/tools/aotc
out=build/examples/mlp_gelu.so
mkdir -p build/examples
echo "== aotc compile (with stage timings)"
"$aotc" compile examples/models/mlp_gelu.onnx -o "$out" --time-passes
echo "== aotc inspect"
"$aotc" inspect "$out"
echo "== aotc run (bundled input, batch 4)"
"$aotc" run "$out" --inputs examples/models/mlp_gelu_input_0.pb --repeat 50
echo "== C host program (dlopen + C ABI), batch 7"
build/examples/aotc_example_run_model_c "$out" --dim batch=7

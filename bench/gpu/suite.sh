#!/usr/bin/env bash
# Builds the GPU suite's model .so files here (bench/gpu/suite.py runs them on the lent GPU
# machine through bench/gpu/run_suite.sh). The networks are exported with their state_dict
# initializer names (export_models.py --keep-names) and every model is compiled weightless for
# the generic-gpu profile, so that all of them travel in a few MiB; the weights are made there
# from the same seeds and given by name.
#   bash bench/gpu/suite.sh            # all models, into .devcarry/suite/
#   MODELS="mlp gemm_2048" bash bench/gpu/suite.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
AOTC=${AOTC:-build/compiler/tools/aotc}
models=${MODELS:-"gemm_512 gemm_1024 gemm_2048 gemm_4096 gemm_8192 gemm_128x3072x768 gemm_128x768x3072
  gemm_128x768x768 conv_r50_stem conv_r50_3x3 conv_r50_1x1 conv_mv2_dw112 conv_mv2_dw14 mlp resnet18
  resnet50 mobilenet_v2 bert_base gpt2"}
mkdir -p bench/gpu/models .devcarry/suite
[ -e .devcarry/ocl-icd-libopencl1_*.deb ] 2>/dev/null || (cd .devcarry && apt-get download ocl-icd-libopencl1)
times=.devcarry/suite/compile.json.tmp
echo "{" > "$times"
sep=""
for m in $models; do
  onnx=bench/gpu/models/$m.onnx
  [ -e "$onnx" ] || /usr/bin/python3 bench/gpu/export_gpu_models.py --out bench/gpu/models "$m"
  t0=$(date +%s.%N)
  # The networks and convolutions declare the batches a server would run (1 to 64): their
  # kernels' index math then provably fits in int, which GPU profiles print
  # (codegen/opencl/index_width.h; the default 0..65536 does not prove it for most).
  case $m in gemm_*) dim=() ;; *) dim=(--dim batch=1:64) ;; esac
  "$AOTC" compile "$onnx" --weightless --device-profile generic-gpu "${dim[@]}" -o .devcarry/suite/$m.so
  t1=$(date +%s.%N)
  printf '%s"%s": %.3f\n' "$sep" "$m" "$(echo "$t1 - $t0" | bc)" >> "$times"
  sep=","
done
echo "}" >> "$times"
mv "$times" .devcarry/suite/compile.json  # aotc compile seconds here (2-core VM), per model
du -ch .devcarry/suite/*.so .devcarry/ocl-icd-libopencl1_*.deb | tail -1

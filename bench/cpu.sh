#!/usr/bin/env bash
# The CPU benchmark suite (issue 6): aotc on PoCL beside ONNX Runtime and IREE,
# 2 threads each, on GEMMs, single convolutions, an MLP, ResNet-18/50,
# MobileNetV2, BERT-base and GPT-2 at batch 1 and 8. Writes
# bench/results/DATE-cpu-HOST.{json,md,png} and the CPU section of
# docs/PERFORMANCE.md. Options: bench/cpu/README.md (or --help).
#
#   bash bench/cpu.sh                 # the full suite (about 20-25 minutes here)
#   bash bench/cpu.sh --quick         # a smoke run: 2 small models, batch 1
#   AOTC=/path/to/aotc bash bench/cpu.sh --models resnet18,gemm --batches 1
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bench_env.sh
cmd="${AOTC:+AOTC=$AOTC }bash bench/cpu.sh${*:+ $*}"
exec .venv-bench/bin/python bench/cpu/run.py --command "$cmd" "$@"

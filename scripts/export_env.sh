#!/usr/bin/env bash
# Makes .venv-export/: the current PyTorch, torchvision, transformers and the
# ONNX exporter (scripts/export-requirements.txt), for
# scripts/export_current_models.py. About 6 GB; CI never uses it. Fast when
# already up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv_lib.sh
req=scripts/export-requirements.txt
venv=.venv-export
check='import torch, torchvision, transformers, onnxscript, onnx, onnxruntime'
venv_current "$venv" "$req" "$check" && exit 0
venv_create "$venv" "$req" "${AOTC_PYTHON:-python3}"
"$venv/bin/python" -c "$check; print('export_env: torch', torch.__version__)"
venv_stamp "$venv" "$req"

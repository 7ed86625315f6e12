#!/usr/bin/env bash
# Makes .venv-export/: the current PyTorch, torchvision, transformers and the
# ONNX exporter (scripts/export-requirements.txt), for
# scripts/export_current_models.py. About 6 GB; CI never uses it. Fast when
# already up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
req=scripts/export-requirements.txt
venv=.venv-export
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
check='import torch, torchvision, transformers, onnxscript, onnx, onnxruntime'
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  exit 0
fi
python=${AOTC_PYTHON:-python3}
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
"$venv/bin/python" -c "$check; print('export_env: torch', torch.__version__)"
echo "$want" > "$stamp"

#!/usr/bin/env bash
# Creates .venv/ with the Python oracle of the tests (ONNX, ONNX Runtime,
# NumPy), pinned and hash-checked in scripts/python-requirements.txt. Fast
# when already up to date. No torch: the models and references CI needs are
# checked in or generated with ONNX Runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv_lib.sh
req=scripts/python-requirements.txt
venv=.venv
venv_current "$venv" "$req" 'import onnx, onnxruntime, numpy' && exit 0
python=${AOTC_PYTHON:-python3}
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' || {
  echo "python_env: the pinned wheels are for CPython 3.11; set AOTC_PYTHON" >&2; exit 1; }
venv_create "$venv" "$req" "$python" --no-deps --require-hashes
"$venv/bin/python" -c 'import onnx, onnxruntime, numpy; print("python_env: onnx", onnx.__version__, "onnxruntime", onnxruntime.__version__, "numpy", numpy.__version__)'
venv_stamp "$venv" "$req"

#!/usr/bin/env bash
# Makes the environment of the CPU benchmark (bench/cpu.sh); CI never uses it.
#  - Debian's PyTorch and torchvision (with Debian's ONNX 1.12) for
#    /usr/bin/python3, used only to export the benchmark models to ONNX;
#  - .venv-bench/: ONNX Runtime, IREE (iree-import-onnx, iree-compile, the
#    runtime) and matplotlib, pinned and hash-checked in
#    bench/cpu/requirements.txt.
# Fast when already up to date. Needs root (or the packages already there) for
# apt-get, and PyPI for the wheels.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(python3-torch python3-torchvision python3-onnx python3-numpy gcc)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench_env: missing Debian packages: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "bench_env: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
/usr/bin/python3 -c 'import torch, torchvision, onnx' || {
  echo "bench_env: /usr/bin/python3 cannot import torch, torchvision and onnx (apt-get install -y ${debs[*]})" >&2; exit 1; }

source scripts/venv_lib.sh
req=bench/cpu/requirements.txt
venv=.venv-bench
check='import onnx, onnxruntime, numpy, matplotlib, iree.compiler, iree.runtime'
venv_current "$venv" "$req" "$check" && exit 0
python=${AOTC_PYTHON:-python3}
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' || {
  echo "bench_env: the pinned wheels are for CPython 3.11; set AOTC_PYTHON to a python3.11" >&2; exit 1; }
venv_create "$venv" "$req" "$python" --no-deps --require-hashes
"$venv/bin/python" -c "$check"
test -x "$venv/bin/iree-import-onnx" && test -x "$venv/bin/iree-compile" || {
  echo "bench_env: $venv lacks iree-import-onnx or iree-compile" >&2; exit 1; }
"$venv/bin/python" -c 'import onnxruntime, iree.compiler.version as v; print("bench_env: onnxruntime", onnxruntime.__version__, "iree", v.VERSION if hasattr(v, "VERSION") else "?")' 2>/dev/null || true
venv_stamp "$venv" "$req"

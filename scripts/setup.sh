#!/usr/bin/env bash
# Installs every Debian package aotc needs on a fresh Debian 12 machine, then configures and builds.
# Usage: scripts/setup.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  # build
  cmake ninja-build ccache g++ pkg-config
  # in-process toolchain: clang + lld libraries (14), LLVM for object emission, FileCheck
  llvm-14-dev libclang-14-dev libclang-cpp14-dev clang-14 liblld-14-dev libpolly-14-dev lld-14 lld llvm-14-tools
  # ONNX frontend: Debian's protobuf; ONNX itself is built from its pinned
  # source release by scripts/build_onnx.sh (Debian's libonnx is 1.12)
  libprotobuf-dev protobuf-compiler curl
  # OpenCL: headers, ICD loader, PoCL CPU device
  opencl-headers ocl-icd-opencl-dev ocl-icd-libopencl1 pocl-opencl-icd clinfo
  # libraries
  libfmt-dev libcli11-dev nlohmann-json3-dev libzip-dev zlib1g-dev
  # tests
  libgtest-dev libgmock-dev googletest
  # test tooling (readelf) and the Python oracle (scripts/python_env.sh)
  binutils python3 python3-numpy python3-venv
  # sanitizer and libFuzzer runtimes of clang 14 (scripts/ci_extra.sh)
  libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The ONNX C++ libraries and node tests of a current release, built once
# into a cache outside build/ (scripts/build_onnx.sh).
bash scripts/build_onnx.sh > /dev/null

# Python oracle of the tests (ONNX Runtime), pinned and hash-checked.
bash scripts/python_env.sh

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build build
fi

#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite: unit tests (GoogleTest),
# FileCheck tests, end-to-end tests on the OpenCL device, and the ONNX backend
# node-test conformance run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build
ctest --test-dir build --output-on-failure -j2 "$@"

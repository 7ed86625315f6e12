#!/usr/bin/env bash
# Builds the ONNX C++ libraries (onnx, onnx_proto) of a pinned release from
# ONNX's source distribution on PyPI, against Debian's protobuf, into a cached
# prefix outside build/ keyed by version and archive hash, so a rebuild or a
# second CI run costs nothing. The same archive's backend node tests are
# copied into the prefix (share/onnx/backend-test/node) for the conformance
# suite. Prints the prefix on its last line.
#
#   bash scripts/build_onnx.sh          # build if missing, print the prefix
#   AOTC_DEPS_DIR=/somewhere bash scripts/build_onnx.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ONNX_VERSION=1.20.1
ONNX_SHA256=ded16de1df563d51fbc1ad885f2a426f814039d8b5f4feb77febe09c0295ad67
ONNX_URL=https://files.pythonhosted.org/packages/3b/8a/335c03a8683a88a32f9a6bb98899ea6df241a41df64b37b9696772414794/onnx-$ONNX_VERSION.tar.gz

deps=${AOTC_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aotc-deps}
prefix=$deps/onnx-$ONNX_VERSION-${ONNX_SHA256:0:12}
if [ -f "$prefix/.complete" ]; then
  echo "$prefix"
  exit 0
fi
mkdir -p "$deps"
work=$(mktemp -d "$deps/onnx-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The archive, checked against its pinned hash.
archive=$deps/onnx-$ONNX_VERSION.tar.gz
if [ ! -f "$archive" ] || ! echo "$ONNX_SHA256  $archive" | sha256sum -c --status; then
  echo "build_onnx: downloading onnx $ONNX_VERSION source" >&2
  curl -fsSL --retry 3 -o "$work/onnx.tar.gz" "$ONNX_URL"
  echo "$ONNX_SHA256  $work/onnx.tar.gz" | sha256sum -c --status || {
    echo "build_onnx: onnx-$ONNX_VERSION.tar.gz does not match its pinned SHA-256" >&2; exit 1; }
  mv "$work/onnx.tar.gz" "$archive"
fi
tar -xzf "$archive" -C "$work"
src=$work/onnx-$ONNX_VERSION

# CMake >= 3.26 (ONNX's minimum), from PyPI when Debian's is older.
cmake=cmake
if ! cmake --version | awk 'NR==1{split($3,v,"."); exit !(v[1]>3 || (v[1]==3 && v[2]>=26))}'; then
  req=scripts/onnx-build-requirements.txt
  tools=$deps/cmake-$(sha256sum "$req" | cut -c1-12)
  if [ ! -x "$tools/bin/cmake" ]; then
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r "$req"
  fi
  cmake=$tools/bin/cmake
fi

echo "build_onnx: building onnx $ONNX_VERSION into $prefix (a few minutes, once)" >&2
"$cmake" -S "$src" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DBUILD_SHARED_LIBS=OFF \
  -DONNX_ML=ON \
  -DONNX_NAMESPACE=onnx \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON \
  -DONNX_BUILD_PYTHON=OFF \
  -DONNX_BUILD_TESTS=OFF \
  -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_WERROR=OFF \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} \
  > "$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 1; }
"$cmake" --build "$work/build" > "$work/build.log" 2>&1 || { tail -n 30 "$work/build.log" >&2; exit 1; }
rm -rf "$prefix"
"$cmake" --install "$work/build" > /dev/null
mkdir -p "$prefix/share/onnx/backend-test"
cp -r "$src/onnx/backend/test/data/node" "$prefix/share/onnx/backend-test/node"
echo "$ONNX_VERSION $ONNX_SHA256" > "$prefix/.complete"
echo "$prefix"

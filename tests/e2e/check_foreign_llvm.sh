#!/usr/bin/env bash
# A host that has loaded another LLVM than PoCL's (issue 8 item 7,
# runtime/src/program_builder.h): PoCL's in-process compiler would crash it
# (SIGSEGV in clBuildProgram, from weak template instances that bind to the
# first LLVM loaded), so the runtime builds the program in a child process
# (aotc-build-program) and loads the binary. Checked with the C example host
# and LD_PRELOAD of a second libLLVM, each time with empty caches:
#  - with the builder: the outputs equal a plain run's, and the binary is cached;
#  - then without the builder: loads from that cache;
#  - the builder missing, or failing, or crashing: a clean error, never a crash;
#  - AOTC_BUILD_OUT_OF_PROCESS=1 without a second LLVM: the same outputs.
#  - a .so built with --prebuild cpu needs no builder: it loads the binary
#    embedded for this device, with the same outputs.
# Usage: check_foreign_llvm.sh AOTC RUN_MODEL_C BUILDER MODEL.onnx
set -uo pipefail
aotc=$1 host=$2 builder=$3 onnx=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

pocl=$(ls /usr/lib/*/libpocl.so.2 2>/dev/null | head -1)
[ -n "$pocl" ] || fail "PoCL's library not found"
pocl_llvm=$(ldd "$pocl" | sed -n 's/.*\(libLLVM[^ ]*\) => \([^ ]*\).*/\1 \2/p' | head -1)
pocl_real=$(readlink -f "${pocl_llvm#* }")
pocl_llvm=${pocl_llvm%% *}
other=""
for lib in /usr/lib/*/libLLVM-*.so.1 /usr/lib/llvm-*/lib/libLLVM-*.so.1; do
  # Another file than PoCL's (not a second name of the same library).
  [ -e "$lib" ] && [ "$(readlink -f "$lib")" != "$pocl_real" ] && { other=$lib; break; }
done
[ -n "$other" ] || fail "no libLLVM other than PoCL's ($pocl_llvm) to load (scripts/setup.sh installs LLVM 14)"
echo "PoCL links $pocl_llvm; the host preloads $other"

"$aotc" compile "$onnx" -o "$tmp/model.so" >/dev/null || fail "compile"
model=$tmp/model.so
# The second LLVM goes in front of whatever the caller preloads (the ASan run
# of scripts/ci_extra.sh preloads the OpenCL ICD loader for LeakSanitizer).
preload="$other${LD_PRELOAD:+:$LD_PRELOAD}"
run() {  # run NAME [ENV...]: the host on fresh caches unless NAME's exist
  local name=$1; shift
  mkdir -p "$tmp/$name.aotc" "$tmp/$name.pocl"
  env AOTC_DEVICE=cpu AOTC_CACHE_DIR="$tmp/$name.aotc" POCL_CACHE_DIR="$tmp/$name.pocl" "$@" \
    "$host" "$model" >"$tmp/$name.out" 2>&1
  echo $?
}
outputs() { grep '^output 0' "$tmp/$1.out"; }

[ "$(run plain)" = 0 ] || fail "plain run: $(cat "$tmp/plain.out")"
ref=$(outputs plain)
[ -n "$ref" ] || fail "the plain run printed no outputs"

rc=$(run child AOTC_PROGRAM_BUILDER="$builder" LD_PRELOAD="$preload")
[ "$rc" = 0 ] || fail "with a second LLVM and the builder: exit $rc: $(cat "$tmp/child.out")"
[ "$(outputs child)" = "$ref" ] || fail "outputs differ: $(outputs child) vs $ref"
ls "$tmp/child.aotc"/*.clbin >/dev/null 2>&1 || fail "the child's binary was not cached"

rc=$(run child AOTC_PROGRAM_BUILDER=/nonexistent/aotc-build-program LD_PRELOAD="$preload")
[ "$rc" = 0 ] || fail "from the cache, no builder: exit $rc: $(cat "$tmp/child.out")"
[ "$(outputs child)" = "$ref" ] || fail "outputs from the cache differ"

expect_error() {  # expect_error NAME TEXT ENV...: exit 1 with TEXT in the output
  local name=$1 text=$2; shift 2
  rc=$(run "$name" LD_PRELOAD="$preload" "$@")
  [ "$rc" = 1 ] || fail "$name: exit $rc (want 1): $(cat "$tmp/$name.out")"
  grep -q -- "$text" "$tmp/$name.out" || fail "$name: no '$text' in: $(cat "$tmp/$name.out")"
}
expect_error missing "cannot run '/nonexistent/aotc-build-program'" \
  AOTC_PROGRAM_BUILDER=/nonexistent/aotc-build-program
expect_error notfound "aotc-build-program tool was not found" AOTC_PROGRAM_BUILDER= PATH=/usr/bin:/bin
printf '#!/bin/sh\necho "no such luck" >&2\nexit 1\n' > "$tmp/failing" && chmod +x "$tmp/failing"
expect_error failing "exit code 1); its output:" AOTC_PROGRAM_BUILDER="$tmp/failing"
grep -q "no such luck" "$tmp/failing.out" || fail "the builder's output is not in the error"
printf '#!/bin/sh\nkill -SEGV $$\n' > "$tmp/crashing" && chmod +x "$tmp/crashing"
expect_error crashing "killed by signal 11" AOTC_PROGRAM_BUILDER="$tmp/crashing"
expect_error specialized "POCL_WORK_GROUP_SPECIALIZATION=1" \
  AOTC_PROGRAM_BUILDER="$builder" POCL_WORK_GROUP_SPECIALIZATION=1

"$aotc" compile "$onnx" -o "$tmp/prebuilt.so" --prebuild cpu >/dev/null 2>&1 || fail "compile --prebuild cpu"
model=$tmp/prebuilt.so
rc=$(run embedded AOTC_PROGRAM_BUILDER=/nonexistent/aotc-build-program LD_PRELOAD="$preload")
[ "$rc" = 0 ] || fail "the prebuilt .so with a second LLVM: exit $rc: $(cat "$tmp/embedded.out")"
grep -q "program embedded in the .so" "$tmp/embedded.out" || fail "not from the embedded binary: $(head -1 "$tmp/embedded.out")"
[ "$(outputs embedded)" = "$ref" ] || fail "the prebuilt .so's outputs differ"
model=$tmp/model.so

rc=$(run forced AOTC_PROGRAM_BUILDER="$builder" AOTC_BUILD_OUT_OF_PROCESS=1)
[ "$rc" = 0 ] || fail "AOTC_BUILD_OUT_OF_PROCESS=1: exit $rc: $(cat "$tmp/forced.out")"
[ "$(outputs forced)" = "$ref" ] || fail "AOTC_BUILD_OUT_OF_PROCESS=1: outputs differ"

echo "foreign llvm ok"

#!/usr/bin/env bash
# Packs differential-fuzzing cases for the lent GPU:
#   scripts/gpu_fuzz_slice.sh slice              the tests' slice (e2e.fuzz_slice:
#                                                seed 20261123, 240 graphs), run
#                                                here on PoCL first -> fuzz_slice
#   scripts/gpu_fuzz_slice.sh semantics          tests/fuzz/semantics_cases.py
#                                                (exact), run on PoCL first
#                                                -> fuzz_semantics
#   scripts/gpu_fuzz_slice.sh fresh SEED COUNT NAME [PROFILE [FLAG...]]
#                                                fresh graphs, not run here,
#                                                compiled for PROFILE (default:
#                                                aotc compile's, generic-avx2;
#                                                generic-gpu for the GPU's own
#                                                kernels), FLAGs to the
#                                                generator (--large)
# Every case is compiled to a model .so; cases, .so files and the PoCL
# classes go to .devcarry/NAME.tar.xz, beside the OpenCL ICD loader package.
# On the GPU machine (carry .devcarry): bash bench/gpu/run_fuzz_slice_on_gpu.sh
# runs every pack through NVIDIA's OpenCL and compares with the expected
# outputs and the PoCL classes (bench/gpu/fuzz_slice_gpu.py).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?slice, semantics or fresh}
aotc=build/compiler/tools/aotc
py=.venv/bin/python
[ -x "$aotc" ] || { echo "build first (scripts/test.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$mode" in
slice)
  name=fuzz_slice; mkdir -p "$work/$name"
  AOTC_DEVICE=cpu $py tests/fuzz/run_fuzz.py --aotc "$aotc" --seed 20261123 \
    --count 240 --batch 60 --keep "$work/$name" \
    --results "$work/$name/pocl_results.json" | tail -1 ;;
semantics)
  name=fuzz_semantics; mkdir -p "$work/$name"
  $py tests/fuzz/semantics_cases.py "$work/$name"
  AOTC_DEVICE=cpu "$aotc" test --rtol 0 --atol 0 -v "$work/$name"/seed* |
    $py -c 'import json, sys
r = {l.split()[1].rstrip(":"): ("pass" if l.startswith("PASS") else "WRONG")
     for l in sys.stdin if l.startswith(("PASS ", "FAIL "))}
json.dump(r, open(sys.argv[1], "w")); print(len(r), "cases on PoCL:", sorted(set(r.values())))' \
    "$work/$name/pocl_results.json"
  echo '{"rtol": 0, "atol": 0}' > "$work/$name/tolerance.json" ;;
fresh)
  seed=${2:?seed}; count=${3:?count}; name=${4:?name}; mkdir -p "$work/$name"
  [ -n "${5:-}" ] && profile=(--device-profile "$5")
  $py tests/fuzz/run_fuzz.py --aotc "$aotc" --seed "$seed" --count "$count" \
    --keep "$work/$name" --generate-only "${@:6}" | tail -1 ;;
*) echo "usage: $0 slice | semantics | fresh SEED COUNT NAME [PROFILE [FLAG...]]" >&2; exit 2 ;;
esac
rm -rf "$work/$name/cache"
# A refusal keeps its message (seedN.refused: exit status, then stderr), so
# the report can show that every refusal is a clear, named error; a compiler
# crash (status other than 1) is a failure of the pack.
for d in "$work/$name"/seed*/; do
  c=$(basename "$d")
  rc=0
  AOTC_VERIFY_EACH=1 "$aotc" compile ${profile[@]+"${profile[@]}"} \
    "$d/model.onnx" -o "$work/$name/$c.so" \
    > /dev/null 2> "$work/$name/$c.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    { echo "$rc"; cat "$work/$name/$c.err"; } > "$work/$name/$c.refused"
    [ "$rc" -eq 1 ] || echo "CRASH compiling $c (exit $rc)" >&2
  fi
  rm -f "$work/$name/$c.err"
done
mkdir -p .devcarry
(cd .devcarry && ls ocl-icd-libopencl1_*.deb > /dev/null 2>&1 ||
  apt-get download ocl-icd-libopencl1 2> /dev/null)
tar -C "$work" -cJf ".devcarry/$name.tar.xz" "$name"
ls -la ".devcarry/$name.tar.xz"

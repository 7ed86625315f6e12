#!/usr/bin/env bash
# ONNX backend node tests (every case of the ONNX release aotc builds with,
# scripts/build_onnx.sh) and checks that
#  - the run completes (no crash: `aotc test` prints its summary line),
#  - every case in onnx_node_expected_pass.txt passes (no regression),
#  - every other case fails with a compile-time refusal ("unsupported",
#    "not supported", "must be known at compile time"), never a wrong
#    result or a run-time failure.
# `scripts/conformance_report.py` writes the summary by op to
# docs/CONFORMANCE.md from the same run.
# Usage: check_conformance.sh AOTC NODE_DIR [LOG|-] [AOTC_TEST_FLAG...]
# (the flags compile every case so: --narrow-indices).
set -u
aotc=$1; root=$2
here=$(cd "$(dirname "$0")" && pwd)
keep=0; [ $# -ge 3 ] && [ "$3" != "-" ] && keep=1
if [ $keep = 1 ]; then log=$3; else log=$(mktemp); fi
shift $(( $# >= 3 ? 3 : $# )); flags=("$@")
cases=$(mktemp); trap 'rm -f "$cases"; [ $keep = 1 ] || rm -f "$log"' EXIT
for d in "$root"/*/; do
  [ -f "$d/model.onnx" ] && basename "$d"
done > "$cases"
echo "$(wc -l < "$cases") cases in $root"
"$aotc" test --cases-from "$cases" --root "$root" -v ${flags[@]+"${flags[@]}"} > "$log" 2>&1
summary=$(tail -n 1 "$log")
echo "$summary"
if ! [[ "$summary" =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
  echo "error: aotc test did not finish (crash?)"; tail -n 5 "$log"; exit 1
fi
status=0
missing=$(comm -23 "$here/onnx_node_expected_pass.txt" <(grep '^PASS ' "$log" | awk '{print $2}' | sort))
if [ -n "$missing" ]; then
  echo "error: expected to pass but did not:"; for c in $missing; do grep " $c:" "$log"; done; status=1
fi
# Cases whose stored outputs depart from ONNX's definition (the file says
# why): a wrong output there is expected, anything else is not.
departures=$(grep -v '^#' "$here/onnx_node_departures.txt" | awk 'NF {print $1}' | sort)
departed=$(grep '^FAIL ' "$log" | grep -E ': test_data_set_[0-9]+ output [0-9]+: ' | awk '{sub(":", "", $2); print $2}' | sort | comm -12 - <(echo "$departures"))
[ -z "$departed" ] || echo "known departures of ONNX's stored outputs (onnx_node_departures.txt):" $departed
unexpected=$(grep '^FAIL ' "$log" | grep -v -E ': compile: .*(unsupported|not supported|must be known at compile time)' | grep -v -F -f <(for c in $departed; do echo "FAIL $c: "; done; echo "NO SUCH CASE") || true)
if [ -n "$unexpected" ]; then
  echo "error: failures that are not clean compile-time refusals:"; echo "$unexpected"; status=1
fi
newly=$(comm -13 "$here/onnx_node_expected_pass.txt" <(grep '^PASS ' "$log" | awk '{print $2}' | sort))
[ -z "$newly" ] || echo "note: now passing, add to tests/e2e/onnx_node_expected_pass.txt (and rerun scripts/conformance_report.py):" $newly
echo "$(wc -l < "$here/onnx_node_expected_pass.txt") expected passes checked"
exit $status

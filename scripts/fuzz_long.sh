#!/usr/bin/env bash
# Longer fuzzing than CI does:
#   scripts/fuzz_long.sh diff SECONDS [SEED]   differential fuzzing against
#       ONNX Runtime with fresh seeds; failures are minimized into
#       tests/fuzz/regressions/ (review, then commit them);
#   scripts/fuzz_long.sh libfuzzer SECONDS     each libFuzzer target for
#       SECONDS (crash/leak/timeout artifacts stay in build-fuzz/artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?diff or libfuzzer}; seconds=${2:?seconds}
case "$what" in
diff)
  seed=${3:-$(date +%s)}
  [ -x build/compiler/tools/aotc ] || { echo "build first (scripts/test.sh)"; exit 1; }
  bash scripts/python_env.sh
  exec .venv/bin/python tests/fuzz/run_fuzz.py --aotc build/compiler/tools/aotc \
    --seed "$seed" --count 100000000 --time-budget "$seconds" --batch 50 \
    --minimize --regressions tests/fuzz/regressions
  ;;
libfuzzer)
  AOTC_FUZZ_SECONDS=$seconds exec bash scripts/ci_extra.sh libfuzzer
  ;;
*) echo "usage: $0 diff|libfuzzer SECONDS [SEED]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# ONNX's Attention op (opset 23, expanded through its function body) and the
# backend tests' other attention cases fused into one kernel
# (compiler/lowering/lower_attention.cpp, --fuse-attention) under the GPU
# profile, run on the OpenCL device against ONNX's expected outputs:
#  - every case listed in onnx_attention_fused_cases.txt compiles to exactly
#    one attention kernel (no silent fallback to the unfused ops),
#  - and passes `aotc test`.
# The unfused builds of the same cases run in e2e.onnx_node_conformance.
# Usage: check_onnx_attention.sh AOTC NODE_DIR
set -u
aotc=$1; root=$2
here=$(cd "$(dirname "$0")" && pwd)
list="$here/onnx_attention_fused_cases.txt"
status=0
while read -r c; do
  n=$("$aotc" compile "$root/$c/model.onnx" --device-profile generic-gpu \
        --fuse-attention --emit=kernel-configs 2>&1 | grep -c '"template": "attention"')
  if [ "$n" != 1 ]; then
    echo "error: $c: $n attention kernels, expected 1"; status=1
  fi
done < "$list"
summary=$("$aotc" test --device-profile generic-gpu --fuse-attention --cases-from "$list" \
            --root "$root" 2>&1 | tail -n 1)
echo "$summary"
want="$(wc -l < "$list") passed, 0 failed"
[ "$summary" = "$want" ] || { echo "error: expected '$want'"; status=1; }
[ $status = 0 ] && echo "onnx attention ok"
exit $status

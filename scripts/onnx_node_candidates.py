#!/usr/bin/env python3
"""Lists ONNX backend node-test cases whose models use only ops aotc supports.

Usage: .venv/bin/python scripts/onnx_node_candidates.py [NODE_DIR] > candidates.txt
Reads the op list from ir/ops.def. Needs the onnx package (scripts/python_env.sh).
"""
import os
import re
import sys

import onnx

root = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/libonnx-testdata/data/node"
here = os.path.dirname(os.path.abspath(__file__))
# AOTC_OP(Kind, "OnnxName", Family, minIn, maxIn, minOut, maxOut)
ops = set(re.findall(r'^AOTC_OP\(\w+,\s*"(\w+)"', open(os.path.join(here, "..", "ir", "ops.def")).read(), re.M))
if not ops:
    sys.exit("onnx_node_candidates.py: no op found in ir/ops.def")
for case in sorted(os.listdir(root)):
    path = os.path.join(root, case, "model.onnx")
    if not os.path.exists(path):
        continue
    model = onnx.load(path)
    used = {n.op_type for n in model.graph.node if n.domain in ("", "ai.onnx")}
    foreign = [n for n in model.graph.node if n.domain not in ("", "ai.onnx")]
    if used and used <= ops and not foreign:
        print(case)

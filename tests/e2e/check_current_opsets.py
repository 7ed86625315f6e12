#!/usr/bin/env python3
"""The PyTorch-exported test models as today's exporters write them.

Each model of tests/models (exported by PyTorch at opset 13, with PyTorch's
outputs at batch 1, 7 and 64) is converted by ONNX's version converter to
opset 18 (ReduceMean axes as inputs, Split's num_outputs, ...) and 21, saved
with every initializer in `model.onnx.data`, and run by `aotc test` against
the same PyTorch outputs. Usage:

    check_current_opsets.py AOTC
"""
import os
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import version_converter

aotc = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
models = os.path.join(here, "..", "models")
failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for name in sorted(os.listdir(models)):
        src = os.path.join(models, name)
        if not os.path.exists(os.path.join(src, "model.onnx")):
            continue
        for opset in (18, 21):
            case = os.path.join(tmp, f"{name}_opset{opset}")
            shutil.copytree(src, case)
            model = version_converter.convert_version(
                onnx.load(os.path.join(src, "model.onnx")), opset)
            assert model.opset_import[0].version == opset
            os.remove(os.path.join(case, "model.onnx"))
            onnx.save_model(model, os.path.join(case, "model.onnx"),
                            save_as_external_data=True, all_tensors_to_one_file=True,
                            location="model.onnx.data", size_threshold=0)
            assert os.path.getsize(os.path.join(case, "model.onnx.data")) > 0
            r = subprocess.run([aotc, "test", case, "--rtol", "1e-4", "--atol", "1e-5"],
                               capture_output=True, text=True)
            ok = r.returncode == 0 and "1 passed, 0 failed" in r.stdout
            print(f"{name} opset {opset}: {'ok' if ok else 'FAILED'}")
            if not ok:
                print(r.stdout + r.stderr)
                failed += 1
print("current opsets ok" if failed == 0 else f"{failed} failed")
sys.exit(1 if failed else 0)

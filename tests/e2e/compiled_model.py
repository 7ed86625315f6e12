"""Compiling a test model with aotc and loading it, for the e2e checks."""
import os
import subprocess
import sys

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402


def compile_model(aotc, tmp, name, proto):
    """Saves proto as tmp/name.onnx, compiles it to tmp/name.so and loads that
    on the CPU device. Each model needs a name of its own: dlopen hands back
    the library already loaded from a path. Returns (Model, the .onnx path);
    raises RuntimeError("compile: <aotc's message>") when aotc refuses it."""
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    so = os.path.join(tmp, name + ".so")
    r = subprocess.run([aotc, "compile", path, "-o", so], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compile: {r.stderr.strip()}")
    return Model(so, device="cpu"), path

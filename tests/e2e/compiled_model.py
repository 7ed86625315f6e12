"""Compiling a test model with aotc and loading it, for the e2e checks.

Recording for another device: with AOTC_RECORD_DIR set, every model compiled
here is copied into that folder and each of its runs is saved (inputs and the
outputs it gave on this machine's CPU device) as NAME.K.npz, listed in
records.jsonl; bench/gpu/replay_records.py runs the same .so files on another
OpenCL device (the lent GPU) and compares. AOTC_COMPILE_FLAGS adds aotc
compile flags (e.g. `--device-profile generic-gpu`, to record the kernels a
GPU gets)."""
import json
import os
import shlex
import shutil
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402


class _Recorded:
    """A Model whose runs are saved for replay (AOTC_RECORD_DIR)."""

    def __init__(self, model, name, record_dir, exact):
        self._model, self._name, self._dir, self._exact = model, name, record_dir, exact
        self._runs = 0

    def __getattr__(self, attr):
        return getattr(self._model, attr)

    def run(self, inputs, *args, **kwargs):
        outputs = self._model.run(inputs, *args, **kwargs)
        k = self._runs
        self._runs += 1
        arrays = {f"in{i}": np.asarray(a) for i, a in enumerate(inputs)}
        arrays.update({f"out{i}": np.asarray(a) for i, a in enumerate(outputs)})
        np.savez(os.path.join(self._dir, f"{self._name}.{k}.npz"), **arrays)
        with open(os.path.join(self._dir, "records.jsonl"), "a") as f:
            f.write(json.dumps({"so": self._name + ".so", "data": f"{self._name}.{k}.npz",
                                "inputs": len(inputs), "outputs": len(outputs),
                                "exact": self._exact}) + "\n")
        return outputs


def compile_model(aotc, tmp, name, proto, exact=False):
    """Saves proto as tmp/name.onnx, compiles it to tmp/name.so and loads that
    on the CPU device. Each model needs a name of its own: dlopen hands back
    the library already loaded from a path. Returns (Model, the .onnx path);
    raises RuntimeError("compile: <aotc's message>") when aotc refuses it.
    exact: a replay on another device must give the same bits (casts)."""
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    so = os.path.join(tmp, name + ".so")
    flags = shlex.split(os.environ.get("AOTC_COMPILE_FLAGS", ""))
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compile: {r.stderr.strip()}")
    model = Model(so, device="cpu")
    record_dir = os.environ.get("AOTC_RECORD_DIR")
    if record_dir:
        os.makedirs(record_dir, exist_ok=True)
        shutil.copyfile(so, os.path.join(record_dir, name + ".so"))
        model = _Recorded(model, name, record_dir, exact)
    return model, path


def with_weights(proto, new):
    """A copy of the ModelProto proto whose initializers named in new ({name: array})
    hold those arrays: the model ONNX Runtime checks weight updates against."""
    from onnx import numpy_helper
    p = onnx.ModelProto()
    p.CopyFrom(proto)
    for init in p.graph.initializer:
        if init.name in new:
            init.CopyFrom(numpy_helper.from_array(new[init.name], init.name))
    return p

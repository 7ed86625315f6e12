"""Shared pieces of the per-op checks (check_one_hot.py, check_lrn.py,
check_quantize.py): the kernel variants each model is compiled for, a tally
of models, runs and failures that prints each result and the summary line
CTest matches, compile-time refusals checked by message, and an ONNX Runtime
session where it has a kernel for the model's types."""
import os
import sys
import tempfile

import onnxruntime as ort

from compiled_model import compile_model

# (name, aotc compile flags): the tiled kernels, the naive reference ones,
# and the GPU profile's (run on PoCL).
VARIANTS = [("tiled", ""), ("naive", "--naive-kernels"), ("gpu", "--device-profile generic-gpu")]


def ort_session(proto):
    """ONNX Runtime's session for proto, or None where it lacks a kernel for
    its types or opset."""
    try:
        return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - no ONNX Runtime kernel for these types
        return None


class Tally:
    """Models compiled, runs made and checks failed, for one check script."""

    def __init__(self, aotc, label):
        self.aotc, self.label = aotc, label
        self.tmp = tempfile.mkdtemp()
        self.models = self.runs = self.failed = 0

    def report(self, ok, what):
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}")

    def set_variant(self, flags):
        os.environ["AOTC_COMPILE_FLAGS"] = flags

    def compile(self, name, proto):
        """The loaded model (counted), or None after reporting aotc's refusal."""
        try:
            m, _ = compile_model(self.aotc, self.tmp, name, proto)
        except RuntimeError as e:
            self.report(False, f"{name}: {str(e)[:300]}")
            return None
        self.models += 1
        return m

    def expect_compile_refusal(self, name, proto, fragment):
        try:
            compile_model(self.aotc, self.tmp, name, proto)
            self.report(False, f"{name}: compiled")
        except RuntimeError as e:
            self.report(fragment in str(e), f"{name} refused: {str(e)[:200]}")

    def finish(self):
        print(f"{self.label}: {self.models} models, {self.runs} runs, {self.failed} failed")
        sys.exit(1 if self.failed else 0)

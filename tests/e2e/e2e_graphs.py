"""Shared pieces of the e2e checks (check_pad_channels.py,
check_padded_stores.py, check_fold_program.py, check_winograd.py,
check_in_place.py, check_chain_kernels.py): the count of checks and failures
each script reports, aotc compile as a subprocess, random feeds and the
comparison of a run's outputs with ONNX Runtime's or bit for bit with
another build's, a
small ONNX graph builder whose weights are random initializers, cold
program caches (ColdCaches: check_prebuild.py, check_parallel_build.py), and
device profiles derived from a built-in one (profile_variant:
check_winograd.py, check_register_tile.py, check_row_groups.py)."""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


class ColdCaches:
    """A temporary folder whose PoCL kernel cache this process uses (call it
    before OpenCL starts here: PoCL reads POCL_CACHE_DIR once) and a fresh,
    empty aotc program cache folder per call: each load in it builds or reads
    what the test says, not what an earlier test left. Removed at exit."""

    def __init__(self):
        self.root = tempfile.mkdtemp()
        atexit.register(shutil.rmtree, self.root, True)
        os.environ["POCL_CACHE_DIR"] = os.path.join(self.root, "pocl")
        os.makedirs(os.environ["POCL_CACHE_DIR"])
        self.count = 0

    def __call__(self):
        self.count += 1
        d = os.path.join(self.root, f"cache{self.count}")
        os.makedirs(d)
        return d


class Checks:
    """Counts checks and failures; done() prints the summary and exits."""

    def __init__(self, name):
        self.name, self.count, self.failed = name, 0, 0

    def check(self):
        self.count += 1

    def fail(self, msg):
        self.failed += 1
        print("FAIL", msg)

    def done(self):
        print(f"{self.name}: {self.count} checks, {self.failed} failed")
        if self.failed == 0:
            print(f"{self.name} ok")
        sys.exit(1 if self.failed else 0)


def expect_close(checks, tag, refs, outs, rtol, batch):
    """Each output of a run (outs) against ONNX Runtime's (refs): the same
    shape, every element finite, and the largest difference within rtol of
    max(1, max |ref|); an empty output passes on its shape."""
    for k, (r, o) in enumerate(zip(refs, outs)):
        checks.check()
        if r.shape != o.shape:
            checks.fail(f"{tag}: output {k} shape {o.shape}, expected {r.shape}")
            continue
        if r.size == 0:
            continue
        scale = max(1.0, float(np.abs(r).max()))
        err = float(np.abs(r.astype(np.float64) - o).max()) / scale
        if not np.isfinite(o).all() or err > rtol:
            checks.fail(f"{tag}: output {k} relative error {err:.3g} (batch {batch})")


def expect_same_bits(checks, tag, outs, refs, apart, nonfinite):
    """Each output of a run (outs) bit for bit the same as the build without
    the change under test (refs, described by apart), NaN equal to NaN; with
    nonfinite (inputs holding inf and NaN), a ref output that is all finite
    fails too: that case would test nothing."""
    for k, (a, b) in enumerate(zip(outs, refs)):
        checks.check()
        if nonfinite and np.isfinite(b).all():
            checks.fail(f"{tag}: output {k} all finite: the non-finite case tests nothing")
        if not np.array_equal(a, b, equal_nan=True):
            bad = int((~((a == b) | (np.isnan(a) & np.isnan(b)))).sum())
            checks.fail(f"{tag}: output {k}: {bad} elements differ from {apart}"
                        f" ({'with' if nonfinite else 'without'} inf/NaN)")


def run_aotc(aotc, args):
    """`aotc compile ARGS`; its stdout, or RuntimeError with its stderr."""
    r = subprocess.run([aotc, "compile"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return r.stdout


def profile_variant(aotc, base, path, env=None, **fields):
    """`aotc devices --profile BASE` with \p fields replaced, written as JSON
    to \p path (for `--device-profile PATH`); returns BASE's own profile as
    a dict."""
    r = subprocess.run([aotc, "devices", "--profile", base], capture_output=True, text=True,
                       env=env, check=True)
    profile = json.loads(r.stdout)
    with open(path, "w") as f:
        json.dump(dict(profile, **fields), f)
    return profile


def net_feeds(proto, rng, batches=(1, 3, 0)):
    """One random feed (a list of its input x) per batch size for a Net's model."""
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim[1:]]
    return [[rng.standard_normal([b] + dims).astype(np.float32)] for b in batches]


def compare_ort(checks, tag, m, proto, feeds_list, rtol=2e-4):
    """Runs of aotc model m on each feed against ONNX Runtime on proto."""
    import onnxruntime as ort
    sess = ort.InferenceSession(proto.SerializeToString())
    for f in feeds_list:
        expect_close(checks, tag, sess.run(None, {"x": f[0]}), m.run(f), rtol, f[0].shape[0])


def net_input(proto, batch, rng, nonfinite=False):
    """A random input x [batch, ...] for a Net's model \p proto; with \p nonfinite,
    two +inf, two -inf and two NaN in the first batch element (the others stay
    finite)."""
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim[1:]]
    x = rng.standard_normal([batch] + dims).astype(np.float32)
    if nonfinite and batch > 0:
        flat = x[0].reshape(-1)
        spots = rng.choice(flat.size, size=6, replace=False)
        flat[spots[:2]] = np.inf
        flat[spots[2:4]] = -np.inf
        flat[spots[4:]] = np.nan
    return x


class Net:
    """A small graph over input x [n, cin, h, w]; weights are random
    initializers drawn from rng (1/sqrt(fan-in) scaled, biases x 0.1)."""

    def __init__(self, name, cin, hw, rng, opset=14):
        self.name, self.rng, self.opset = name, rng, opset
        self.nodes, self.inits, self.outputs, self.n = [], [], [], 0
        self.x = h.make_tensor_value_info("x", T.FLOAT, ["n", cin, hw[0], hw[1]])

    def fresh(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def conv(self, x, cin, cout, k=1, group=1, stride=1, bias=True, pads=None):
        w = self.fresh("w")
        self.inits.append(nh.from_array((self.rng.standard_normal((cout, cin // group, k, k)) /
                                         np.sqrt(cin // group * k * k)).astype(np.float32), w))
        ins = [x, w]
        if bias:
            b = self.fresh("b")
            self.inits.append(nh.from_array(self.rng.standard_normal(cout).astype(np.float32) * 0.1, b))
            ins.append(b)
        y = self.fresh("c")
        self.nodes.append(h.make_node("Conv", ins, [y], group=group, strides=[stride, stride],
                                      pads=pads if pads else [k // 2] * 4))
        return y

    def op(self, kind, ins, **attrs):
        y = self.fresh(kind.lower())
        self.nodes.append(h.make_node(kind, ins, [y], **attrs))
        return y

    def clip(self, x):
        if not any(i.name == "lo" for i in self.inits):
            self.inits += [nh.from_array(np.array(0.0, np.float32), "lo"),
                           nh.from_array(np.array(6.0, np.float32), "hi")]
        return self.op("Clip", [x, "lo", "hi"])

    def residual_block(self, x, c):
        """Relu(conv3x3(Relu(conv3x3(x))) + x) over c channels: padded
        copies, two convolutions, a residual sum (check_prebuild.py,
        check_parallel_build.py)."""
        a = self.op("Relu", [self.conv(x, c, c, k=3)])
        return self.op("Relu", [self.op("Add", [self.conv(a, c, c, k=3), x])])

    def inverted_block(self, x, cin, cout, expand, residual):
        """MobileNetV2's inverted residual block: a 1 x 1 expansion, a 3 x 3
        depthwise convolution (both with Clip 0..6), a 1 x 1 projection, and
        the input added where \p residual (check_chain_kernels.py,
        check_persistent_kernels.py)."""
        e = self.clip(self.conv(x, cin, cin * expand))
        d = self.clip(self.conv(e, cin * expand, cin * expand, k=3, group=cin * expand))
        p = self.conv(d, cin * expand, cout)
        return self.op("Add", [p, x]) if residual else p

    def output(self, v):
        self.outputs.append(v)

    def model(self):
        # The outputs' types from ONNX's shape inference.
        opsets = [h.make_opsetid("", self.opset)]
        g = h.make_graph(self.nodes, self.name, [self.x], [], self.inits)
        inferred = onnx.shape_inference.infer_shapes(h.make_model(g, opset_imports=opsets))
        types = {v.name: v for v in inferred.graph.value_info}
        g = h.make_graph(self.nodes, self.name, [self.x], [types[o] for o in self.outputs], self.inits)
        return h.make_model(g, opset_imports=opsets)

#!/usr/bin/env python3
"""Row panels of a large GEMM's activation (compiler/schedule/row_panels.h,
lower_contraction.cpp's rowPanelCopy) against ONNX Runtime.

A MatMul or Gemm by a constant B whose A (a graph input) holds 4 MiB or more
and whose N is 256 or more reads A through a copy [batch..., ceil(M / h), K, h], h the rows
of the register tile the heuristic gives that GEMM. Cases: sizes that leave
a last panel partly past M (1027, 1030 and 1025 rows for tiles of 6 and 8),
odd K and N; a batched MatMul with a symbolic batch (1, 2 and 0); Gemm with
transA (A read by columns), with transB, alpha, beta and a bias; a producer
(Tanh) fused into the copy; a bias and Relu fused into the GEMM's store;
and the cases that must keep A in place: 1 MiB of A, an N of 200, a B that
is not constant, `--no-row-panels`; the first two take panels under
`--row-panels-always` (as the fuzzer compiles with `run_fuzz.py
--row-panels-always`).

A that a kernel of the model computes takes panels from 256 KiB (BERT's
GEMMs over 128 rows a batch): the in-model cases check that a computed A of
384 KiB takes them where the same A as a graph input (also read through a
Reshape, a view of it) and a computed A of 128 KiB do not, and that the copy keeps its producer's fusion: a
LayerNormalization read by the GEMM and by a residual Add stays one row
kernel (its normalization not recomputed in the copy), and a GELU after a
GEMM, in its erf form (BERT's) and its tanh form (GPT-2's), stays that
GEMM's epilogue (not recomputed, one erf or tanh per element, in the
copy); each against ONNX Runtime at batches 1, 2 and 0.

zen5-avx512 reads A in place (DeviceProfile::rowPanels; on Zen 5 the copies
made every such GEMM the same or slower, stop 81): under it every case has
no copy by default and runs so, and the cases that take panels elsewhere are
checked under --row-panels-always as well. Under generic-avx2, generic-avx512
and (with --row-panels-always) zen5-avx512:
  - a copy `<A>_rows` exists exactly where it should (`--emit=lowered`), and
    its panel height h is the rows of the contraction's tile
    (`--emit=kernel-configs`): 6, 6 and 8 where N is a multiple of 64 (6 x
    16, 6 x 64 and 8 x 32 tiles); the other N pick other tiles (4 x 24,
    12 x 8, 12 x 16, 12 x 32), so the cases cover panels of 4, 6, 8 and 12;
  - the copy runs tiles of several K indices (the largest divisor of K up
    to 16: 16 for K 1024, 7 for 1029, none for the prime 1031), each
    reading tm contiguous elements of each of its h rows and storing one
    contiguous tm x h block (a transposing copy; one element a work-item,
    8 scalar loads h rows apart, took 2.2-2.6 times as long, stop 80);
  - every output element is written (the output buffer starts as NaN) and
    matches ONNX Runtime.
Under generic-avx2 the contraction also runs tiles that straddle the panels
(tm 4 and 5 over h = 6, given by --kernel-configs), checked the same way.

Usage: check_row_panels.py AOTC    (prints "row panels ok")
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, expect_close  # noqa: E402
from e2e_graphs import run_aotc as compile_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(78)
tmp = tempfile.mkdtemp()
checks = Checks("row panels")
fail = checks.fail
PROFILES = ["generic-avx2", "generic-avx512", "zen5-avx512"]
# Whether a profile's GEMMs take panels by default (DeviceProfile::rowPanels):
# zen5-avx512's read A in place; there every case must have no copy, and the
# cases that take panels elsewhere are checked under --row-panels-always.
TAKES_PANELS = {"generic-avx2": True, "generic-avx512": True, "zen5-avx512": False}
# The register tile's rows of the GEMMs whose N is a multiple of 64 (a
# heuristic change must keep panels and tiles alike, and shows here).
ROWS_OF = {"producer": {"generic-avx2": 6, "generic-avx512": 6, "zen5-avx512": 8}}
# K of each case that takes panels (copy_tile_rows). gemm_trans_a's copy
# reads A by columns through the last panel's clamped row index (1030 rows
# in panels of 6 or 8), which does not vectorize along the panel: one
# element a work-item (K of 1 here).
K_OF = {"matmul": 1031, "batched": 1024, "gemm_trans_a": 1, "gemm_trans_b": 1024,
        "producer": 1029}


def const(name, shape):
    return nh.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)


def model(nodes, inputs, out_shape, inits):
    g = h.make_graph(nodes, "row_panels",
                     [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, out_shape)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def cases():
    """(name, model, feeds per run, panels expected)."""
    out = []
    mm = h.make_node("MatMul", ["a", "b"], ["mm"])
    # MatMul + bias + Relu: 1027 rows (171 panels of 6 and 1 row, 128 of 8
    # and 3), K 1031, N 300.
    m, k, n = 1027, 1031, 300
    out.append(("matmul", model([mm, h.make_node("Add", ["mm", "c"], ["s"]),
                                 h.make_node("Relu", ["s"], ["y"])],
                                [("a", [m, k])], [m, n], [const("b", [k, n]), const("c", [n])]),
                [{"a": [m, k]}], True))
    # A batched MatMul over a symbolic batch.
    m, k, n = 1030, 1024, 260
    out.append(("batched", model([h.make_node("MatMul", ["a", "b"], ["y"])],
                                 [("a", ["batch", m, k])], ["batch", m, n], [const("b", [k, n])]),
                [{"a": [b, m, k]} for b in (1, 2, 0)], True))
    # Gemm reading A [K, M] transposed, alpha and beta with a bias.
    m, k, n = 1030, 1024, 270
    out.append(("gemm_trans_a", model([h.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1,
                                                   alpha=0.5, beta=2.0)],
                                      [("a", [k, m])], [m, n], [const("b", [k, n]), const("c", [n])]),
                [{"a": [k, m]}], True))
    # Gemm with B [N, K] (transB).
    m, k, n = 1025, 1024, 280
    out.append(("gemm_trans_b", model([h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)],
                                      [("a", [m, k])], [m, n], [const("b", [n, k]), const("c", [n])]),
                [{"a": [m, k]}], True))
    # A producer fused into the copy.
    m, k, n = 1024, 1029, 256
    out.append(("producer", model([h.make_node("Tanh", ["x"], ["a"]),
                                   h.make_node("MatMul", ["a", "b"], ["y"])],
                                  [("x", [m, k])], [m, n], [const("b", [k, n])]),
                [{"x": [m, k]}], True))
    # In place: 1 MiB of A, an N of 200, a B given at run time.
    for name, (m, k, n) in (("small_a", (512, 512, 512)), ("narrow_n", (1100, 1024, 200))):
        out.append((name, model([h.make_node("MatMul", ["a", "b"], ["y"])],
                                [("a", [m, k])], [m, n], [const("b", [k, n])]),
                    [{"a": [m, k]}], False))
    m, k, n = 1027, 1024, 300
    out.append(("input_b", model([h.make_node("MatMul", ["a", "b"], ["y"])],
                                 [("a", [m, k]), ("b", [k, n])], [m, n], []),
                [{"a": [m, k], "b": [k, n]}], False))
    return out


def in_model_cases():
    """(name, model, feeds per run, panels expected, what the kernels must show)."""
    out = []
    # A computed A of 128 x 768 (384 KiB): panels; the same A as an input, as
    # a Reshape of the input (a view: still the input, read in place) and a
    # computed A of 64 x 512 (128 KiB): in place.
    for name, (m, k), producer, panels in (("computed_a", (128, 768), "Tanh", True),
                                           ("input_a", (128, 768), None, False),
                                           ("reshaped_input_a", (128, 768), "Reshape", False),
                                           ("computed_small_a", (64, 512), "Tanh", False)):
        nodes = [h.make_node("MatMul", ["a" if producer else "x", "b"], ["y"])]
        inits = [const("b", [k, 300])]
        x_shape = [m, k]
        if producer == "Tanh":
            nodes.insert(0, h.make_node("Tanh", ["x"], ["a"]))
        elif producer == "Reshape":
            nodes.insert(0, h.make_node("Reshape", ["x", "shape"], ["a"]))
            inits.append(nh.from_array(np.array([m, k], np.int64), "shape"))
            x_shape = [m * k]
        out.append((name, model(nodes, [("x", x_shape)], [m, 300], inits),
                    [{"x": x_shape}], panels, None))
    # LayerNormalization read by the GEMM and by the residual Add after it.
    s, k = 128, 768
    ln = h.make_node("LayerNormalization", ["x", "g", "be"], ["ln"], axis=-1, epsilon=1e-5)
    proto = model([ln, h.make_node("MatMul", ["ln", "b"], ["mm"]),
                   h.make_node("Add", ["mm", "ln"], ["y"])],
                  [("x", ["batch", s, k])], ["batch", s, k],
                  [const("g", [k]), const("be", [k]), const("b", [k, k])])
    out.append(("layernorm", proto, [{"x": [b, s, k]} for b in (1, 2, 0)], True, "row"))

    def gelu_between_gemms(name, gelu, scalars, op):
        """x [batch, 128, 256] -> MatMul + bias (h1) -> \p gelu (nodes from h1
        to a, reading the scalar constants \p scalars) -> MatMul: the GELU,
        computed by \p op, must stay the first GEMM's epilogue."""
        m, k, f = 128, 256, 1024
        nodes = ([h.make_node("MatMul", ["x", "w1"], ["h0"]),
                  h.make_node("Add", ["h0", "c1"], ["h1"])] + gelu
                 + [h.make_node("MatMul", ["a", "w2"], ["y"])])
        inits = [const("w1", [k, f]), const("c1", [f]), const("w2", [f, 300])]
        inits += [nh.from_array(np.array(v, np.float32), n) for n, v in scalars]
        proto = model(nodes, [("x", ["batch", m, k])], ["batch", m, 300], inits)
        out.append((name, proto, [{"x": [b, m, k]} for b in (1, 2, 0)], True, op))

    # The erf form (BERT's).
    gelu_between_gemms("gelu", [
        h.make_node("Div", ["h1", "sqrt2"], ["h2"]), h.make_node("Erf", ["h2"], ["h3"]),
        h.make_node("Add", ["h3", "one"], ["h4"]), h.make_node("Mul", ["h1", "h4"], ["h5"]),
        h.make_node("Mul", ["h5", "half"], ["a"])],
        [("sqrt2", np.sqrt(2.0)), ("one", 1.0), ("half", 0.5)], "Erf")
    # The tanh form (GPT-2's), which reads x = MatMul + bias four times: x is
    # materialized for its many readers and then inlined into the one kernel
    # they end in, which must be the GEMM's, not the copy's.
    gelu_between_gemms("gelu_tanh", [
        h.make_node("Mul", ["h1", "h1"], ["t0"]), h.make_node("Mul", ["t0", "h1"], ["t1"]),
        h.make_node("Mul", ["t1", "c"], ["t2"]), h.make_node("Add", ["h1", "t2"], ["t3"]),
        h.make_node("Mul", ["t3", "s"], ["t4"]), h.make_node("Tanh", ["t4"], ["t5"]),
        h.make_node("Add", ["t5", "one"], ["t6"]), h.make_node("Mul", ["h1", "half"], ["t7"]),
        h.make_node("Mul", ["t7", "t6"], ["a"])],
        [("c", 0.044715), ("s", np.sqrt(2 / np.pi)), ("one", 1.0), ("half", 0.5)], "Tanh")
    return out


def kernels_of(so):
    """{kernel: (ops, template)} from `aotc inspect`."""
    r = subprocess.run([aotc, "inspect", so], capture_output=True, text=True, check=True)
    ops = dict(re.findall(r"^  (k\d+\w*): (\S+) -> ", r.stdout, re.M))
    templates = dict(re.findall(r'^  (k\d+\w*): \{.*"template":"(\w+)"', r.stdout, re.M))
    return {k: (ops.get(k, ""), templates.get(k)) for k in templates}


def model_file(name, proto):
    """\p proto written to a file of the temporary folder; its path."""
    path = os.path.join(tmp, f"{name}.onnx")
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())
    return path


def profile_flags(tag, path, proto, profile, feeds, panels):
    """The flags under which a case is checked on \p profile, and its tag:
    the profile's own, or where the profile takes no panels (checked here:
    no copy, and the runs) but the case does elsewhere, --row-panels-always
    as well."""
    flags = ["--device-profile", profile]
    if TAKES_PANELS[profile]:
        return flags, tag
    checks.check()
    if panel_rows(path, flags):
        fail(f"{tag}: panel copies of {panel_rows(path, flags)} rows under a profile without row panels")
    if not panels:
        return flags, tag
    check_runs(f"{tag} in place", path, proto, flags, feeds)
    return flags + ["--row-panels-always"], f"{tag} --row-panels-always"


def check_in_model():
    for name, proto, feeds, panels, shows in in_model_cases():
        path = model_file(name, proto)
        for profile in PROFILES:
            flags, tag = profile_flags(f"{name} {profile}", path, proto, profile, feeds, panels)
            rows = panel_rows(path, flags)
            checks.check()
            if bool(rows) != panels:
                fail(f"{tag}: panel copies of {rows} rows, expected {'some' if panels else 'none'}")
            so = check_runs(tag, path, proto, flags, feeds)
            if so is None:
                continue
            ks = kernels_of(so)
            if shows == "row":
                # The normalization: one row kernel; the copy reads its output.
                checks.check()
                if [t for _, t in ks.values()].count("row") != 1 or any(
                        k.endswith("_rows") and "ReduceMean" in o for k, (o, _) in ks.items()):
                    fail(f"{tag}: the LayerNormalization is not one row kernel beside its copy: {ks}")
            if shows in ("Erf", "Tanh"):
                # The GELU: the first GEMM's epilogue, not the copy's.
                checks.check()
                where = [t for o, t in ks.values() if shows in o]
                if where != ["contraction"]:
                    fail(f"{tag}: {shows} computed in kernels of templates {where}, "
                         f"not the GEMM's: {ks}")


def panel_rows(path, flags):
    """The panel heights of the copies in --emit=lowered."""
    text = compile_aotc(aotc, [path, "--emit=lowered"] + flags)
    return [int(x) for x in re.findall(r"_rows: f32\[[^\]]*,(\d+)\] = pointwise", text)]


def contraction(path, flags):
    kernels = json.loads(compile_aotc(aotc, [path, "--emit=kernel-configs"] + flags))["kernels"]
    found = [(k, c) for k, c in kernels.items() if c["template"] == "contraction"]
    return found[0] if len(found) == 1 else (None, kernels)


def copy_rows(path, flags):
    """The (m, tm) of each panel copy's kernel: the copy [..., P, K, h]
    runs tiles of tm indices of K (m its dimension), each storing a
    contiguous tm x h block."""
    kernels = json.loads(compile_aotc(aotc, [path, "--emit=kernel-configs"] + flags))["kernels"]
    return [(c.get("m"), c.get("tm")) for k, c in kernels.items()
            if k.endswith("_rows") and c["template"] == "pointwise"]


def copy_tile_rows(k):
    """The K indices a copy's tile should cover: the largest divisor of K
    up to 16 (tile_choice.cpp, pointwiseRows; 1 for a prime K)."""
    return max(d for d in range(1, 17) if k % d == 0)


def check_runs(tag, path, proto, flags, feeds):
    """Compiles \p path with \p flags and checks its runs on \p feeds against
    ONNX Runtime; the .so's path (None where it did not compile)."""
    # A path of its own: dlopen returns a library loaded from the same path.
    so = os.path.join(tmp, f"m{checks.count}.so")
    try:
        compile_aotc(aotc, [path, "-o", so] + flags)
    except RuntimeError as e:
        fail(f"{tag}: {e}")
        return None
    m = Model(so, device="cpu")
    sess = ort.InferenceSession(proto.SerializeToString())
    for shapes in feeds:
        inputs = {name: rng.standard_normal(s).astype(np.float32) for name, s in shapes.items()}
        ref = sess.run(None, inputs)[0]
        # The output buffer starts as NaN: an element not written stays so.
        buf = np.full(max(ref.nbytes, 1), 0xFF, dtype=np.uint8)
        got = m.run([inputs[i.name] for i in proto.graph.input], out_buffers=[buf])[0]
        # expect_close names the feed as its "batch": the input shapes.
        expect_close(checks, tag, [ref], [got], 2e-4, shapes)
    return so


def main():
    for name, proto, feeds, panels in cases():
        path = model_file(name, proto)
        for profile in PROFILES:
            flags, tag = profile_flags(f"{name} {profile}", path, proto, profile, feeds, panels)
            rows = panel_rows(path, flags)
            kernel, c = contraction(path, flags)
            checks.check()
            if kernel is None:
                fail(f"{tag}: not one contraction kernel: {c}")
                continue
            checks.check()
            want = [c["tm"]] if panels and c["m"] >= 0 else []
            if panels and name in ROWS_OF:
                want = [ROWS_OF[name][profile]]
            if rows != want or (panels and [c["tm"]] != want):
                fail(f"{tag}: panel copies of {rows} rows under a tile {c}, expected {want}")
            if panels:
                # The copy in tiles of several K indices (rows of A read
                # contiguously, a block stored contiguously: a transposing
                # copy, tile_choice.cpp's columnOfVectors), not where K is
                # a prime (matmul's 1031).
                checks.check()
                rank = len(feeds[0][next(iter(feeds[0]))]) + 1
                tk = copy_tile_rows(K_OF[name])
                want_copy = [(rank - 2, tk) if tk > 1 else (-1, 1)]
                if copy_rows(path, flags) != want_copy:
                    fail(f"{tag}: copy tiles (m, tm) {copy_rows(path, flags)}, expected {want_copy}")
            check_runs(tag, path, proto, flags, feeds)
            if profile == "generic-avx2" and panels:
                # Tiles that straddle the panels.
                for tm in (4, 5):
                    kc = os.path.join(tmp, "kc.json")
                    with open(kc, "w") as f:
                        json.dump({"kernels": {kernel: dict(c, tm=tm)}}, f)
                    given = flags + ["--kernel-configs", kc]
                    _, got = contraction(path, given)
                    checks.check()
                    if got.get("tm") != tm:
                        fail(f"{tag}: given tm {tm}, compiled {got}")
                    check_runs(f"{tag} tm {tm}", path, proto, given, feeds)
        # --row-panels-always: the small and narrow GEMMs take panels too
        # (the fuzzer's graphs compile so).
        if name in ("small_a", "narrow_n"):
            flags = ["--row-panels-always"]
            kernel, c = contraction(path, flags)
            checks.check()
            if panel_rows(path, flags) != [c.get("tm")]:
                fail(f"{name}: --row-panels-always made panels of {panel_rows(path, flags)} "
                     f"rows under a tile {c}")
            check_runs(f"{name} --row-panels-always", path, proto, flags, feeds)
        # Off: A in place.
        if panels:
            flags = ["--no-row-panels"]
            checks.check()
            if panel_rows(path, flags):
                fail(f"{name}: --no-row-panels still copies A")
            check_runs(f"{name} --no-row-panels", path, proto, flags, feeds)
    check_in_model()
    checks.done()


if __name__ == "__main__":
    main()

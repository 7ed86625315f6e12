#!/usr/bin/env python3
"""Persistent kernels (compiler/schedule/persistent_kernels.h): consecutive
CPU kernels launched as one, whose work-groups claim each part's work-items
from counters and wait at its end for the last of them.

Models:
  - mbconv at 28 x 28, 14 x 14 and 7 x 7: MobileNetV2's inverted residual
    blocks (chained kernels inside the groups; size variants, whose parts
    run by batch);
  - bottleneck: a ResNet block (Winograd's transforms, a chain);
  - gather: an index read from an input inside a group (an out-of-range
    index is a run-time error naming the node; the counters must come back
    to zero for the next run);
  - nonzero: a count read mid-run (a sync point: no group spans it).
Under zen5-avx512 and generic-avx2, each model:
  - is grouped (`--emit=loop` lists persistent kernels; the .so launches
    fewer kernels than it has), and not under --no-persistent-kernels;
  - verifies under --verify-each;
  - matches ONNX Runtime at batch 1, 3, 0, 1, 3 on one instance, inputs
    changing every run (a launch that left its counters set would skip the
    next run's work);
  - gives the same bits as the --no-persistent-kernels build at batch 2, on
    inputs holding +-inf and NaN too;
  - gives the same bits with one PoCL worker thread (POCL_MAX_PTHREAD_COUNT=1:
    one work-group runs every part itself; a persistent kernel that waited for
    another work-group would never end), in a process of its own;
  - gives each of two threads running one container at once (two instances,
    their own counters) its own input's result, 20 runs each;
  - names the persistent kernels in its profile;
  - run with AOTC_PERSISTENT=0 (each persistent kernel's parts launched one
    by one, as on devices other than CPUs): the same bits, the parts in the
    profile;
  - builds only the kernels of the path it takes: the program cached for a
    persistent container is the source without the parts' kernel sections,
    for an AOTC_PERSISTENT=0 one without the persistent kernels' sections.
Usage: check_persistent_kernels.py AOTC
"""
import os
import re
import subprocess
import sys
import tempfile
import threading

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, Net, expect_close, expect_same_bits, net_input, run_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(11)
tmp = tempfile.mkdtemp()
checks = Checks("persistent kernels")
fail = checks.fail
PROFILES = {"zen5": ["--device-profile", "zen5-avx512"], "avx2": ["--device-profile", "generic-avx2"]}


def mbconv(hw):
    n = Net(f"mbconv{hw[0]}", 16, hw, rng)

    block = n.inverted_block
    x = n.clip(n.conv("x", 16, 32))
    x = block(x, 32, 32, 6, True)
    x = block(x, 32, 64, 6, False)
    x = block(x, 64, 64, 4, True)
    n.output(n.op("GlobalAveragePool", [n.conv(x, 64, 40)]))
    return n.model()


def bottleneck():
    n = Net("bottleneck", 64, (14, 14), rng)
    a = n.op("Relu", [n.conv("x", 64, 64)])
    a = n.op("Relu", [n.conv(a, 64, 64, k=3)])
    y = n.op("Relu", [n.op("Add", [n.conv(a, 64, 256), n.conv("x", 64, 256)])])
    n.output(n.conv(y, 256, 64))
    return n.model()


def gather():
    """Conv, then channels picked by an input's indices, then another Conv."""
    w1 = nh.from_array((rng.standard_normal((8, 8, 3, 3)) / 8).astype(np.float32), "w1")
    w2 = nh.from_array((rng.standard_normal((6, 4, 1, 1)) / 2).astype(np.float32), "w2")
    nodes = [h.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["a"], ["r"]),
             h.make_node("Gather", ["r", "idx"], ["g"], axis=1, name="pick_channels"),
             h.make_node("Conv", ["g", "w2"], ["c"]),
             h.make_node("Sigmoid", ["c"], ["y"])]
    g = h.make_graph(nodes, "gather",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 8, 9, 7]),
                      h.make_tensor_value_info("idx", T.INT64, [4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 6, 9, 7])], [w1, w2])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def nonzero():
    """Kernels before and after a count the run reads (NonZero)."""
    nodes = [h.make_node("Relu", ["x"], ["r"]),
             h.make_node("Sub", ["r", "half"], ["s"]),
             h.make_node("Relu", ["s"], ["t"]),
             h.make_node("NonZero", ["t"], ["nz"]),
             h.make_node("Mul", ["t", "two"], ["u"]),
             h.make_node("Exp", ["u"], ["y"])]
    g = h.make_graph(nodes, "nonzero", [h.make_tensor_value_info("x", T.FLOAT, ["n", 5, 6])],
                     [h.make_tensor_value_info("nz", T.INT64, [3, "k"]),
                      h.make_tensor_value_info("y", T.FLOAT, ["n", 5, 6])],
                     [nh.from_array(np.array(0.5, np.float32), "half"),
                      nh.from_array(np.array(2.0, np.float32), "two")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def blocks():
    """72 layers of one shape (MatMul, bias, Relu): more kernels than one
    persistent kernel's parameters hold, repeating, so groups are cut at
    whole layers and the equal ones run one function (share_kernels.h)."""
    nodes, inits, x = [], [], "x"
    for i in range(72):
        w = nh.from_array((rng.standard_normal((16, 16)) / 4).astype(np.float32), f"w{i}")
        b = nh.from_array((rng.standard_normal(16) / 4).astype(np.float32), f"b{i}")
        inits += [w, b]
        nodes += [h.make_node("MatMul", [x, w.name], [f"m{i}"]),
                  h.make_node("Add", [f"m{i}", b.name], [f"a{i}"]),
                  h.make_node("Relu", [f"a{i}"], [f"r{i}" if i < 71 else "y"])]
        x = f"r{i}"
    g = h.make_graph(nodes, "blocks", [h.make_tensor_value_info("x", T.FLOAT, ["n", 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 16])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


GOOD_IDX = np.array([3, 0, 7, 0], np.int64)


def feeds(mname, proto, batch, nonfinite=False):
    """The model's inputs at a batch: x (random), and gather's indices."""
    if mname == "gather":
        x = rng.standard_normal((batch, 8, 9, 7)).astype(np.float32)
        if nonfinite and batch > 0:
            x[0, 1, 2, 3], x[0, 3, 4, 5], x[0, 0, 0, 0] = np.inf, -np.inf, np.nan
        return [x, GOOD_IDX]
    if mname == "nonzero":
        x = rng.standard_normal((batch, 5, 6)).astype(np.float32)
        if nonfinite and batch > 0:
            x[0, 1, 2], x[0, 3, 4] = np.inf, np.nan
        return [x]
    return [net_input(proto, batch, rng, nonfinite)]


# name -> (model, whether kernels must be grouped)
MODELS = {
    "mbconv28": (mbconv((28, 28)), True),
    "mbconv14": (mbconv((14, 14)), True),
    "mbconv7": (mbconv((7, 7)), True),
    "bottleneck": (bottleneck(), True),
    "gather": (gather(), True),
    "nonzero": (nonzero(), False),
    "blocks": (blocks(), True),
}

# One PoCL worker thread, in a process of its own (PoCL reads the variable
# once): the outputs of a run on saved inputs.
ONE_WORKER = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from aotc_ctypes import Model
m = Model(sys.argv[2], device="cpu")
with np.load(sys.argv[3]) as z:
    ins = [z[f"arr_{i}"] for i in range(len(z.files))]
np.savez(sys.argv[4], *m.run(ins))
"""


def without_sections(source, tag):
    """The OpenCL C `source` without its kernel sections whose marker line
    ("// Kernel N: NAME ...") holds `tag`."""
    pieces = re.split(r"(?=\n// Kernel \d+: )", source)
    return "".join(p for p in pieces if not (p.startswith("\n// Kernel ") and tag in p.split("\n", 2)[1]))


def built_sources(cache):
    """The source sizes of the programs in the aotc cache folder `cache`
    (each entry's key holds "source: N bytes")."""
    sizes = []
    for name in sorted(os.listdir(cache)):
        with open(os.path.join(cache, name), "rb") as f:
            sizes += [int(n) for n in re.findall(rb"\nsource: (\d+) bytes", f.read(4096))]
    return sizes


def groups(path, flags):
    """The persistent kernels `--emit=loop` lists: (name, first, last)."""
    text = run_aotc(aotc, [path, "--emit=loop"] + flags)
    return [(g, int(a), int(b)) for g, a, b in
            re.findall(r"^persistent (\w+): kernels (\d+)\.\.(\d+),", text, re.M)]


for mname, (proto, applies) in MODELS.items():
    path = os.path.join(tmp, mname + ".onnx")
    onnx.save(proto, path)
    sess = ort.InferenceSession(proto.SerializeToString())
    names = [i.name for i in proto.graph.input]
    for pname, pflags in PROFILES.items():
        tag = f"{mname}/{pname}"
        so, so_apart = (os.path.join(tmp, f"{mname}_{pname}{s}.so") for s in ("", "_apart"))
        try:
            run_aotc(aotc, [path, "-o", so, "--verify-each"] + pflags)
            run_aotc(aotc, [path, "-o", so_apart] + pflags + ["--no-persistent-kernels"])
            grouped = groups(path, pflags)
            none = groups(path, pflags + ["--no-persistent-kernels"])
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        apart = Model(so_apart, device="cpu")
        # Each container builds the program of its own path only: the
        # persistent kernels without the parts' kernels, or the parts'
        # kernels without the persistent kernels (PoCL compiles every kernel
        # of a program). Each in a cache of its own, as one program
        # (AOTC_BUILD_JOBS=1), whose entry's key says which source it built.
        source = run_aotc(aotc, [path, "--emit=cl"] + pflags)
        saved = {k: os.environ.get(k) for k in ("AOTC_CACHE_DIR", "AOTC_BUILD_JOBS", "AOTC_PERSISTENT")}
        os.environ["AOTC_BUILD_JOBS"] = "1"
        built = {}
        try:
            for path_name, env in (("persistent", None), ("parts", "0")):
                os.environ["AOTC_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
                # The same .so launching each persistent kernel's parts one by
                # one, as it does on devices other than CPUs (the runtime
                # reads AOTC_PERSISTENT when a container is created).
                if env is None:
                    os.environ.pop("AOTC_PERSISTENT", None)
                else:
                    os.environ["AOTC_PERSISTENT"] = env
                model = Model(so, device="cpu")
                built[path_name] = (model, built_sources(os.environ["AOTC_CACHE_DIR"]))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        m, one_by_one = built["persistent"][0], built["parts"][0]
        checks.check()
        for path_name, leave_out in (("persistent", "(a persistent kernel's part"), ("parts", "(persistent: ")):
            want = len(without_sections(source, leave_out).encode())
            got = built[path_name][1]
            if got != [want] or (grouped and want == len(source.encode())):
                fail(f"{tag}: the {path_name} path built sources of {got} bytes; "
                     f"without the other path's kernels: {want} of {len(source.encode())}")
        if applies and not grouped:
            fail(f"{tag}: no persistent kernel")
        # Repeated layers: groups of equal length, all but the first and the
        # last running the first equal one's function.
        printed = source.count("(persistent: ")
        if mname == "blocks" and (len(grouped) < 3 or printed >= len(grouped)):
            fail(f"{tag}: {printed} persistent kernels printed for the groups {grouped}")
        if none:
            fail(f"{tag}: persistent kernels under --no-persistent-kernels: {none}")
        # The .so's kernels: its launches, then each persistent kernel's parts.
        table = [n for n, _ in m.kernel_summaries() if not n.startswith("fold_")]
        kernels = [n for n, _ in apart.kernel_summaries() if not n.startswith("fold_")]
        parts = sum(b - a + 1 for _, a, b in grouped)
        launched = len(kernels) - parts + len(grouped)
        checks.check()
        if len(table) != launched + parts or sorted(table[launched:]) != sorted(
                k for k in kernels if k not in table[:launched]):
            fail(f"{tag}: kernels {table} for {kernels} in {grouped}")
        # ONNX Runtime, one instance, new inputs every run.
        for batch in (1, 3, 0, 1, 3):
            f = feeds(mname, proto, batch)
            expect_close(checks, tag, sess.run(None, dict(zip(names, f))), m.run(f), 2e-4, batch)
        # The same bits as the kernels launched one by one, from either build.
        for nonfinite in (False, True):
            f = feeds(mname, proto, 2, nonfinite)
            outs, refs, parts_outs = m.run(f), apart.run(f), one_by_one.run(f)
            if mname == "nonzero":  # the count and its indices depend on the inf/NaN too
                outs, refs, parts_outs = outs[1:], refs[1:], parts_outs[1:]
            expect_same_bits(checks, tag, outs, refs, "--no-persistent-kernels", nonfinite)
            expect_same_bits(checks, tag + " (AOTC_PERSISTENT=0)", parts_outs, refs,
                             "--no-persistent-kernels", nonfinite)
        # One worker thread.
        f = feeds(mname, proto, 3)
        ins, outp = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(ins, *f)
        r = subprocess.run([sys.executable, "-c", ONE_WORKER, os.path.join(HERE, "..", "..", "bench", "gpu"),
                            so, ins, outp], env=dict(os.environ, POCL_MAX_PTHREAD_COUNT="1"),
                           capture_output=True, text=True, timeout=300)
        checks.check()
        if r.returncode != 0:
            fail(f"{tag}: one worker thread: {r.stderr.strip()[-300:]}")
        else:
            with np.load(outp) as z:
                one = [z[f"arr_{i}"] for i in range(len(z.files))]
            expect_same_bits(checks, tag + " (one worker)", one, apart.run(f), "--no-persistent-kernels",
                             False)
        # Two threads at once on one container: two instances, two sets of counters.
        jobs = [feeds(mname, proto, b) for b in (2, 3)]
        want = [apart.run(f) for f in jobs]
        errors = []

        def worker(k):
            try:
                for _ in range(20):
                    for a, b in zip(m.run(jobs[k]), want[k]):
                        if not np.array_equal(a, b, equal_nan=True):
                            errors.append(f"thread {k}: a run differs")
                            return
            except RuntimeError as e:
                errors.append(f"thread {k}: {e}")

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        checks.check()
        for e in errors:
            fail(f"{tag}: concurrent runs: {e}")
        # The profile names the persistent kernels that ran, and no part; with
        # AOTC_PERSISTENT=0, parts and no persistent kernel.
        if grouped:
            group_names = {g for g, _, _ in grouped}
            for label, model, want in (("", m, True), (" (AOTC_PERSISTENT=0)", one_by_one, False)):
                model.set_profiling(True)
                model.run(feeds(mname, proto, 1))
                ran = {table[r["index"]] for r in model.last_profile()
                       if r["kind"] == "kernel" and r["index"] < len(table)}
                model.set_profiling(False)
                checks.check()
                got_groups, got_parts = ran & group_names, ran & set(table[launched:])
                if (got_groups == group_names and not got_parts) != want or (
                        not want and (got_groups or not got_parts)):
                    fail(f"{tag}{label}: the profile lists {sorted(ran)} ({grouped})")
        # An index out of range inside a group: an error naming the node, and
        # the next run is right (the counters are zero again).
        if mname == "gather":
            for bad in (8, -9):
                f = feeds(mname, proto, 2)
                f[1] = np.array([1, bad, 0, 2], np.int64)
                checks.check()
                try:
                    m.run(f)
                    fail(f"{tag}: index {bad} ran")
                except RuntimeError as e:
                    if "pick_channels" not in str(e) or "out of range" not in str(e):
                        fail(f"{tag}: index {bad}: {e}")
                f = feeds(mname, proto, 2)
                expect_close(checks, tag + " after an error", sess.run(None, dict(zip(names, f))),
                             m.run(f), 2e-4, 2)
        print(f"{tag}: {len(grouped)} persistent kernels, {launched} launches for {len(kernels)} kernels")

checks.done()

#!/usr/bin/env python3
"""Broadcasts between two symbolic dims, either of which may be 1 at run time,
against ONNX Runtime: Add over two broadcast dims, Where over three operands,
a Relu * y chain whose constant innermost dim is vectorized, MatMul batch
dims and Expand to a shape read from another input; each compiled for the
default profile, zen5-avx512 (16 lanes) and generic-gpu (work-group
kernels), run at sizes equal, one of them 1, both 1, 0 and odd lengths past
a vector. A run whose dims are neither equal nor 1 is refused by name.
Usage: check_symbolic_broadcast.py AOTC
"""
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

from compiled_model import compile_model

aotc = sys.argv[1]
rng = np.random.default_rng(11)
tmp = tempfile.mkdtemp()
failed = 0
runs = 0
PROFILES = ["", "--device-profile zen5-avx512", "--device-profile generic-gpu"]


def model(name, nodes, inputs, outputs):
    return h.make_model(h.make_graph(nodes, name, inputs, outputs),
                        opset_imports=[h.make_opsetid("", 17)])


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


def feed(shape, t=T.FLOAT):
    if t == T.BOOL:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.standard_normal(shape).astype(np.float32)


def check(name, proto, cases, refused=()):
    """cases: lists of input arrays; refused: input lists the run must refuse."""
    global failed, runs
    sess = None
    for k, flags in enumerate(PROFILES):
        os.environ["AOTC_COMPILE_FLAGS"] = flags
        try:
            m, path = compile_model(aotc, tmp, "%s_%d" % (name, k), proto)
        except RuntimeError as e:
            print("FAIL %s [%s]: %s" % (name, flags, str(e)[:300]))
            failed += 1
            continue
        sess = sess or ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        names = [i.name for i in proto.graph.input]
        for ins in cases:
            runs += 1
            want = sess.run(None, dict(zip(names, ins)))
            got = m.run(ins)
            ok = all(g.shape == w.shape and g.dtype == w.dtype and
                     np.allclose(g, w, rtol=1e-5, atol=1e-5) for g, w in zip(got, want))
            shapes = [a.shape for a in ins]
            print("%s %s [%s] %s" % ("ok  " if ok else "FAIL", name, flags or "default", shapes))
            failed += not ok
        for ins in refused:
            runs += 1
            try:
                m.run(ins)
                print("FAIL %s [%s] %s was accepted" % (name, flags, [a.shape for a in ins]))
                failed += 1
            except RuntimeError as e:
                ok = "must be equal or one of them 1" in str(e)
                print("%s %s [%s] refused: %s" % ("ok  " if ok else "FAIL", name, flags,
                                                   str(e)[:160]))
                failed += not ok


PAIRS = [(17, 17), (1, 17), (17, 1), (1, 1), (33, 1), (0, 0), (0, 1), (1, 0)]

# Add over two broadcast dims: [a, n] + [b, m].
check("add2", model("add2", [h.make_node("Add", ["x", "y"], ["z"])],
                    [vi("x", T.FLOAT, ["a", "n"]), vi("y", T.FLOAT, ["b", "m"])],
                    [vi("z", T.FLOAT, ["za", "zn"])]),
      [[feed((a, n)), feed((b, m))] for (n, m) in PAIRS for (a, b) in [(3, 3), (1, 3), (3, 1)]],
      refused=[[feed((2, 3)), feed((2, 4))], [feed((2, 3)), feed((3, 3))]])

# Where(c[n], x[m], y[p]): each operand the broadcast one in turn.
where_sizes = [(1, 19, 19), (19, 1, 19), (19, 19, 1), (1, 1, 19), (19, 19, 19), (1, 1, 1)]
check("where3", model("where3", [h.make_node("Where", ["c", "x", "y"], ["z"])],
                      [vi("c", T.BOOL, ["n"]), vi("x", T.FLOAT, ["m"]), vi("y", T.FLOAT, ["p"])],
                      [vi("z", T.FLOAT, ["zn"])]),
      [[feed((n,), T.BOOL), feed((m,)), feed((p,))] for (n, m, p) in where_sizes])

# A chain over a constant innermost dim of 40 (vectors and a remainder):
# Relu(x[n, 40]) * y[m, 40] + x.
check("chain", model("chain", [h.make_node("Relu", ["x"], ["r"]),
                               h.make_node("Mul", ["r", "y"], ["p"]),
                               h.make_node("Add", ["p", "x"], ["z"])],
                     [vi("x", T.FLOAT, ["n", 40]), vi("y", T.FLOAT, ["m", 40])],
                     [vi("z", T.FLOAT, ["zn", 40])]),
      [[feed((n, 40)), feed((m, 40))] for (n, m) in [(9, 9), (1, 9), (9, 1), (1, 1), (0, 1)]],
      refused=[[feed((2, 40)), feed((3, 40))]])

# MatMul batch dims: [s, 5, 7] x [t, 7, 33].
check("matmul", model("matmul", [h.make_node("MatMul", ["a", "b"], ["p"])],
                      [vi("a", T.FLOAT, ["s", 5, 7]), vi("b", T.FLOAT, ["t", 7, 33])],
                      [vi("p", T.FLOAT, ["u", 5, 33])]),
      [[feed((s, 5, 7)), feed((t, 7, 33))] for (s, t) in [(4, 4), (1, 4), (4, 1), (1, 1), (0, 1)]],
      refused=[[feed((2, 5, 7)), feed((3, 7, 33))]])

# Expand of x[n, 1] to the shape of y[m, k].
check("expand", model("expand", [h.make_node("Shape", ["y"], ["s"]),
                                 h.make_node("Expand", ["x", "s"], ["z"])],
                      [vi("x", T.FLOAT, ["n", 1]), vi("y", T.FLOAT, ["m", "k"])],
                      [vi("z", T.FLOAT, ["zm", "zk"])]),
      [[feed((n, 1)), feed((m, k))] for (n, m, k) in
       [(6, 6, 21), (1, 6, 21), (6, 1, 21), (1, 1, 1), (6, 6, 1)]],
      refused=[[feed((2, 1)), feed((3, 4))]])

print("symbolic broadcast: %d runs, %d failed" % (runs, failed))
sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""Winograd F(2x2, 3x3) for a 3 x 3 convolution (stride 1, pads 1), composed from ONNX ops
that aotc already compiles, beside the direct convolution: what a Winograd template would gain
before one is built (docs/PERFORMANCE.md, stop 54).

Writes two models with the same random weight W [Co, C, 3, 3] and bias, input [N, C, H, H]:
  DIR/direct.onnx    Conv + Relu
  DIR/winograd.onnx  input transform: a Conv of one input channel by the 16 filters Bt (x) Bt
                     (4 x 4, stride 2) over x reshaped to [N*C, 1, H, H];
                     a batched MatMul of the transformed tiles [16, N*T*T, C] by
                     U = G W G^T ([16, C, Co], precomputed here);
                     output transform: a MatMul of At (x) At [4, 16] by the products, then
                     the 2 x 2 outputs of each tile put in place, + bias, Relu.
and checks with ONNX Runtime that both give the same outputs. Time them with aotc:

  .venv/bin/python bench/cpu/winograd_probe.py --channels 256 --size 14 --out /tmp/wino
  for m in direct winograd; do
    build/compiler/tools/aotc compile /tmp/wino/$m.onnx --vector-lanes host -o /tmp/wino/$m.so
    build/compiler/tools/aotc run /tmp/wino/$m.so --repeat 300 --reserve --profile /tmp/wino/$m.json
  done

--batch 0 declares a symbolic batch (its Reshapes then use -1, and aotc's bounds prover keeps
run-time index checks in the batched MatMul's loads: 67.8 ms against 0.52 static at stop 54).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper as nh

BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float32)
G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]], np.float32)
AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float32)


def build(c, co, size, batch, winograd, w, bias):
    nodes, inits = [], {}

    def const(name, arr):
        inits[name] = nh.from_array(np.asarray(arr), name)
        return name

    n = batch if batch > 0 else "n"
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, size, size])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [n, co, size, size])
    if not winograd:
        nodes += [h.make_node("Conv", ["x", const("W", w), const("bias", bias)], ["cv"], pads=[1, 1, 1, 1]),
                  h.make_node("Relu", ["cv"], ["y"])]
    else:
        t = (size + 1) // 2
        extra = 2 * t - size  # an odd size computes one more row and column, sliced off
        bb = np.einsum("pa,qb->pqab", BT, BT).reshape(16, 1, 4, 4)
        aa = np.einsum("ip,jq->ijpq", AT, AT).reshape(4, 16)
        u = np.einsum("ak,oikl,bl->abio", G, w, G).reshape(16, c, co).astype(np.float32)
        lead = batch if batch > 0 else -1
        i64 = lambda v: np.array(v, np.int64)
        nodes += [
            h.make_node("Reshape", ["x", const("s_x", i64([-1, 1, size, size]))], ["x1"]),
            h.make_node("Conv", ["x1", const("BB", bb)], ["v0"], strides=[2, 2],
                        pads=[1, 1, 1 + extra, 1 + extra]),                      # [N*C, 16, T, T]
            h.make_node("Reshape", ["v0", const("s_v0", i64([lead, c, 16, t * t]))], ["v1"]),
            h.make_node("Transpose", ["v1"], ["v2"], perm=[2, 0, 3, 1]),          # [16, N, T*T, C]
            h.make_node("Reshape", ["v2", const("s_v", i64([16, -1, c]))], ["v"]),
            h.make_node("MatMul", ["v", const("U", u)], ["m"]),                  # [16, N*T*T, Co]
            h.make_node("Reshape", ["m", const("s_m", i64([16, -1]))], ["m2"]),
            h.make_node("MatMul", [const("AA", aa), "m2"], ["o"]),               # [4, N*T*T*Co]
            h.make_node("Reshape", ["o", const("s_o", i64([2, 2, lead, t, t, co]))], ["o2"]),
            h.make_node("Transpose", ["o2"], ["o3"], perm=[2, 5, 3, 0, 4, 1]),    # [N, Co, T, 2, T, 2]
            h.make_node("Reshape", ["o3", const("s_y", i64([lead, co, 2 * t, 2 * t]))], ["o4"])]
        last = "o4"
        if extra:
            nodes.append(h.make_node("Slice", ["o4", const("st", i64([0, 0])), const("en", i64([size, size])),
                                              const("ax", i64([2, 3]))], ["o5"]))
            last = "o5"
        nodes += [h.make_node("Add", [last, const("bias3", bias.reshape(co, 1, 1))], ["cv"]),
                  h.make_node("Relu", ["cv"], ["y"])]
    g = h.make_graph(nodes, "winograd" if winograd else "direct", [x], [y], list(inits.values()))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--channels", type=int, default=256)
    ap.add_argument("--out-channels", type=int, default=0, help="default: --channels")
    ap.add_argument("--size", type=int, default=14, help="input height and width")
    ap.add_argument("--batch", type=int, default=1, help="0: symbolic")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    co = a.out_channels or a.channels
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((co, a.channels, 3, 3)) / np.sqrt(a.channels * 9)).astype(np.float32)
    bias = (rng.standard_normal(co) * 0.1).astype(np.float32)
    os.makedirs(a.out, exist_ok=True)
    paths = {}
    for name, wino in (("direct", False), ("winograd", True)):
        paths[name] = os.path.join(a.out, name + ".onnx")
        onnx.save(build(a.channels, co, a.size, a.batch, wino, w, bias), paths[name])
    import onnxruntime as ort
    x = rng.standard_normal((max(a.batch, 2), a.channels, a.size, a.size)).astype(np.float32)
    if a.batch > 0:
        x = x[: a.batch]
    ref, got = (ort.InferenceSession(paths[k]).run(None, {"x": x})[0] for k in ("direct", "winograd"))
    err = float(np.abs(ref - got).max() / max(np.abs(ref).max(), 1e-30))
    print(f"wrote {paths['direct']} and {paths['winograd']}; max rel err of Winograd against the "
          f"direct convolution (ONNX Runtime): {err:.1e}")
    if err > 1e-4:
        raise SystemExit("FAIL: the Winograd model does not match")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks run_fuzz.rounding_only, which tells float rounding where sums
cancel from a wrong answer. Seed 674036 (`--large --einsum --scatter`):
a Conv output element of -0.0043, a sum of terms whose magnitudes add up to
1316, is excused at aotc's error there (1.6e-4) and not at an error of one
term (1316 / 576), nor with a large error elsewhere, nor for an integer
output. Seed 676132 (`--large`): Relu(Conv + x) at 0.0215, where the Conv's
-182.469 and x's 182.491 cancel, is excused at aotc's error (1.7e-4) and
not at one term's. Seed 20261621: a Cast to int8 of a Tanh whose float
ONNX Runtime rounds to -1 is excused, a Cast of an exact input is not;
seed 8711831: Less(Tanh(x), x) where ONNX Runtime's tanh is one unit below
x (the correctly rounded one is x) is excused, two inputs a unit apart not.
Seed 20272536 (`--large`): a Cos of a ConvTranspose sum of 23889.9 is
excused at one unit of the sum, not at 0.5. Seed 8222197 (`--large`):
attention whose top logits nearly tie is excused at aotc's 6e-4, not at 0.01.

  .venv/bin/python tests/fuzz/rounding_check.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzgen  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper  # noqa: E402
import run_fuzz  # noqa: E402


def detail(out, element, got, expected, worst):
    return ("test_data_set_0 output %d: element %d: got %g, expected %g "
            "(worst |error| %f)" % (out, element, got, expected, worst))


def made(seed, output, **kw):
    """The generator's case of \p seed and the index of its output named \p output."""
    case = fuzzgen.make_case(seed, 6, True, **kw)
    assert not isinstance(case, str), case
    return case, [o.name for o in case.model.graph.output].index(output)


def main():
    case = fuzzgen.make_case(674036, 6, True, large=True, einsum=True, scatter=True)
    chain = fuzzgen.make_case(676132, 6, True, large=True)
    for c in (case, chain):
        assert not isinstance(c, str), c
    outputs = [o.name for o in case.model.graph.output]
    conv = outputs.index("t33")  # a Conv's output
    gather = outputs.index("t5")  # int8
    expected = -0.00430598
    relu = [o.name for o in chain.model.graph.output].index("a.b")
    checks = [
        # (what, case, detail, excused)
        ("aotc's error where the terms cancel", case,
         detail(conv, 4238, -0.00414767, expected, 0.000305), True),
        ("an error of one term's size (1316 / 576 terms)", case,
         detail(conv, 4238, expected + 2.3, expected, 2.3), False),
        ("a small error there but a large one elsewhere", case,
         detail(conv, 4238, -0.00414767, expected, 1.0), False),
        ("an integer output", case,
         detail(gather, 0, 1, 2, 1), False),
        ("an element past the output", case,
         detail(conv, 10 ** 6, -0.00414767, expected, 0.000305), False),
        ("aotc's error where Conv + x cancel, through Add and Relu", chain,
         detail(relu, 38275, 0.0217133, 0.0215454, 0.000412), True),
        ("an error of one term's size there", chain,
         detail(relu, 38275, 0.0215454 + 2.3, 0.0215454, 2.3), False),
    ]
    # Seed 20261621: Cast(Tanh(SpaceToDepth(w)), to=int8), where ONNX
    # Runtime's Tanh gives -1 for tanh(-8.194887) = -0.99999985 (element 0);
    # element 1's float is -0.313.
    tanh, cast = made(20261621, "t15")
    # A Cast of an input holding -1.0 exactly: the float is data, held
    # exactly by both systems, so 0 for -1 is wrong.
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.INT8, [2])
    data = fuzzgen.Case(helper.make_model(
        helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=onnx.TensorProto.INT8)],
                          "cast_data", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)]),
        [np.array([-1.0, 0.5], np.float32)], None, ["Cast"])
    # Seed 20272536 (--large): Cos of a ConvTranspose sum of 23889.9, whose
    # last unit (0.002) moves the cosine by 0.0018.
    cos, cos_out = made(20272536, "t18", large=True)
    checks += [
        ("a Cos of a sum that moved by one unit", cos,
         detail(cos_out, 20, 0.336217, 0.334377, 0.001899), True),
        ("a Cos off by 0.5 there", cos, detail(cos_out, 20, 0.834377, 0.334377, 0.5), False),
        ("a Cast of ONNX Runtime's -1 where tanh is -0.99999985", tanh,
         detail(cast, 0, 0, -1, 1), True),
        ("a Cast off by two there", tanh, detail(cast, 0, 1, -1, 2), False),
        ("a Cast of a float far from an integer (-0.313)", tanh,
         detail(cast, 1, -1, 0, 1), False),
        ("a Cast of an input's exact -1.0", data, detail(0, 0, 0, -1, 1), False),
    ]
    # Seed 8711831 (`--large --symbolic-ones`): Less(Tanh(x), x) at x =
    # 2.2094532e-4, whose correctly rounded tanh is x itself (aotc: false)
    # and ONNX Runtime's one unit below (true). Built by hand; a comparison
    # of two inputs one unit apart is data, decided exactly by both.
    def compare(name, nodes, feeds):
        ins = [helper.make_tensor_value_info(k, onnx.TensorProto.FLOAT, list(v.shape))
               for k, v in feeds.items()]
        out = helper.make_tensor_value_info("y", onnx.TensorProto.BOOL, None)
        return fuzzgen.Case(helper.make_model(
            helper.make_graph(nodes, name, ins, [out]),
            opset_imports=[helper.make_opsetid("", 17)]),
            list(feeds.values()), None, [n.op_type for n in nodes])
    x = np.array([2.2094532e-4, 0.5], np.float32)
    tanh_less = compare("tanh_less", [helper.make_node("Tanh", ["x"], ["t"]),
                                      helper.make_node("Less", ["t", "x"], ["y"])], {"x": x})
    data_less = compare("data_less", [helper.make_node("Less", ["x", "z"], ["y"])],
                        {"x": x, "z": np.nextafter(x, np.float32(1))})
    checks += [
        ("Less(Tanh(x), x) where tanh(x) rounds to x", tanh_less, detail(0, 0, 0, 1, 1), True),
        ("Less(Tanh(x), x) where they are far apart (x = 0.5)", tanh_less,
         detail(0, 1, 0, 1, 1), False),
        ("Less of two inputs one unit apart", data_less, detail(0, 0, 0, 1, 1), False),
    ]
    # A ConvTranspose with groups, which ONNX's reference cannot run (it
    # broadcasts a group's 2 output channels into 1): rounding_bounds has no
    # bound for it and the mismatch stays wrong; the campaign of seed 120501
    # stopped there with a ValueError instead.
    xt = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4, 4, 5])
    wt = helper.make_tensor_value_info("w", onnx.TensorProto.FLOAT, [4, 2, 3, 3])
    yt = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4, 6, 7])
    rng = np.random.default_rng(1)
    grouped = fuzzgen.Case(helper.make_model(
        helper.make_graph([helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=2)],
                          "grouped", [xt, wt], [yt]),
        opset_imports=[helper.make_opsetid("", 17)]),
        [rng.standard_normal((1, 4, 4, 5)).astype(np.float32),
         rng.standard_normal((4, 2, 3, 3)).astype(np.float32)], None, ["ConvTranspose"])
    # Seed 8222197 (--large): attention over constants whose two top
    # logits (188.09, 188.88) nearly tie; the 31-term dot products' rounding
    # in a sequential fma order (aotc's; NumPy's float32 in that order gives
    # the same) moves an output by 6e-4, through Mul and Softmax.
    attention, att = made(8222197, "a.b", large=True)
    checks += [
        ("attention whose top logits tie, at aotc's error", attention,
         detail(att, 249, 0.0342467, 0.0340926, 0.000395), True),
        ("an error of 0.01 there", attention, detail(att, 249, 0.0442467, 0.0340926, 0.0101),
         False),
        ("a grouped ConvTranspose ONNX's reference cannot run", grouped,
         detail(0, 3, 1.5, 1.0, 0.5), False),
    ]
    failed = 0
    # Seed 126359: LayerNormalization over Exp values up to 4.7e30, whose
    # squares pass FLT_MAX; ONNX Runtime's E[x^2] - E[x]^2 gives inf - inf =
    # NaN everywhere, the ONNX function (two passes in float32) an infinite
    # variance, so the bias, as aotc. The generator skips the case as a
    # departure of ONNX Runtime's instead of calling aotc wrong.
    # ONNX Runtime clamps an infinity to the largest float in a Clip without
    # that bound, and gives NaN for PRelu(inf); ONNX's reference and aotc
    # keep the infinity (found by --symbolic-ones seeds 8251478 and
    # 8252705; built here by hand, as the generator's graphs for a seed
    # change when its ops do). Seed 126359: the LayerNormalization above.
    def departure(nodes, feeds, inits=()):
        ins = [helper.make_tensor_value_info(k, onnx.TensorProto.FLOAT, list(v.shape))
               for k, v in feeds.items()]
        m = helper.make_model(helper.make_graph(
            nodes, "departure", ins,
            [helper.make_tensor_value_info(nodes[-1].output[0], onnx.TensorProto.FLOAT, None)],
            list(inits)), opset_imports=[helper.make_opsetid("", 17)])
        return fuzzgen.ort_departures(m, fuzzgen.run_reference(m, list(feeds.values())))

    inf = np.array([np.inf, -1.0, 2.0], np.float32)
    lo = onnx.numpy_helper.from_array(np.array(-1.5, np.float32), "lo")
    departures = [
        ("seed 126359", fuzzgen.make_case(126359), "LayerNormalization"),
        ("Clip of +inf without a max",
         departure([helper.make_node("Clip", ["x", "lo"], ["y"])], {"x": inf}, [lo]),
         "Clip without a bound"),
        ("PRelu of +inf", departure([helper.make_node("PRelu", ["x", "s"], ["y"])],
                                    {"x": inf, "s": np.array([0.5, 0.5, 0.5], np.float32)}),
         "PRelu of an infinity"),
        ("Clip of finite values (not a departure)",
         departure([helper.make_node("Clip", ["x", "lo"], ["y"])],
                   {"x": np.array([3.0, -1.0, 2.0], np.float32)}, [lo]), None),
    ]
    for what, reason, want in departures:
        ok = (reason is None) if want is None else (isinstance(reason, str) and want in reason)
        failed += not ok
        print("%s: %s: ONNX Runtime's departure %s" % ("ok" if ok else "FAIL", what, reason))
    for what, c, d, excused in checks:
        got = run_fuzz.rounding_only(c, d) is not None
        ok = got == excused
        failed += not ok
        print("%s: %s (excused: %s, expected %s)" % ("ok" if ok else "FAIL", what, got, excused))
    print("%d checks, %d failed" % (len(checks) + len(departures), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks run_fuzz.rounding_only, which tells float rounding where a
contraction's terms cancel from a wrong answer: seed 674036 (`--large
--einsum --scatter`), whose Conv output element -0.0043 is a sum of terms
whose magnitudes add up to 1316, is excused at aotc's error there (1.6e-4)
and not at an error of one term, nor for an output that is not a sum.

  .venv/bin/python tests/fuzz/rounding_check.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzgen  # noqa: E402
import run_fuzz  # noqa: E402


def detail(out, element, got, expected, worst):
    return ("test_data_set_0 output %d: element %d: got %g, expected %g "
            "(worst |error| %f)" % (out, element, got, expected, worst))


def main():
    case = fuzzgen.make_case(674036, 6, True, large=True, einsum=True, scatter=True)
    assert not isinstance(case, str), case
    outputs = [o.name for o in case.model.graph.output]
    conv = outputs.index("t33")  # a Conv's output
    relu = outputs.index("max")  # Relu(Add(Conv, MaxPool))
    expected = -0.00430598
    checks = [
        # (what, detail, excused)
        ("aotc's error where the terms cancel",
         detail(conv, 4238, -0.00414767, expected, 0.000305), True),
        ("an error of one term's size (1316 / 576 terms)",
         detail(conv, 4238, expected + 2.3, expected, 2.3), False),
        ("a small error there but a large one elsewhere",
         detail(conv, 4238, -0.00414767, expected, 1.0), False),
        ("an output that is not a sum",
         detail(relu, 4238, -0.00414767, expected, 0.000305), False),
        ("an element past the output",
         detail(conv, 10 ** 6, -0.00414767, expected, 0.000305), False),
    ]
    failed = 0
    for what, d, excused in checks:
        got = run_fuzz.rounding_only(case, d) is not None
        ok = got == excused
        failed += not ok
        print("%s: %s (excused: %s, expected %s)" % ("ok" if ok else "FAIL", what, got, excused))
    print("%d checks, %d failed" % (len(checks), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

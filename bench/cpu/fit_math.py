"""Fits the coefficients of aotc_erf and of the exp it calls
(codegen/opencl/cl_math.h) and reports the error of the fitted function as
float32 arithmetic computes it.

    .venv/bin/python bench/cpu/fit_math.py

The method is that of ARM's optimized-routines erff: below T = 0.921875,
erf(x) = x + x * P(x^2) with P of degree 5; from T to 4,
erf(a) = 1 - exp(-(a + a * Q(a))) with Q of degree 6; 1 beyond. Each
polynomial is fitted by least squares on Chebyshev-spaced points, reweighted
toward the largest error (Lawson's iteration, an approximation of the
minimax fit), in the error that matters: relative to erf on the first
interval, and as the error it causes in erf (times erfc(a)) on the second.
The coefficients are rounded to float and evaluated with emulated fma
(double, then rounded once) against math.erf; the device's own measurement is
tests/e2e/erf_accuracy_test.cpp.
"""
import math

import numpy as np

T = 0.921875
erf = np.frompyfunc(math.erf, 1, 1)
erfc = np.frompyfunc(math.erfc, 1, 1)


def lawson(V, f, w, rounds=30):
    wt = np.ones_like(f)
    for _ in range(rounds):
        c, *_ = np.linalg.lstsq(V * (w * wt)[:, None], f * w * wt, rcond=None)
        e = np.abs((V @ c - f) * w)
        wt *= (e / e.max()) ** 0.3 + 1e-3
    return c


def chebyshev(lo, hi, n=4000):
    return lo + (hi - lo) * (0.5 - 0.5 * np.cos(np.linspace(0, math.pi, n)))


def fit_small(deg=5):
    x = chebyshev(0, T)[1:]
    e = erf(x).astype(float)
    V = np.vstack([x ** (2 * k) for k in range(deg + 1)]).T
    return lawson(V, (e - x) / x, x / e)


def fit_large(deg=6):
    a = chebyshev(T, 4.0)
    r = -np.log(erfc(a).astype(float))
    V = np.vstack([a ** k for k in range(deg + 1)]).T
    return lawson(V, r / a - 1, erfc(a).astype(float) * a)


def fit_expm1(deg=4):
    """e^f - 1 = f + f^2 * E(f) on [-ln 2 / 2, ln 2 / 2], E of degree 4: the
    exp(-r) of the second interval, reduced by ln 2."""
    h = math.log(2) / 2
    f = chebyshev(-h, h)
    f = f[np.abs(f) > 1e-9]
    em1 = np.expm1(f)
    V = np.vstack([f ** k for k in range(deg + 1)]).T
    return lawson(V, (em1 - f) / f**2, f**2 / np.exp(f))


def fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def emulated_erf(x, P, Q):
    x = x.astype(np.float32)
    a = np.abs(x)
    x2 = (x * x).astype(np.float32)
    p = np.full_like(x, P[-1])
    for c in P[-2::-1]:
        p = fma(p, x2, np.full_like(x, c))
    small = fma(p, x, x)
    q = np.full_like(x, Q[-1])
    for c in Q[-2::-1]:
        q = fma(q, a, np.full_like(x, c))
    e = np.exp(-fma(q, a, a).astype(np.float64)).astype(np.float32)
    big = np.copysign(np.where(a >= 4, np.float32(1), (np.float32(1) - e).astype(np.float32)), x)
    return np.where(a < T, small, big)


def main():
    P = fit_small().astype(np.float32)
    Q = fit_large().astype(np.float32)
    E = fit_expm1().astype(np.float32)
    for name, c in (("P (in x^2)", P), ("Q (in a)", Q), ("E (in f)", E)):
        print(f"{name:11}", ", ".join(float.hex(float(v)).replace("0000000p", "p") + "f" for v in c))
    h = np.linspace(-math.log(2) / 2, math.log(2) / 2, 100001)
    approx = h + h * h * np.polyval(E[::-1].astype(float), h)
    print(f"e^f with E, in double: max relative error {np.max(np.abs((1 + approx) / np.exp(h) - 1)):.2e}")
    n = 1 << 20
    x = np.concatenate([np.linspace(0, 6, n), np.geomspace(1e-30, 1, n)]).astype(np.float32)
    want = erf(x.astype(float)).astype(float)
    got = emulated_erf(x, P, Q).astype(float)
    ulp = np.spacing(np.abs(want.astype(np.float32))).astype(float)
    err = np.abs(got - want) / ulp
    i = int(np.argmax(err))
    print(f"emulated float32: max {err[i]:.2f} ulp at x = {x[i]:.9g}, mean {err.mean():.3f} ulp")


if __name__ == "__main__":
    main()

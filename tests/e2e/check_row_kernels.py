#!/usr/bin/env python3
"""Row kernels (compiler/schedule/row_reduction.cpp) against ONNX Runtime (or
NumPy where ONNX Runtime lacks the op): a pointwise def computed with the
reductions it reads once per row, one work-item per row (softmax's max and
sum of exponentials, a normalization's mean and inverse deviation, the
decomposed LayerNorm that exporters write).

Shapes exercise each path: a row that is a multiple of the vector lanes, one
with a remainder, one shorter than the lanes, a row axis that is not the
last (not a row group), several row axes (opset 11 Softmax, LayerNormalization
over two axes), a 1-D tensor (no parallel loop at all), symbolic batch 0, 1
and odd; float32, float64 and int32; inputs at the limits (values of 1e30
that overflow exp without the max subtracted, -inf and NaN entries, a row
that is all -inf). Each case also checks the kernel structure: the row
group is one kernel of template "row" with vector lanes where the row is
the contiguous last axis (under the generic-gpu profile the same kernel
with a work-group per row, group_reduce.cpp groupRowKernel, run also
with groups of 2 and 32), while the naive kernels keep the reductions
apart, and a reduction read by anything besides the row stays a kernel
of its own.

Every case runs with 8- and 16-lane profiles, and through --kernel-configs
with lanes 0 (scalar loops), 4 and 16.

Usage: check_row_kernels.py AOTC    (prints "row kernels ok")
       check_row_kernels.py AOTC --write-cases DIR
           (writes the cases in backend-test layout and their .so files,
           compiled for the default CPU profile, into DIR for
           bench/gpu/check_gpu.py on another device)
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
import run_fuzz  # noqa: E402

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int32: TensorProto.INT32}
f32, f64, i32 = np.float32, np.float64, np.int32


def value(name, dtype, shape):
    return helper.make_tensor_value_info(name, ONNX_TYPE[dtype], shape)


def random(rng, dtype, shape, limits=False):
    if dtype == i32:
        return rng.integers(-2**30, 2**30, size=shape).astype(i32)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if limits and x.size:
        flat = x.reshape(-1)
        k = max(1, flat.size // 7)
        flat[rng.choice(flat.size, k, replace=False)] = 1e30
        flat[rng.choice(flat.size, k, replace=False)] = -np.inf
        flat[rng.choice(flat.size, 1)] = np.nan
        if x.ndim >= 1 and x.shape[-1] and x.size >= 2 * x.shape[-1]:
            x.reshape(-1, x.shape[-1])[1] = -np.inf  # a row of -inf: NaN out
    return x


def ln_nodes(axis=-1):
    """LayerNorm as exporters decompose it (BERT), after a residual Add."""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, f32), name))
    return [helper.make_node("Add", ["x", "res"], ["h"]),
            helper.make_node("ReduceMean", ["h"], ["mu"], axes=[axis]),
            helper.make_node("Sub", ["h", "mu"], ["d"]),
            c("two", 2.0), c("eps", 1e-5),
            helper.make_node("Pow", ["d", "two"], ["d2"]),
            helper.make_node("ReduceMean", ["d2"], ["var"], axes=[axis]),
            helper.make_node("Add", ["var", "eps"], ["ve"]),
            helper.make_node("Sqrt", ["ve"], ["sd"]),
            helper.make_node("Div", ["d", "sd"], ["n"]),
            helper.make_node("Mul", ["n", "g"], ["s"]),
            helper.make_node("Add", ["s", "bb"], ["y"])]


def cases():
    """(name, opset, nodes, inputs [(name, dtype, declared shape)], outputs
    [(name, dtype, declared shape)], concrete input shapes per test set,
    kernels with the row group (None: not checked), lanes expected in the
    row kernel with 8-lane vectors (0: scalar), limits, numpy reference)."""
    out = []
    sm = lambda axis, op="Softmax": [helper.make_node(op, ["x"], ["y"], axis=axis)]
    for n in (37, 64, 5, 300):
        out.append((f"softmax_last_{n}", 17, sm(-1), [("x", f32, ["b", 3, n])],
                    [("y", f32, ["b", 3, n])],
                    [{"x": [b, 3, n]} for b in (0, 1, 3)], 1, 8 if n >= 8 else 0, True, None))
    # float64 rows of a whole number of vectors: the exponentials kept for
    # the division too (KEPT_TERMS).
    out.append(("softmax_f64_64", 17, sm(-1), [("x", f64, ["b", 64])], [("y", f64, ["b", 64])],
                [{"x": [b, 64]} for b in (1, 3)], 1, 8, True, None))
    # A row that is not the last axis: walked with a stride, it stays apart
    # (max, sum, then the normalization along the contiguous last axis).
    out.append(("softmax_middle_axis", 17, sm(1), [("x", f32, ["b", 7, 5])],
                [("y", f32, ["b", 7, 5])], [{"x": [b, 7, 5]} for b in (1, 2)], 3, None, True, None))
    out.append(("softmax_1d", 17, sm(0), [("x", f32, [29])], [("y", f32, [29])],
                [{"x": [29]}], 1, 8, True, None))
    # NumPy's reference: ONNX Runtime's float64 LogSoftmax drops a NaN from
    # the row's max and sum (its float32 one propagates it, as aotc does).
    def logsoftmax(arrays):
        x = arrays[0]
        with np.errstate(invalid="ignore", over="ignore"):
            m = np.max(x, axis=-1, keepdims=True)
            return [x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))]
    out.append(("logsoftmax_f64", 17, sm(-1, "LogSoftmax"), [("x", f64, ["b", 100])],
                [("y", f64, ["b", 100])], [{"x": [b, 100]} for b in (1, 4)], 1, 8, True, logsoftmax))
    out.append(("softmax_opset11_trailing", 11, sm(1), [("x", f32, [2, 3, 4, 5])],
                [("y", f32, [2, 3, 4, 5])], [{"x": [2, 3, 4, 5]}], 1, 0, True, None))
    ln = lambda axis, dims: [helper.make_node("LayerNormalization", ["x", "g", "bb"], ["y"],
                                              axis=axis, epsilon=1e-5)]
    out.append(("layernorm_last", 17, ln(-1, 1), [("x", f32, ["b", 5, 40]), ("g", f32, [40]), ("bb", f32, [40])],
                [("y", f32, ["b", 5, 40])], [{"x": [b, 5, 40], "g": [40], "bb": [40]} for b in (1, 3)],
                1, 8, False, None))
    out.append(("layernorm_two_axes", 17, ln(-2, 2), [("x", f32, [3, 6, 12]), ("g", f32, [6, 12]),
                                                      ("bb", f32, [6, 12])],
                [("y", f32, [3, 6, 12])], [{"x": [3, 6, 12], "g": [6, 12], "bb": [6, 12]}], 1, 8, False, None))
    out.append(("layernorm_decomposed", 13, ln_nodes(), [("x", f32, ["b", 7, 48]), ("res", f32, ["b", 7, 48]),
                                                        ("g", f32, [48]), ("bb", f32, [48])],
                [("y", f32, ["b", 7, 48])],
                [{"x": [b, 7, 48], "res": [b, 7, 48], "g": [48], "bb": [48]} for b in (1, 2)], 1, 8, False, None))

    # Divisions by compile-time constants multiply by the reciprocal
    # (lower_elementwise.cpp, reciprocalOfConstant): 3 (rounded), 8 (exact),
    # and 1e38, whose reciprocal would be subnormal, so it divides; with
    # 1e30, -inf and NaN inputs. Not row kernels.
    cst = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, f32), name))
    out.append(("divide_by_constants", 17,
                [cst("three", 3.0), cst("eight", [8.0]), cst("huge", 1e38),
                 helper.make_node("Div", ["x", "three"], ["a"]),
                 helper.make_node("Div", ["a", "eight"], ["b"]),
                 helper.make_node("Div", ["x", "huge"], ["c"]),
                 helper.make_node("Add", ["b", "c"], ["y"])],
                [("x", f32, ["b", 37])], [("y", f32, ["b", 37])],
                [{"x": [b, 37]} for b in (0, 1, 3)], None, None, True, None))

    def rms(arrays):
        x, g = arrays
        return [(x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-6) * g).astype(f32)]
    out.append(("rmsnorm_opset23", 23,
                [helper.make_node("RMSNormalization", ["x", "g"], ["y"], axis=-1, epsilon=1e-6)],
                [("x", f32, ["b", 20]), ("g", f32, [20])], [("y", f32, ["b", 20])],
                [{"x": [b, 20], "g": [20]} for b in (1, 5)], 1, 8, False, rms))
    # InstanceNormalization: the rows are each (batch, channel)'s spatial
    # dims; scale and bias are read per channel (dim 1).
    inorm = [helper.make_node("InstanceNormalization", ["x", "g", "bb"], ["y"], epsilon=1e-3)]

    def inorm_ref(arrays):
        x, g, b = arrays
        axes = tuple(range(2, x.ndim))
        xd = x.astype(np.float64)
        m = xd.mean(axis=axes, keepdims=True)
        v = ((xd - m) ** 2).mean(axis=axes, keepdims=True)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return [((xd - m) / np.sqrt(v + 1e-3) * g.reshape(shape) + b.reshape(shape)).astype(x.dtype)]
    out.append(("instancenorm_2d", 17, inorm, [("x", f32, ["b", 5, 7, 9]), ("g", f32, [5]), ("bb", f32, [5])],
                [("y", f32, ["b", 5, 7, 9])], [{"x": [b, 5, 7, 9], "g": [5], "bb": [5]} for b in (0, 1, 3)],
                1, 8, False, None))
    out.append(("instancenorm_1d_short", 6, inorm, [("x", f32, [2, 3, 5]), ("g", f32, [3]), ("bb", f32, [3])],
                [("y", f32, [2, 3, 5])], [{"x": [2, 3, 5], "g": [3], "bb": [3]}], 1, 0, False, None))
    out.append(("instancenorm_3d_f64", 22, inorm, [("x", f64, ["b", 4, 3, 5, 6]), ("g", f64, [4]),
                                                  ("bb", f64, [4])],
                [("y", f64, ["b", 4, 3, 5, 6])], [{"x": [b, 4, 3, 5, 6], "g": [4], "bb": [4]} for b in (1, 2)],
                1, 0, False, inorm_ref))  # three row axes: scalar loops
    # Integers: x - max(x) per row (no wrap: both int32): the max in a
    # scalar loop, the row's differences stored as int vectors (8 lanes and
    # the remainder).
    out.append(("int32_minus_rowmax", 17,
                [helper.make_node("ReduceMax", ["x"], ["m"], axes=[-1]),
                 helper.make_node("Sub", ["x", "m"], ["y"])],
                [("x", i32, ["b", 19])], [("y", i32, ["b", 19])], [{"x": [b, 19]} for b in (1, 3)],
                1, 8, False, None))
    # Long rows: on GPU profiles their reductions run as work-group
    # reductions (compiler/schedule/group_reduce.cpp): BERT's LayerNorm
    # width; an integer max of 200 (not a multiple of the group); a float64
    # sum over two axes (480 terms, the flat index unflattened).
    out.append(("layernorm_768", 17, ln(-1, 1), [("x", f32, ["b", 3, 768]), ("g", f32, [768]),
                                                ("bb", f32, [768])],
                [("y", f32, ["b", 3, 768])], [{"x": [b, 3, 768], "g": [768], "bb": [768]} for b in (1, 2)],
                1, 8, False, None))
    out.append(("int32_minus_rowmax_200", 17,
                [helper.make_node("ReduceMax", ["x"], ["m"], axes=[-1]),
                 helper.make_node("Sub", ["x", "m"], ["y"])],
                [("x", i32, ["b", 200])], [("y", i32, ["b", 200])], [{"x": [b, 200]} for b in (1, 3)],
                1, 8, False, None))
    out.append(("sum_two_axes_f64", 17,
                [helper.make_node("Constant", [], ["ax"],
                                  value=numpy_helper.from_array(np.array([1, 2], np.int64), "ax")),
                 helper.make_node("ReduceSum", ["x", "ax"], ["y"], keepdims=1)],
                [("x", f64, ["b", 12, 40])], [("y", f64, ["b", 1, 1])],
                [{"x": [b, 12, 40]} for b in (1, 2)], 1, None, False, None))
    # The row sum is also a graph output: it keeps its own kernel.
    out.append(("rowsum_also_output", 17,
                [helper.make_node("Constant", [], ["ax"], value=numpy_helper.from_array(np.array([1], np.int64), "ax")),
                 helper.make_node("ReduceSum", ["x", "ax"], ["s"]),
                 helper.make_node("Div", ["x", "s"], ["y"])],
                [("x", f32, ["b", 24])], [("y", f32, ["b", 24]), ("s", f32, ["b", 1])],
                [{"x": [b, 24]} for b in (1, 2)], 2, None, False, None))
    # The row max is read by two pointwise consumers: both keep it apart.
    out.append(("rowmax_two_consumers", 17,
                [helper.make_node("ReduceMax", ["x"], ["m"], axes=[-1]),
                 helper.make_node("Sub", ["x", "m"], ["y"]),
                 helper.make_node("Add", ["x", "m"], ["z"])],
                [("x", f32, ["b", 24])], [("y", f32, ["b", 24]), ("z", f32, ["b", 24])],
                [{"x": [b, 24]} for b in (1, 2)], 3, None, False, None))
    # Pointwise rows that read every other element (Slice with step 2):
    # vectors loaded as the even lanes of two contiguous loads, the last
    # lane on the input's last element (start 1 of 66, start 0 of 65); a
    # step of 3 stays scalar.
    def strided_slice(name, width, start, step, ends):
        consts = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(np.array([v], np.int64), k))
                  for k, v in (("st", start), ("en", ends), ("ax", 2), ("sp", step))]
        cols = len(range(start, min(ends, width), step))
        out.append((name, 17, consts + [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
                                        helper.make_node("Relu", ["s"], ["y"])],
                    [("x", f32, ["b", 3, width])], [("y", f32, ["b", 3, cols])],
                    [{"x": [b, 3, width]} for b in (0, 1, 2)], 1, None, True, None))
    strided_slice("slice_step2_odd_start", 66, 1, 2, 66)
    strided_slice("slice_step2_w65", 65, 0, 2, 65)
    strided_slice("slice_step3", 70, 2, 3, 70)
    return out


# Cases whose rows are long enough (64 terms or more) for a work-group
# reduction on GPU profiles.
LONG_ROWS = {"softmax_last_64", "softmax_last_300", "logsoftmax_f64", "layernorm_768", "layernorm_two_axes",
             "int32_minus_rowmax_200", "sum_two_axes_f64", "instancenorm_3d_f64"}


def kernel_configs(aotc, model, env, *extra):
    res = run_fuzz.run_tool([aotc, "compile", model, "--emit=kernel-configs", *extra], env=env)
    if res.returncode != 0:
        return None, res.stderr.strip()
    return json.loads(res.stdout)["kernels"], ""


# Row kernels whose stage term the output computes again, kept in a
# private array of the row (row_reduction.cpp, termReuse: softmax's
# exponentials, where the row is a whole number of vectors) under the
# default profile: `row_vals` in the OpenCL C and one exp per element.
# Every other case computes its terms where they are read.
KEPT_TERMS = {"softmax_last_64", "softmax_f64_64"}


def main():
    aotc = os.path.abspath(sys.argv[1])
    keep = sys.argv[3] if len(sys.argv) == 4 and sys.argv[2] == "--write-cases" else None
    rng = np.random.default_rng(20261126)
    failures = []
    variants = 0
    group_variants = 0
    with tempfile.TemporaryDirectory() as tmp:
        if keep:
            tmp = os.path.abspath(keep)
            os.makedirs(tmp, exist_ok=True)
        env = dict(os.environ, AOTC_CACHE_DIR=os.path.join(tmp, "cache"))
        dirs = []
        for name, opset, nodes, inputs, outputs, sets, kernels, lanes, limits, reference in cases():
            graph = helper.make_graph(nodes, name, [value(n, d, s) for n, d, s in inputs],
                                      [value(n, d, s) for n, d, s in outputs])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
            model.ir_version = 8 if opset < 21 else 10
            case = os.path.join(tmp, name)
            sess = None if reference else ort.InferenceSession(model.SerializeToString(),
                                                               providers=["CPUExecutionProvider"])
            for i, shapes in enumerate(sets):
                arrays = [random(rng, d, shapes[n], limits and i > 0) for n, d, _ in inputs]
                ref = reference(arrays) if reference else \
                    sess.run(None, dict(zip([n for n, _, _ in inputs], arrays)))
                run_fuzz.write_case(case, model, arrays, ref)
                os.rename(os.path.join(case, "test_data_set_0"), os.path.join(case, f"set_{i}"))
            for i in range(len(sets)):
                os.rename(os.path.join(case, f"set_{i}"), os.path.join(case, f"test_data_set_{i}"))
            path = os.path.join(case, "model.onnx")
            if keep:
                res = run_fuzz.run_tool([aotc, "compile", path, "-o", case + ".so"], env=env)
                print(name, "compiled" if res.returncode == 0 else res.stderr.strip())
                continue
            configs, err = kernel_configs(aotc, path, env)
            if configs is None:
                failures.append(f"{name}: compile failed: {err}")
                continue
            rows = {k: c for k, c in configs.items() if c["template"] == "row"}
            if kernels is not None and len(configs) != kernels:
                failures.append(f"{name}: {len(configs)} kernels, expected {kernels}: {sorted(configs)}")
            if lanes is not None and [c["lanes"] for c in rows.values()] != [lanes]:
                failures.append(f"{name}: row kernels {rows}, expected one with {lanes} lanes")
            if lanes is None and rows:
                failures.append(f"{name}: the reduction should not join a row group: {rows}")
            cl = run_fuzz.run_tool([aotc, "compile", path, "--emit=cl"], env=env).stdout
            if ("row_vals[" in cl) != (name in KEPT_TERMS) or \
                    (name in KEPT_TERMS and cl.count("exp(") != 1):
                failures.append(f"{name}: expected {'one exp kept in row_vals' if name in KEPT_TERMS else 'no row_vals'}"
                                f" ({cl.count('exp(')} exp calls)")
            other, err = kernel_configs(aotc, path, env, "--naive-kernels")
            if other is None or any(c["template"] == "row" for c in other.values()):
                failures.append(f"{name}: --naive-kernels made a row kernel: {other or err}")
            # GPUs: the same row groups, each a work-group per row.
            gpu, err = kernel_configs(aotc, path, env, "--device-profile", "generic-gpu")
            gpu_rows = {k: c for k, c in (gpu or {}).items() if c["template"] == "row"}
            if gpu is None or sorted(gpu_rows) != sorted(rows) or \
                    any(not c.get("group_reduce") for c in gpu_rows.values()):
                failures.append(f"{name}: generic-gpu row kernels {gpu_rows or err}, expected "
                                f"{sorted(rows)} with a work-group each")
            dirs.append(case)
            for kernel in rows:
                for lanes_v in (0, 4, 16):
                    cfg = os.path.join(tmp, "configs.json")
                    with open(cfg, "w") as f:
                        json.dump({"kernels": {kernel: {"template": "row", "lanes": lanes_v}}}, f)
                    got, err = kernel_configs(aotc, path, env, "--kernel-configs", cfg)
                    if got is None or got[kernel]["lanes"] != lanes_v:
                        failures.append(f"{name}: lanes {lanes_v} not compiled as given: {got or err}")
                        continue
                    res = run_fuzz.run_tool([aotc, "test", "--kernel-configs", cfg, case], env=env)
                    variants += 1
                    if res.returncode != 0:
                        failures.append(f"{name}: lanes {lanes_v}: {res.stdout.strip()} {res.stderr.strip()}")
        if keep:
            return
        failures += run_fuzz.test_with_profiles(aotc, dirs, env)
        # Work-group reductions (group_reduce.cpp): the GPU profile picks
        # them for the long rows, and every reduction kernel of every case
        # runs with groups of 2 and 32 work-items per output (sizes that do
        # not divide the terms, groups larger than the row) on PoCL.
        for case in dirs:
            name = os.path.basename(case)
            path = os.path.join(case, "model.onnx")
            gpu, err = kernel_configs(aotc, path, env, "--device-profile", "generic-gpu")
            if gpu is None:
                failures.append(f"{name}: generic-gpu compile failed: {err}")
                continue
            grouped = [k for k, c in gpu.items()
                       if c.get("group_reduce") and c["template"] == "reduction"]
            if name in LONG_ROWS and not grouped and not any(
                    c.get("group_reduce") for c in gpu.values()):
                failures.append(f"{name}: generic-gpu made no work-group reduction: {gpu}")
            if name not in LONG_ROWS and grouped:
                failures.append(f"{name}: generic-gpu made a work-group reduction of a short row: {gpu}")
            for kernel, c in gpu.items():
                if c["template"] not in ("reduction", "row"):
                    continue
                for size in (2, 32):
                    cfg = os.path.join(tmp, "configs.json")
                    with open(cfg, "w") as f:
                        json.dump({"kernels": {kernel: {"template": c["template"],
                                                        "group_reduce": size}}}, f)
                    res = run_fuzz.run_tool([aotc, "test", "--device-profile", "generic-gpu",
                                             "--kernel-configs", cfg, case], env=env)
                    variants += 1
                    group_variants += 1
                    if res.returncode != 0:
                        failures.append(f"{name}: {kernel} group_reduce {size}: "
                                        f"{res.stdout.strip()} {res.stderr.strip()}")
        if group_variants < 10:
            failures.append(f"only {group_variants} work-group reduction variants ran")
        # A row kernel is not a contraction; a register tile is refused.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump({"kernels": {"k0_y": {"template": "row", "m": -1, "n": 0, "tn": 4}}}, f)
        res = run_fuzz.run_tool([aotc, "compile", os.path.join(dirs[0], "model.onnx"), "-o",
                                 os.path.join(tmp, "bad.so"), "--kernel-configs", bad], env=env)
        if res.returncode == 0 or "row kernel" not in res.stderr:
            failures.append(f"a register tile for a row kernel was not refused: {res.stderr.strip()}")
    print(f"kernel-configs variants: {variants} compiled and checked")
    for f in failures:
        print("FAILED:", f)
    if failures or variants == 0:
        sys.exit(1)
    print("row kernels ok:", len(dirs), "cases")


if __name__ == "__main__":
    main()

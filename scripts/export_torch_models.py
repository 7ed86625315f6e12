#!/usr/bin/python3
"""Exports small PyTorch models to ONNX, with PyTorch's own outputs as oracle test data.

Run from anywhere (needs Debian's PyTorch, `apt-get install -y python3-torch python3-onnx`):

    /usr/bin/python3 scripts/export_torch_models.py

Use /usr/bin/python3 (Debian's python with torch 1.13, onnx 1.12 and numpy), not a pyenv python.
The generated files are committed, so CI and the test suite never need torch. The script is
deterministic: re-running it rewrites byte-identical files.

What it writes (ONNX backend-test layout, read by `aotc test CASE_DIR`):

    tests/models/<case>/model.onnx
    tests/models/<case>/test_data_set_{0,1,2}/input_<i>.pb, output_<i>.pb   (batch 1, 7, 64)
    examples/models/mlp_gelu.onnx                 (the bundled example model)
    examples/models/mlp_gelu_input_0.pb           (one input at batch 4)

Every model has a dynamic leading dimension named "batch", opset 13 and IR version <= 8 (what Debian's
torch 1.13 exporter writes). For each model the script also runs the model in float64 and prints how far the float32
outputs are from it, so that test tolerances can be chosen against a known floor.
"""

import collections
import os
import sys

import numpy as np
import onnx
import onnx.checker
import onnx.shape_inference
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPSET = 13
MAX_IR_VERSION = 8
BATCH_SIZES = (1, 7, 64)
EXAMPLE_BATCH = 4


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


class MlpGelu(nn.Module):
    """Gemm -> exact (erf) GELU -> Gemm -> GELU -> Gemm -> Softmax."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, 10)
        self.act = nn.GELU(approximate="none")

    def forward(self, x):
        h = self.act(self.fc1(x))
        h = self.act(self.fc2(h))
        return torch.softmax(self.fc3(h), dim=-1)


class CnnSmall(nn.Module):
    """Convolutions of several kinds, BatchNorm (one folded by the exporter, one kept), pooling."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)  # [B,8,16,16]
        self.bn1 = nn.BatchNorm2d(8)  # directly after a conv: the exporter folds it
        self.pool1 = nn.MaxPool2d(2)  # [B,8,8,8]
        self.conv_dil = nn.Conv2d(8, 8, 3, padding=2, dilation=2)  # [B,8,8,8]
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, dilation=1)  # [B,16,4,4]
        self.conv3 = nn.Conv2d(16, 16, 3, padding=1, groups=4)  # [B,16,4,4]
        self.bn2 = nn.BatchNorm2d(16)  # after a ReLU: stays a BatchNormalization node
        self.pool2 = nn.AvgPool2d(2, ceil_mode=False)  # [B,16,2,2]
        self.conv4 = nn.Conv2d(16, 16, 1)  # [B,16,2,2]
        self.gap = nn.AdaptiveAvgPool2d(1)  # GlobalAveragePool
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        h = self.pool1(F.relu(self.bn1(self.conv1(x))))
        h = F.relu(self.conv_dil(h))
        h = F.relu(self.conv2(h))
        h = self.bn2(F.relu(self.conv3(h)))
        h = self.conv4(self.pool2(h))
        h = torch.flatten(self.gap(h), 1)
        return self.fc(h)


class MlpTanhSigmoid(nn.Module):
    """Elementwise math on safe ranges, reductions, views, batched MatMul, Cast, LayerNorm."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 32)
        self.w = nn.Parameter(torch.randn(8, 6) * 0.35)
        self.gamma = nn.Parameter(1.0 + 0.1 * torch.randn(48))
        self.beta = nn.Parameter(0.1 * torch.randn(48))
        self.fc2 = nn.Linear(48, 10)

    def forward(self, x):  # x: [B,32]
        h = self.fc1(x)
        a = torch.tanh(h)
        b = torch.sigmoid(h)
        c = F.hardtanh(h, -0.5, 0.5)  # Clip
        d = torch.clamp(h, min=-1.0, max=2.0)  # Clip
        p = torch.abs(h) + 0.5  # >= 0.5: safe for Sqrt, Log, Pow, Div
        e = torch.sqrt(p)
        f = torch.log(p)
        g = torch.exp(-torch.abs(h))  # Neg, Exp
        q = torch.pow(p, 1.5)
        r = (a - b) / p
        m = a + b * c - d * e + f * g + 0.1 * q + r - (1.0 - b)
        t = m.reshape(-1, 4, 8)  # Reshape with -1: [B,4,8]
        u = torch.matmul(t, self.w)  # MatMul with batch broadcast: [B,4,6]
        v = u.transpose(1, 2)  # [B,6,4]
        mx = torch.amax(v, dim=-1, keepdim=True)  # ReduceMax [B,6,1]
        ev = torch.exp(v - mx)
        sm = ev / torch.sum(ev, dim=-1, keepdim=True)  # ReduceSum
        mean = torch.mean(v, dim=-1, keepdim=True)  # ReduceMean
        feat = torch.cat([sm, v - mean], dim=-1)  # Concat [B,6,8]
        feat = feat.unsqueeze(1).squeeze(1)  # Unsqueeze, Squeeze
        flat = feat.reshape(feat.shape[0], -1)  # Shape -> Gather -> Concat -> Reshape: [B,48]
        mu = flat.mean(-1, keepdim=True)  # LayerNorm, decomposed
        xc = flat - mu
        var = xc.pow(2).mean(-1, keepdim=True)
        ln = xc / torch.sqrt(var + 1e-5) * self.gamma + self.beta
        # Cast: bool -> int64, an int64 ReduceSum, int64 -> float.
        npos = (h > 0).to(torch.int64).sum(-1, keepdim=True).to(h.dtype)  # [B,1]
        y = self.fc2(ln) * (1.0 + npos / 32.0)
        stats = torch.cat([mx.squeeze(-1), mean.squeeze(-1)], dim=-1)  # [B,12]
        return y, stats


def randomize_batchnorm(module, gen):
    """Non-trivial running statistics and affine parameters (not 0/1)."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(0.5 * torch.randn(n, generator=gen))
                m.running_var.copy_(0.5 + 1.5 * torch.rand(n, generator=gen))
                m.weight.copy_(0.5 + torch.rand(n, generator=gen))
                m.bias.copy_(0.3 * torch.randn(n, generator=gen))


# name, constructor, seed, input names and per-sample shapes, output names,
# op types that must appear in the exported graph
CASES = [
    dict(name="mlp_gelu", make=MlpGelu, seed=1001,
         inputs=[("x", (64,))], outputs=["y"],
         required_ops={"Gemm", "Erf", "Mul", "Add", "Div", "Softmax"}),
    dict(name="cnn_small", make=CnnSmall, seed=1002,
         inputs=[("x", (3, 16, 16))], outputs=["y"],
         required_ops={"Conv", "BatchNormalization", "Relu", "MaxPool", "AveragePool",
                       "GlobalAveragePool", "Flatten", "Gemm"}),
    dict(name="mlp_tanh_sigmoid", make=MlpTanhSigmoid, seed=1003,
         inputs=[("x", (32,))], outputs=["y", "stats"],
         required_ops={"Tanh", "Sigmoid", "Clip", "Sub", "Div", "Pow", "Sqrt", "Neg", "Abs",
                       "Exp", "Log", "ReduceMean", "ReduceSum", "ReduceMax", "Transpose",
                       "Reshape", "Unsqueeze", "Squeeze", "Concat", "MatMul", "Cast"}),
]


# --------------------------------------------------------------------------------------------
# Export and test data
# --------------------------------------------------------------------------------------------


def make_inputs(case, batch):
    """Normal-distributed inputs, seeded by (case seed, batch size)."""
    gen = torch.Generator().manual_seed(case["seed"] * 1000 + batch)
    return [torch.randn((batch,) + shape, generator=gen, dtype=torch.float32)
            for _, shape in case["inputs"]]


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def write_tensor(path, array, name):
    tensor = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def export(model, case, path):
    in_names = [n for n, _ in case["inputs"]]
    dynamic_axes = {n: {0: "batch"} for n in in_names + case["outputs"]}
    example = tuple(make_inputs(case, 2))
    torch.onnx.export(model, example, path, opset_version=OPSET, input_names=in_names,
                      output_names=case["outputs"], dynamic_axes=dynamic_axes,
                      do_constant_folding=True, export_params=True)
    proto = onnx.load(path)
    if proto.ir_version > MAX_IR_VERSION:
        proto.ir_version = MAX_IR_VERSION
        onnx.save(proto, path)
    return proto


def check_model(proto, case):
    onnx.checker.check_model(proto, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    opsets = {o.domain: o.version for o in proto.opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == OPSET, opsets
    assert proto.ir_version <= MAX_IR_VERSION, proto.ir_version
    ops = collections.Counter(n.op_type for n in proto.graph.node)
    missing = case["required_ops"] - set(ops)
    assert not missing, f"{case['name']}: ops missing from the export: {sorted(missing)}"
    assert [i.name for i in proto.graph.input] == [n for n, _ in case["inputs"]]
    assert [o.name for o in proto.graph.output] == case["outputs"]
    for vi in list(proto.graph.input) + list(proto.graph.output):
        assert vi.type.tensor_type.shape.dim[0].dim_param == "batch", vi
    return inferred, ops


def dims_str(vi):
    dims = [d.dim_param if d.HasField("dim_param") else str(d.dim_value)
            for d in vi.type.tensor_type.shape.dim]
    dtype = onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type).lower()
    return f"{vi.name}: {dtype}[{', '.join(dims)}]"


def float64_error(model, inputs, outs32):
    """Largest error of the float32 outputs against the same model run in float64."""
    m64 = model.double()
    with torch.no_grad():
        outs64 = as_tuple(m64(*[t.double() for t in inputs]))
    model.float()
    worst_abs = worst_rel = worst_scaled = 0.0
    for o32, o64 in zip(outs32, outs64):
        a, r = o32.double().numpy(), o64.numpy()
        diff = np.abs(a - r)
        worst_abs = max(worst_abs, float(diff.max()))
        worst_rel = max(worst_rel, float((diff / np.maximum(np.abs(r), 1e-6)).max()))
        worst_scaled = max(worst_scaled, float(diff.max() / max(np.abs(r).max(), 1e-30)))
    return worst_abs, worst_rel, worst_scaled


def rel(path):
    return os.path.relpath(path, ROOT)


def build_case(case):
    torch.manual_seed(case["seed"])
    model = case["make"]()
    randomize_batchnorm(model, torch.Generator().manual_seed(case["seed"] + 7))
    model.eval()

    case_dir = os.path.join(ROOT, "tests", "models", case["name"])
    os.makedirs(case_dir, exist_ok=True)
    model_path = os.path.join(case_dir, "model.onnx")
    proto = export(model, case, model_path)
    inferred, ops = check_model(proto, case)

    files = [model_path]
    errors = []
    for k, batch in enumerate(BATCH_SIZES):
        inputs = make_inputs(case, batch)
        with torch.no_grad():
            outs = as_tuple(model(*inputs))
        assert all(o.dtype == torch.float32 and o.shape[0] == batch for o in outs)
        assert all(torch.isfinite(o).all() for o in outs)
        data_dir = os.path.join(case_dir, f"test_data_set_{k}")
        os.makedirs(data_dir, exist_ok=True)
        for i, ((name, _), t) in enumerate(zip(case["inputs"], inputs)):
            files.append(os.path.join(data_dir, f"input_{i}.pb"))
            write_tensor(files[-1], t.numpy(), name)
        for i, (name, t) in enumerate(zip(case["outputs"], outs)):
            files.append(os.path.join(data_dir, f"output_{i}.pb"))
            write_tensor(files[-1], t.numpy(), name)
        errors.append((batch,) + float64_error(model, inputs, outs))

    if case["name"] == "mlp_gelu":
        ex_dir = os.path.join(ROOT, "examples", "models")
        os.makedirs(ex_dir, exist_ok=True)
        ex_model = os.path.join(ex_dir, "mlp_gelu.onnx")
        with open(model_path, "rb") as src, open(ex_model, "wb") as dst:
            dst.write(src.read())
        ex_input = os.path.join(ex_dir, "mlp_gelu_input_0.pb")
        write_tensor(ex_input, make_inputs(case, EXAMPLE_BATCH)[0].numpy(), "x")
        files += [ex_model, ex_input]

    # summary
    n_weights = sum(numpy_helper.to_array(t).nbytes for t in proto.graph.initializer)
    print(f"== {case['name']}  ({rel(case_dir)})")
    print(f"   opset {proto.opset_import[0].version}, ir_version {proto.ir_version}, "
          f"{len(proto.graph.node)} nodes, {len(proto.graph.initializer)} initializers "
          f"({n_weights} bytes)")
    print("   ops: " + ", ".join(f"{op} x{n}" for op, n in sorted(ops.items())))
    for vi in proto.graph.input:
        print("   input  " + dims_str(vi))
    for vi in inferred.graph.output:
        print("   output " + dims_str(vi))
    for f in files:
        print(f"   {os.path.getsize(f):8d}  {rel(f)}")
    for batch, e_abs, e_rel, e_scaled in errors:
        print(f"   float32 vs float64, batch {batch:2d}: max abs {e_abs:.3e}, "
              f"max elementwise rel {e_rel:.3e}, max abs / max |ref| {e_scaled:.3e}")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, onnx {onnx.__version__}, numpy {np.__version__}")
    for case in CASES:
        build_case(case)
    return 0


if __name__ == "__main__":
    sys.exit(main())

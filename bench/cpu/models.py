"""The benchmark's models: names, what they are, their inputs and FLOP counts.

Pure Python (no numpy, no torch), imported both by the exporter
(bench/cpu/export_models.py, Debian's python with torch) and by the driver
(bench/cpu/run.py, .venv-bench). Every model but the GEMMs has a leading
symbolic dimension named "batch"; the GEMMs have static shapes.
"""

import collections
import os

# An input: name, shape (a string entry is the symbolic batch dim), dtype
# ("float32" or "int64"), and for int64 inputs the exclusive upper bound of the
# random values (token ids).
Input = collections.namedtuple("Input", "name shape dtype high", defaults=(None,))

# family: "gemm", "conv" or "net"; flops: a function of the batch (None when
# not counted; GEMMs and convs only, 2*M*N*K); seed: the weights' seed.
Model = collections.namedtuple("Model", "name family desc inputs flops seed export")

SEQ = 128  # BERT-base and GPT-2 sequence length


def _gemm(m, n, k, seed):
    name = f"gemm_{m}x{n}x{k}" if not (m == n == k) else f"gemm_{m}"
    return Model(name, "gemm", f"MatMul A[{m},{k}] x const B[{k},{n}]",
                 [Input("A", [m, k], "float32")], lambda b: 2.0 * m * n * k, seed,
                 ("gemm", dict(m=m, n=n, k=k)))


def _conv(name, desc, cin, cout, k, stride, pad, hw, groups, seed):
    hout = (hw + 2 * pad - k) // stride + 1
    flops = lambda b: 2.0 * b * cout * hout * hout * (cin // groups) * k * k
    return Model(name, "conv", desc, [Input("x", ["batch", cin, hw, hw], "float32")], flops, seed,
                 ("conv", dict(cin=cin, cout=cout, k=k, stride=stride, pad=pad, hw=hw, groups=groups)))


def _net(name, desc, inputs, seed):
    return Model(name, "net", desc, inputs, None, seed, ("torch", dict(arch=name)))


IMAGE = [Input("input", ["batch", 3, 224, 224], "float32")]

MODELS = [
    _gemm(512, 512, 512, 1),
    _gemm(1024, 1024, 1024, 2),
    _gemm(2048, 2048, 2048, 3),
    _gemm(4096, 4096, 4096, 4),
    # Transformer shapes (BERT-base, 128 tokens): FFN up, FFN down, attention projection.
    _gemm(128, 3072, 768, 5),
    _gemm(128, 768, 3072, 6),
    _gemm(128, 768, 768, 7),
    _conv("conv_r50_stem", "ResNet-50 stem: 3->64, 7x7/2, 224x224", 3, 64, 7, 2, 3, 224, 1, 11),
    _conv("conv_r50_3x3", "ResNet-50 layer1: 64->64, 3x3, 56x56", 64, 64, 3, 1, 1, 56, 1, 12),
    _conv("conv_r50_1x1", "ResNet-50 layer1: 256->64, 1x1, 56x56", 256, 64, 1, 1, 0, 56, 1, 13),
    _conv("conv_mv2_dw112", "MobileNetV2 depthwise 3x3, 32ch, 112x112", 32, 32, 3, 1, 1, 112, 32, 14),
    _conv("conv_mv2_dw14", "MobileNetV2 depthwise 3x3, 384ch, 14x14", 384, 384, 3, 1, 1, 14, 384, 15),
    _net("mlp", "MLP 1024-4096-4096-1000, ReLU", [Input("x", ["batch", 1024], "float32")], 21),
    # The MLP's weights by ONNX Runtime's dynamic quantization (int8 weights,
    # DynamicQuantizeLinear + MatMulInteger per layer): made from mlp.onnx by
    # run.py (quantize_dynamic needs onnxruntime, which the exporter's Python
    # lacks).
    Model("mlp_int8", "net", "the MLP by ONNX Runtime's quantize_dynamic (int8 weights, MatMulInteger)",
          [Input("x", ["batch", 1024], "float32")], None, 21,
          ("quantize", dict(source="mlp", weights="QInt8"))),
    _net("resnet18", "torchvision ResNet-18, 224x224", IMAGE, 22),
    # uint8 weights: ONNX Runtime 1.20 has no ConvInteger for int8 ones.
    Model("resnet18_uint8", "net", "ResNet-18 by ONNX Runtime's quantize_dynamic (uint8 weights, "
          "ConvInteger)", IMAGE, None, 22, ("quantize", dict(source="resnet18", weights="QUInt8"))),
    _net("resnet50", "torchvision ResNet-50, 224x224", IMAGE, 23),
    _net("mobilenet_v2", "torchvision MobileNetV2, 224x224", IMAGE, 24),
    _net("bert_base", f"BERT-base encoder, seq {SEQ}, last hidden state",
         [Input("input_ids", ["batch", SEQ], "int64", 30522)], 25),
    _net("gpt2", f"GPT-2 small, seq {SEQ}, logits",
         [Input("input_ids", ["batch", SEQ], "int64", 50257)], 26),
]

BY_NAME = {m.name: m for m in MODELS}

# The GPU suite (bench/gpu/suite.py) adds the top of issue 9's SGEMM range.
GPU_MODELS = MODELS[:4] + [_gemm(8192, 8192, 8192, 8)] + MODELS[4:]
GPU_BY_NAME = {m.name: m for m in GPU_MODELS}

# --quick: two small models, batch 1 only (see run.py).
QUICK = ["gemm_512", "mobilenet_v2"]


def select(spec):
    """Model names from a comma list of names and family names ("gemm", "conv",
    "net", "all")."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        if part == "all":
            names = [m.name for m in MODELS]
        elif part in ("gemm", "conv", "net"):
            names = [m.name for m in MODELS if m.family == part]
        elif part in BY_NAME:
            names = [part]
        else:
            raise SystemExit(f"unknown model {part!r}; known: {', '.join(BY_NAME)}, gemm, conv, net, all")
        out += [n for n in names if n not in out]
    return out


def shapes(model, batch):
    """The concrete input shapes at `batch`."""
    return [[batch if isinstance(d, str) else d for d in i.shape] for i in model.inputs]


ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
               11: "float64", 12: "uint32"}


def from_onnx(path, dims=None):
    """A Model for a user's ONNX file (`aotc bench MODEL.onnx`): its graph
    inputs (initializers excluded); a dim_param named in `dims` gets that
    value, any other becomes the batch. Family "user" ("static" when no dim is
    symbolic, so it runs once, like a GEMM). Integer inputs get values in
    [0, 2), valid as indices of any non-trivial axis."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs, symbolic = [], False
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        dt = ONNX_DTYPES.get(t.elem_type)
        if dt is None:
            raise SystemExit(f"bench: input {vi.name!r} has an element type aotc does not take")
        shape = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif dims and d.dim_param in dims:
                shape.append(dims[d.dim_param])
            else:
                shape.append("batch")
                symbolic = True
        inputs.append(Input(vi.name, shape, dt, 2 if dt not in ("float32", "float64") else None))
    name = os.path.splitext(os.path.basename(path))[0]
    return Model(name, "user" if symbolic else "static", f"{os.path.basename(path)} (user model)",
                 inputs, None, 0, None)

#!/usr/bin/python3
"""Writes the benchmark's ONNX models (bench/cpu/models.py lists them) to a folder.

Run with Debian's python (torch 1.13, torchvision 0.14, onnx 1.12; scripts/bench_env.sh
installs them):

    /usr/bin/python3 bench/cpu/export_models.py --out bench/models [NAME ...]

Nothing is downloaded: weights are random, from each model's seed, so the files are the same on
every run. GEMMs and single convolutions are built with onnx.helper (B / W constant
initializers); the networks come from PyTorch (torchvision with weights=None; BERT-base and GPT-2
small written here after the Hugging Face architectures, with their configs' sizes) exported at
opset 14, where LayerNormalization is decomposed into primitive ops. Every model has opset <= 17
and IR version <= 8 (what Debian's exporter writes). A model whose file exists is skipped (--force
rewrites it).
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as registry  # noqa: E402

OPSET = 14
MAX_IR_VERSION = 8


def save(model, path):
    assert model.ir_version <= MAX_IR_VERSION, model.ir_version
    assert all(o.version <= 17 for o in model.opset_import if o.domain in ("", "ai.onnx"))
    onnx.checker.check_model(model)
    tmp = path + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, path)


def rand(rng, shape, fan_in):
    return (rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)


def gemm(name, seed, m, n, k):
    rng = np.random.default_rng(seed)
    b = numpy_helper.from_array(rand(rng, (k, n), k), "B")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])], name,
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], [b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             ir_version=MAX_IR_VERSION, producer_name="aotc-bench")


def conv(name, seed, cin, cout, k, stride, pad, hw, groups):
    rng = np.random.default_rng(seed)
    fan_in = cin // groups * k * k
    w = numpy_helper.from_array(rand(rng, (cout, cin // groups, k, k), fan_in), "W")
    bias = numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), "bias")
    hout = (hw + 2 * pad - k) // stride + 1
    node = helper.make_node("Conv", ["x", "W", "bias"], ["y"], kernel_shape=[k, k],
                            strides=[stride, stride], pads=[pad] * 4, group=groups)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", cin, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", cout, hout, hout])], [w, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             ir_version=MAX_IR_VERSION, producer_name="aotc-bench")


# --------------------------------------------------------------------------------------------
# PyTorch networks
# --------------------------------------------------------------------------------------------


def torch_modules():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def init_transformer(module):
        """Hugging Face's initialisation: N(0, 0.02) weights and embeddings, LayerNorm (1, 0);
        biases random too (N(0, 0.02)) so that the adds are exercised."""
        for mod in module.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, std=0.02)
            if isinstance(mod, nn.Linear) and mod.bias is not None:
                nn.init.normal_(mod.bias, std=0.02)

    class Attention(nn.Module):
        """Multi-head self-attention. BERT has separate query, key and value projections; GPT-2
        one fused projection (c_attn) whose output is split in three, as in Hugging Face's."""

        def __init__(self, d, heads, seq, causal):
            super().__init__()
            self.heads, self.dh, self.seq = heads, d // heads, seq
            if causal:
                self.qkv = nn.Linear(d, 3 * d)
            else:
                self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.proj = nn.Linear(d, d)
            self.causal = causal
            if causal:  # GPT-2's causal mask
                self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

        def forward(self, x):
            s, h, dh = self.seq, self.heads, self.dh
            if self.causal:
                q, k, v = self.qkv(x).split(h * dh, dim=2)
            else:
                q, k, v = self.q(x), self.k(x), self.v(x)
            q = q.reshape(-1, s, h, dh).permute(0, 2, 1, 3)
            k = k.reshape(-1, s, h, dh).permute(0, 2, 3, 1)
            v = v.reshape(-1, s, h, dh).permute(0, 2, 1, 3)
            scores = torch.matmul(q, k) / math.sqrt(dh)
            if self.causal:  # GPT-2's masked_bias
                scores = torch.where(self.mask, scores, torch.tensor(-1e4))
            ctx = torch.matmul(F.softmax(scores, dim=-1), v)
            return self.proj(ctx.permute(0, 2, 1, 3).reshape(-1, s, h * dh))

    class BertLayer(nn.Module):
        def __init__(self, d=768, heads=12, ff=3072, seq=registry.SEQ):
            super().__init__()
            self.attn = Attention(d, heads, seq, causal=False)
            self.ln1 = nn.LayerNorm(d, eps=1e-12)
            self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)
            self.ln2 = nn.LayerNorm(d, eps=1e-12)

        def forward(self, x):
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    class Bert(nn.Module):
        """BERT-base (bert-base-uncased's config): 12 layers, hidden 768, 12 heads, FFN 3072,
        exact GELU, post-LayerNorm; token type 0 and no padding mask. Returns the last hidden
        state."""

        def __init__(self, vocab=30522, d=768, layers=12, seq=registry.SEQ):
            super().__init__()
            self.word = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(512, d)
            self.token_type = nn.Embedding(2, d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList(BertLayer() for _ in range(layers))
            self.seq = seq
            init_transformer(self)

        def forward(self, ids):
            x = self.word(ids) + self.pos.weight[: self.seq] + self.token_type.weight[0]
            x = self.ln(x)
            for layer in self.layers:
                x = layer(x)
            return x

    class Gpt2Block(nn.Module):
        def __init__(self, d=768, heads=12, seq=registry.SEQ):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-5), nn.LayerNorm(d, eps=1e-5)
            self.attn = Attention(d, heads, seq, causal=True)
            self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Gpt2(nn.Module):
        """GPT-2 small (gpt2's config): 12 blocks, 768 wide, 12 heads, pre-LayerNorm, tanh
        GELU, causal attention, LM head tied to the token embedding. Returns the logits."""

        def __init__(self, vocab=50257, d=768, layers=12, seq=registry.SEQ):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(1024, d)
            self.blocks = nn.ModuleList(Gpt2Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(d, eps=1e-5)
            self.seq = seq
            init_transformer(self)

        def forward(self, ids):
            x = self.wte(ids) + self.wpe.weight[: self.seq]
            for block in self.blocks:
                x = block(x)
            return torch.matmul(self.ln_f(x), self.wte.weight.t())

    def mlp():
        return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                             nn.Linear(4096, 1000))

    import torchvision.models as tv
    return {"mlp": mlp, "resnet18": lambda: tv.resnet18(weights=None),
            "resnet50": lambda: tv.resnet50(weights=None),
            "mobilenet_v2": lambda: tv.mobilenet_v2(weights=None), "bert_base": Bert, "gpt2": Gpt2}


def build_net(model, keep_names=False):
    """The network of `model` in eval mode, its weights from the model's seed. keep_names: every
    normalization's scale, shift and running statistics are random as well (they start as ones
    and zeros, and an exporter keeps one initializer of each set of equal ones, which would rename
    the rest); the GPU suite builds the same module there and gives its weights by name."""
    import torch
    torch.manual_seed(model.seed)
    net = torch_modules()[model.name]().eval()
    if keep_names:
        with torch.no_grad():
            for mod in net.modules():
                if isinstance(mod, (torch.nn.BatchNorm2d, torch.nn.LayerNorm)):
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.normal_(0.0, 0.1)
                if isinstance(mod, torch.nn.BatchNorm2d):
                    mod.running_mean.normal_(0.0, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)
    return net


def export_torch(model, path, keep_names=False):
    """keep_names: no constant folding and BatchNormalization kept (TrainingMode.PRESERVE of an
    eval-mode module), so that every initializer keeps its state_dict name and a host can give
    the weights of a weightless .so from the module itself (the GPU suite, bench/gpu/suite.py)."""
    import torch
    net = build_net(model, keep_names)
    args = []
    for i in model.inputs:
        shape = registry.shapes(model, 1)[model.inputs.index(i)]
        if i.dtype == "int64":
            args.append(torch.randint(0, i.high, shape, dtype=torch.int64))
        else:
            args.append(torch.randn(*shape))
    names = [i.name for i in model.inputs]
    tmp = path + ".torch"
    with torch.no_grad():
        extra = dict(training=torch.onnx.TrainingMode.PRESERVE) if keep_names else {}
        torch.onnx.export(net, tuple(args), tmp, opset_version=OPSET, do_constant_folding=not keep_names,
                          **extra,
                          input_names=names, output_names=["output"],
                          dynamic_axes={**{n: {0: "batch"} for n in names}, "output": {0: "batch"}})
    m = onnx.load(tmp)
    os.remove(tmp)
    m.ir_version = min(m.ir_version, MAX_IR_VERSION)
    save(m, path)


def export(model, path, keep_names=False):
    kind, params = model.export
    if kind == "gemm":
        save(gemm(model.name, model.seed, **params), path)
    elif kind == "conv":
        save(conv(model.name, model.seed, **params), path)
    elif kind == "quantize":
        sys.exit(f"export_models: {model.name} is made by run.py from {params['source']}.onnx")
    else:
        export_torch(model, path, keep_names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for NAME.onnx")
    ap.add_argument("--force", action="store_true", help="rewrite existing files")
    ap.add_argument("--keep-names", action="store_true",
                    help="networks keep their state_dict initializer names (no folding)")
    ap.add_argument("names", nargs="*", help="models (default: all)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names or [m.name for m in registry.MODELS if m.export[0] != "quantize"]:
        if name not in registry.BY_NAME:
            sys.exit(f"export_models: unknown model {name!r}")
        path = os.path.join(args.out, name + ".onnx")
        if os.path.exists(path) and not args.force:
            continue
        print(f"export_models: {name}", flush=True)
        export(registry.BY_NAME[name], path, args.keep_names)


if __name__ == "__main__":
    main()

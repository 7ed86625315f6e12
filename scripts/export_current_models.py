#!/usr/bin/env python3
"""Real models as a user exports them today, compiled by aotc and checked against ONNX Runtime.

    bash scripts/export_env.sh                       # once: .venv-export/ (current PyTorch, ~6 GB)
    .venv-export/bin/python scripts/export_current_models.py [--models a,b] [--out DIR]

For each model: random weights (seeded), `torch.onnx.export` with its defaults (the current PyTorch's
default exporter: torch.export + onnxscript, its default opset, weights in model.onnx.data), a
dynamic batch (and sequence, for the transformers, whose attention masks pad every row after the
first); then `aotc compile --time-passes` and, at two batch sizes (and two sequence lengths), the
largest |aotc - ORT| / max |ORT| over every output; then every updatable float weight is replaced by
a permutation of its values (aotc_container_update_constants) and the first size is checked again.
Passes at 1e-4. Prints one line per model and writes a table to OUT/summary.md
(default bench/work/current-models/). Nothing here runs in CI (no torch there): CI runs the small
model this script exported with --models llama_tiny and that is checked in (tests/current_torch/llama_tiny).
"""

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from aotc_ctypes import Model  # noqa: E402

TOLERANCE = 1e-4


class Logits(torch.nn.Module):
    """A transformers model as a function of its tensors, returning its first output (no cache)."""

    def __init__(self, model):
        super().__init__()
        import inspect
        self.model = model
        self.cache = "use_cache" in inspect.signature(model.forward).parameters

    def forward(self, input_ids, attention_mask):
        kw = {"use_cache": False} if self.cache else {}
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False, **kw)[0]


class Pick(torch.nn.Module):
    """A model whose output is a dict (torchvision's segmentation models), as its one tensor."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, x):
        return self.model(x)[self.key]


def vision(builder, shape=(3, 224, 224), module="", pick=None):
    def make():
        import torchvision
        kw = {"weights_backbone": None} if module == "segmentation" else {}  # no download
        m = getattr(getattr(torchvision.models, module) if module else torchvision.models,
                    builder)(weights=None, **kw).eval()
        if pick:
            m = Pick(m, pick).eval()
        batch = torch.export.Dim("batch", min=1, max=64)
        return m, (torch.randn(2, *shape),), {"x": {0: batch}}, \
            [lambda b: [np.random.default_rng(b).standard_normal((b, *shape), np.float32)]], [(1,), (3,)]
    return make


# A small decoder's sizes (random weights: the sizes only decide the run time).
SMALL_DECODER = dict(vocab_size=1000, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
# kind: (transformers' config class, model class, config arguments).
TRANSFORMERS = {
    "bert": ("BertConfig", "BertModel", {}),
    "distilbert": ("DistilBertConfig", "DistilBertModel", {}),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", {}),
    "llama": ("LlamaConfig", "LlamaForCausalLM", SMALL_DECODER),
    "roberta": ("RobertaConfig", "RobertaModel", dict(num_hidden_layers=4)),
    "albert": ("AlbertConfig", "AlbertModel", dict(num_hidden_layers=4)),
    "t5_encoder": ("T5Config", "T5EncoderModel",
                   dict(d_model=256, d_ff=1024, num_layers=3, num_heads=4, vocab_size=1000)),
    "bloom": ("BloomConfig", "BloomForCausalLM", dict(vocab_size=1000, hidden_size=256, n_layer=2, n_head=4)),
    "opt": ("OPTConfig", "OPTForCausalLM",
            dict(vocab_size=1000, hidden_size=256, ffn_dim=1024, num_hidden_layers=2,
                 num_attention_heads=4, word_embed_proj_dim=256)),
    "gpt_neo": ("GPTNeoConfig", "GPTNeoForCausalLM",
                dict(vocab_size=1000, hidden_size=256, num_layers=2, num_heads=4,
                     attention_types=[[["global", "local"], 1]], window_size=16)),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", SMALL_DECODER),
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(SMALL_DECODER, sliding_window=24)),
    # Checked in for CI (tests/current_torch/llama_tiny).
    "llama_tiny": ("LlamaConfig", "LlamaForCausalLM",
                   dict(vocab_size=128, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)),
}


def transformer(kind):
    def make():
        import transformers as tf
        config, model, kw = TRANSFORMERS[kind]
        cfg = getattr(tf, config)(**kw)
        m = getattr(tf, model)(cfg)
        m = m.eval()
        vocab = cfg.vocab_size
        batch = torch.export.Dim("batch", min=1, max=64)
        seq = torch.export.Dim("seq", min=2, max=512)
        ids = torch.randint(0, vocab, (2, 8))
        mask = torch.ones(2, 8, dtype=torch.int64)
        wrapped = Logits(m)

        def inputs(b, s):
            g = np.random.default_rng(b * 1000 + s)
            mask = np.ones((b, s), np.int64)
            for row in range(1, b):  # rows after the first are padded at their end: masking is checked
                mask[row, s - min(3 * row, s - 1):] = 0
            return [g.integers(0, vocab, (b, s)).astype(np.int64), mask]
        return wrapped, (ids, mask), {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}, \
            [inputs], [(1, 16), (3, 16), (1, 47), (3, 47)]
    return make


MODELS = {
    "resnet50": vision("resnet50"),
    "mobilenet_v3_large": vision("mobilenet_v3_large"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "vit_b_16": vision("vit_b_16"),
    "convnext_tiny": vision("convnext_tiny"),
    "bert_base": transformer("bert"),
    "distilbert": transformer("distilbert"),
    "gpt2": transformer("gpt2"),
    "llama_small": transformer("llama"),
    "llama_tiny": transformer("llama_tiny"),
    # A wider sweep (stop 65): channel shuffles, concatenations, ceil_mode pooling, grouped and
    # asymmetric kernels, windowed attention, segmentation heads, 3-D convolutions, and the
    # transformers' other attention variants (relative bias, ALiBi, sliding and local windows).
    "shufflenet_v2": vision("shufflenet_v2_x1_0"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "densenet121": vision("densenet121"),
    "googlenet": vision("googlenet"),
    "inception_v3": vision("inception_v3", (3, 299, 299)),
    "regnet_y_400mf": vision("regnet_y_400mf"),
    "mnasnet1_0": vision("mnasnet1_0"),
    "resnext50_32x4d": vision("resnext50_32x4d"),
    "alexnet": vision("alexnet"),
    "mobilenet_v3_small": vision("mobilenet_v3_small"),
    "efficientnet_v2_s": vision("efficientnet_v2_s"),
    "swin_t": vision("swin_t"),
    "maxvit_t": vision("maxvit_t"),
    "lraspp_mobilenet_v3": vision("lraspp_mobilenet_v3_large", (3, 224, 224), "segmentation", "out"),
    "deeplabv3_mobilenet_v3": vision("deeplabv3_mobilenet_v3_large", (3, 224, 224), "segmentation", "out"),
    "r3d_18": vision("r3d_18", (3, 8, 112, 112), "video"),
    "roberta": transformer("roberta"),
    "albert": transformer("albert"),
    "t5_encoder": transformer("t5_encoder"),
    "bloom": transformer("bloom"),
    "opt": transformer("opt"),
    "gpt_neo": transformer("gpt_neo"),
    "qwen2": transformer("qwen2"),
    "mistral": transformer("mistral"),
}


def randomize_zeros(model):
    """Parameters a model initializes to zero (ViT's classifier head) get random values: an
    all-zero output would match anything."""
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() and not p.abs().max():
                p.normal_(0, 0.02)


def export(name, out_dir):
    torch.manual_seed(0)
    model, args, dyn, feeds, sizes = MODELS[name]()
    randomize_zeros(model)
    path = os.path.join(out_dir, name, "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    t = time.time()
    with torch.no_grad():
        torch.onnx.export(model, args, path, dynamic_shapes=dyn)
    return path, feeds[0], sizes, time.time() - t


def compile_model(aotc, path):
    so = path[:-5] + ".so"
    t = time.time()
    r = subprocess.run([aotc, "compile", path, "-o", so, "--time-passes"], capture_output=True, text=True)
    wall = time.time() - t
    if r.returncode != 0:
        return None, wall, (r.stderr or r.stdout).strip().splitlines()[-1]
    total = re.search(r"total[^\d]*([\d.]+)\s*ms", r.stdout + r.stderr)
    return so, wall, f"{float(total.group(1)) / 1000:.2f} s in pipeline" if total else ""


def check(name, out_dir):
    """Runs an exported and compiled model with aotc and ONNX Runtime; prints the worst error."""
    torch.manual_seed(0)
    _, _, _, feeds, sizes = MODELS[name]()
    path = os.path.join(out_dir, name, "model.onnx")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    m = Model(path[:-5] + ".so", device="cpu")
    def error(sess, xs):
        """The largest |aotc - ORT| / max |ORT| over the outputs for inputs xs."""
        want = sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})
        return max(float(np.abs(g.astype(np.float64) - w).max() / max(np.abs(w).max(), 1e-30))
                   if g.shape == w.shape else float("inf") for g, w in zip(m.run(xs), want))

    worst, detail = 0.0, []
    for size in sizes:
        err = error(sess, feeds[0](*size))
        worst = max(worst, err)
        detail.append(f"{'x'.join(map(str, size))}: {err:.1e}")
    # Live weights: every updatable float weight replaced by a permutation of
    # its own values (the same statistics, other contents), then the first
    # size again against ONNX Runtime on those weights.
    import onnx
    from onnx import numpy_helper
    from compiled_model import with_weights
    proto = onnx.load(path)
    inits = {i.name: i for i in proto.graph.initializer}
    g = np.random.default_rng(7)
    new = {}
    for weight, dtype, _ in m.constants():
        if dtype == np.float32 and weight in inits:
            a = numpy_helper.to_array(inits[weight])
            new[weight] = g.permutation(a.ravel()).reshape(a.shape).astype(np.float32)
    m.update_constants(new, validate_full=False)
    sess = ort.InferenceSession(with_weights(proto, new).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    err = error(sess, feeds[0](*sizes[0]))
    worst = max(worst, err)
    detail.append(f"{len(new)} weights updated, {'x'.join(map(str, sizes[0]))}: {err:.1e}")
    print(f"worst {worst:.2e} ({', '.join(detail)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "work", "current-models"))
    ap.add_argument("--aotc", default=os.path.join(ROOT, "build", "compiler", "tools", "aotc"))
    ap.add_argument("--timeout", type=int, default=900, help="seconds for one model's runs")
    ap.add_argument("--check", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.check:
        return check(a.check, a.out)
    rows, failed = [], 0
    print(f"torch {torch.__version__}, onnxruntime {ort.__version__}")
    for name in a.models.split(","):
        path, feeds, sizes, t_export = export(name, a.out)
        import onnx
        proto = onnx.load(path, load_external_data=False)
        opset = max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
        external = os.path.exists(path + ".data")
        so, t_compile, note = compile_model(a.aotc, path)
        if so is None:
            rows.append((name, opset, external, "-", "refused: " + note))
            failed += 1
            print(f"{name}: opset {opset}, aotc refused: {note}", flush=True)
            continue
        # In a child process: a run that never ends (or a crash) is a result too.
        try:
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--check", name, "--out", a.out],
                               capture_output=True, text=True, timeout=a.timeout)
            last = (r.stdout.strip().splitlines() or ["no output: " + r.stderr.strip()[-300:]])[-1]
        except subprocess.TimeoutExpired:
            last = f"did not finish in {a.timeout} s"
        m = re.match(r"worst (\S+) \((.*)\)$", last)
        worst = float(m.group(1)) if m else float("inf")
        detail = [m.group(2)] if m else [last]
        ok = worst <= TOLERANCE
        failed += not ok
        rows.append((name, opset, external, f"{t_compile:.2f} s ({note})",
                     ("match" if ok else "MISMATCH") + f", worst {worst:.1e} (" + ", ".join(detail) + ")"))
        print(f"{name}: opset {opset}, external data {external}, export {t_export:.0f} s, "
              f"compile {t_compile:.2f} s, {rows[-1][4]}", flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(f"torch {torch.__version__}, onnxruntime {ort.__version__}, tolerance {TOLERANCE}\n\n")
        f.write("| model | opset | external data | aotc compile | aotc vs ONNX Runtime (batch x seq: error) |\n")
        f.write("|---|---|---|---|---|\n")
        for r in rows:
            f.write("| " + " | ".join(str(c) for c in r) + " |\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

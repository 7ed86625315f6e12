#!/usr/bin/env python3
"""Turns GPU suite runs (bench/gpu/run_suite.sh's $OUT folders) into bench/results/DATE-gpu-GPU.
{json,md,png} and the GPU section of docs/PERFORMANCE.md. Every figure is read from the runs.

  python3 bench/gpu/report.py --command "CMD" [--doc docs/PERFORMANCE.md] OUT_DIR [OUT_DIR ...]

Later folders' results replace earlier ones for the same model and batch (a config rerun).
"""
import argparse
import datetime
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cpu"))
import models as registry  # noqa: E402

BEGIN = "<!-- gpu-results:begin (written by bench/gpu/report.py; edits inside are overwritten) -->"
END = "<!-- gpu-results:end -->"
TOL = 1e-4


def load(dirs):
    rows, aoti, machine, compile_s = {}, {}, {}, {}
    for d in dirs:
        with open(os.path.join(d, "gpu_suite.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                if "aoti" in r:
                    aoti[r["model"]] = r["aoti"]
                else:
                    rows[(r["model"], r["batch"])] = r
        for name, target in (("machine.json", machine), ("compile.json", compile_s)):
            p = os.path.join(d, name)
            if os.path.exists(p):
                target.update(json.load(open(p)))
    order = {m.name: i for i, m in enumerate(registry.GPU_MODELS)}
    rows = [rows[k] for k in sorted(rows, key=lambda k: (order.get(k[0], 99), k[1]))]
    return rows, aoti, machine, compile_s


def get(d, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def ms(x):
    return "–" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def rcell(r):
    return "–" if r is None else f"**{r:.2f}×**" if r > 1 else f"{r:.2f}×"


def err(x):
    if x is None:
        return "–"
    return ("**WRONG** " if x > TOL else "") + ("inf" if math.isinf(x) else f"{x:.1e}")


def failure(r):
    for side in ("aotc", "torch"):
        e = get(r, side, "error")
        if e:
            return f"{side}: {e}"
    return None


def net_table(rows, aoti):
    out = ["| model | batch | aotc host→host | aotc device-resident | aotc kernels (sum) | kernels | "
           "eager | eager host→host | torch.compile | AOTInductor | aotc / torch.compile | aotc / eager | "
           "aotc max rel err |", "|" + "---|" * 13]
    for r in rows:
        if r["family"] != "net":
            continue
        a, t = r["aotc"], r["torch"]
        dev, comp, eager = get(a, "resident", "median_ms"), get(t, "compile", "median_ms"), get(t, "eager", "median_ms")
        ai = get(aoti, r["model"], f"b{r['batch']}", "median_ms")
        out.append(f"| {r['model']} | {r['batch']} | {ms(get(a, 'host', 'median_ms'))} | {ms(dev)} | "
                   f"{ms(a.get('kernel_ms'))} | {a.get('kernels', '–')} | {ms(eager)} | "
                   f"{ms(get(t, 'eager_host', 'median_ms'))} | {ms(comp)} | {ms(ai)} | {rcell(ratio(dev, comp))} | "
                   f"{rcell(ratio(dev, eager))} | {err(a.get('err'))} |")
    return "\n".join(out)


def gemm_table(rows, family):
    out = ["| model | batch | GFLOP | aotc kernel ms | aotc TFLOP/s | cuBLAS/cuDNN ms (eager, CUDA events) | "
           "peer TFLOP/s | aotc / peer throughput | aotc device-resident ms | eager ms | aotc max rel err |",
           "|" + "---|" * 11]
    for r in rows:
        if r["family"] != family:
            continue
        m = registry.GPU_BY_NAME[r["model"]]
        flops = m.flops(r["batch"])
        a, t = r["aotc"], r["torch"]
        k, p = a.get("kernel_ms"), get(t, "eager", "device_ms")
        tf = lambda x: "–" if not x else f"{flops / x / 1e9:.2f}"  # noqa: E731
        thr = ratio(p, k)
        out.append(f"| {r['model']} | {r['batch']} | {flops / 1e9:.1f} | {ms(k)} | {tf(k)} | {ms(p)} | {tf(p)} | "
                   f"{'–' if thr is None else f'{thr:.3f}'} | {ms(get(a, 'resident', 'median_ms'))} | "
                   f"{ms(get(t, 'eager', 'median_ms'))} | {err(a.get('err'))} |")
    return "\n".join(out)


def cost_table(rows, aoti, compile_s):
    out = ["| model | aotc compile s (dev VM, 2 cores) | aotc load, cold ms | aotc load, warm ms | "
           "update_constants ms (MB) | aotc first run ms (batch) | torch.compile first call s (batch) | "
           "AOTInductor compile s |", "|" + "---|" * 8]
    seen = set()
    for r in rows:
        if r["model"] in seen:
            continue
        seen.add(r["model"])
        a, t = r["aotc"], r["torch"]
        c = compile_s.get(r["model"])
        fc = t.get("compile_first_call_s")
        ac = get(aoti, r["model"], "aoti_compile_s")
        c = "–" if c is None else f"{c:.2f}"
        fc = "–" if fc is None else f"{fc:.1f} ({r['batch']})"
        ac = "–" if ac is None else f"{ac:.1f}"
        out.append(f"| {r['model']} | {c} | {ms(a.get('load_cold_ms'))} | "
                   f"{ms(a.get('load_warm_ms'))} | {ms(a.get('update_constants_ms'))} "
                   f"({a.get('weights_mb', 0):.0f}) | {ms(a.get('first_run_ms'))} ({r['batch']}) | "
                   f"{fc} | {ac} |")
    return "\n".join(out)


def where_time_goes(rows):
    parts = []
    for r in rows:
        if r["family"] != "net" or r["batch"] != 8 or not r["aotc"].get("top_kernels"):
            continue
        total = r["aotc"]["kernel_ms"]
        lines = [f"- **{r['model']}, batch 8** ({ms(total)} ms of kernels):"]
        for k in r["aotc"]["top_kernels"][:5]:
            lines.append(f"  - {ms(k['ms'])} ms ({100 * k['ms'] / total:.0f}%) `{k['kernel']}`: {k['what']}")
        parts.append("\n".join(lines))
    return "\n".join(parts)


def brief(error):
    """A child's failure in one line: a crash by its signal and the innermost Python frame of the
    stack faulthandler printed (most recent call first), else the error's start."""
    m = re.match(r"exit (-\d+):", error)
    if m:
        frames = re.findall(r'File "([^"]+)", line (\d+) in (\w+)', error)
        where = f" in {frames[0][2]} ({os.path.basename(frames[0][0])}:{frames[0][1]})" if frames else ""
        return f"killed by signal {-int(m.group(1))}{where}"
    return error[:200]


def failures(rows, aoti):
    out = [f"- {r['model']} b{r['batch']}: {brief(failure(r))}" for r in rows if failure(r)]
    out += [f"- {m} AOTInductor: {brief(v['aoti_error'] if 'aoti_error' in v else v.get('error'))}"
            for m, v in aoti.items() if "aoti_error" in v or "error" in v]
    return "\n".join(out)


def plot(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels, vals, colors = [], [], []
    for r in rows:
        a, t = r["aotc"], r["torch"]
        if r["family"] == "net":
            v = ratio(get(a, "resident", "median_ms"), get(t, "compile", "median_ms"))
            c = "#c0392b"
        else:
            v = ratio(a.get("kernel_ms"), get(t, "eager", "device_ms"))
            c = "#2e86c1"
        labels.append(f"{r['model']} b{r['batch']}")
        vals.append(v or 0)
        colors.append(c)
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(labels) + 2), 5.5))
    ax.bar(range(len(labels)), vals, color=colors)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.axhline(1.5, color="#c0392b", lw=0.8, ls=":")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("aotc time / peer time (log; below 1 = aotc faster)")
    ax.set_title(title + "\nred: networks, device-resident vs torch.compile; blue: kernel time vs cuBLAS/cuDNN")
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(rows, aoti, machine, compile_s, command, png):
    smi = machine.get("nvidia_smi", "?")
    parts = [f"GPU: {smi}; PyTorch {machine.get('torch')} (CUDA {machine.get('cuda')}, cuDNN "
             f"{machine.get('cudnn')}); aotc through NVIDIA's OpenCL (the same driver), `.so` files "
             f"compiled weightless for the `generic-gpu` profile on the development machine, weights "
             f"given by name at load. TF32 off everywhere.\n\nCommand: {command}",
             "Timing: wall time around one call that ends with the device idle (aotc's run and "
             "run_device return after the device finished; PyTorch's calls are followed by "
             "`torch.cuda.synchronize()`), median after warm-up. *device-resident*: inputs and "
             "outputs stay in device memory (aotc: `aotc_container_run_device` on `cl_mem` buffers); "
             "*host→host*: from host arrays to host arrays. Kernel times: aotc's OpenCL profiling "
             "events (one run's kernels summed), PyTorch's CUDA events around the call. Max rel err: "
             "max|aotc − PyTorch| / max|PyTorch| on the same weights and random inputs (fp32 eager "
             "on the GPU as the reference; flagged above 1e-4).",
             "### Networks\n\n" + net_table(rows, aoti),
             "### GEMMs (MatMul A × constant B)\n\n" + gemm_table(rows, "gemm"),
             "### Convolution layers\n\n" + gemm_table(rows, "conv"),
             "### Compile, load, first run\n\n" + cost_table(rows, aoti, compile_s)]
    w = where_time_goes(rows)
    if w:
        parts.append("### Where aotc's time goes (its 5 costliest kernels)\n\n" + w)
    f = failures(rows, aoti)
    if f:
        parts.append("### Failures\n\n" + f)
    parts.append(f"![aotc / peer]({png})")
    return "\n\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--command", required=True, help="the command that produced the runs (for the page)")
    ap.add_argument("--results", default=os.path.join(HERE, "..", "results"))
    ap.add_argument("--doc", help="docs/PERFORMANCE.md: rewrite its GPU section")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args()
    rows, aoti, machine, compile_s = load(args.dirs)
    gpu = re.sub(r"[^a-z0-9]+", "-", machine.get("nvidia_smi", "gpu").split(",")[0].lower()).strip("-")
    stem = f"{args.date}-gpu-{gpu}"
    base = os.path.join(args.results, stem)
    json.dump({"date": args.date, "command": args.command, "machine": machine, "compile_s": compile_s,
               "rows": rows, "aoti": aoti}, open(base + ".json", "w"), indent=1, sort_keys=True)
    plot(rows, base + ".png", f"{machine.get('nvidia_smi', '?').split(',')[0]}, {args.date}")
    with open(base + ".md", "w") as f:
        f.write(f"# GPU benchmark, {args.date}\n\n" + markdown(rows, aoti, machine, compile_s, args.command,
                                                             stem + ".png"))
    print(base + ".{json,md,png}")
    if args.doc:
        text = open(args.doc).read()
        if BEGIN not in text or END not in text:
            raise SystemExit(f"report: {args.doc} has no {BEGIN} ... {END} markers")
        rel = os.path.relpath(base, os.path.dirname(os.path.abspath(args.doc)))
        body = (f"Latest run: [{stem}.md]({rel}.md).\n\n"
                + markdown(rows, aoti, machine, compile_s, args.command, rel + ".png").replace("### ", "#### "))
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        open(args.doc, "w").write(head + BEGIN + "\n" + body + END + tail)
        print(args.doc)


if __name__ == "__main__":
    main()

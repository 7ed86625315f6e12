#!/usr/bin/env python3
"""`aotc run --profile`, checked end to end on a real model.

Compiles tests/models/cnn_small, runs it three times with --profile from
inside the output folder by its bare file name (`aotc run model.so`, as a
user types it), and checks:
  - the Chrome trace parses as JSON and holds every kernel of the model
    (from `aotc inspect`) exactly once per run, each with a duration, its
    summary and its estimated flops/bytes, plus one host "run" span per run;
  - the table lists every kernel with 3 calls, and its shares add up to 100%.
Usage: check_profile.py AOTC
"""
import json
import os
import re
import subprocess
import sys
import tempfile

RUNS = 3


def main():
    aotc = os.path.abspath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    model = os.path.join(root, "tests", "models", "cnn_small", "model.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AOTC_CACHE_DIR=os.path.join(tmp, "cache"))
        # Each kernel launched on its own, so that the profile times each
        # (a persistent kernel runs them inside: check_persistent_kernels.py).
        subprocess.run([aotc, "compile", model, "-o", os.path.join(tmp, "model.so"),
                        "--no-persistent-kernels"],
                       check=True, env=env, capture_output=True)
        inspect = subprocess.run([aotc, "inspect", "model.so"], cwd=tmp, env=env,
                                 check=True, capture_output=True, text=True).stdout
        kernels = {}
        lines = inspect.splitlines()
        count = int(next(l for l in lines if l.startswith("kernels: ")).split()[1])
        start = lines.index("kernels: %d" % count) + 1
        for line in lines[start:start + count]:
            name, _, summary = line.strip().partition(": ")
            kernels[name] = summary
        assert len(kernels) == count > 1, inspect
        assert all(" -> f32[" in s for s in kernels.values()), kernels
        # With copies (a CPU device otherwise uses the runner's aligned host
        # tensors in place: runtime/src/host_io.h), so that the trace has them.
        run = subprocess.run([aotc, "run", "model.so", "--dim", "batch=3", "--repeat",
                              str(RUNS), "--profile", "trace.json"], cwd=tmp,
                             env=dict(env, AOTC_ZERO_COPY="0"),
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        out = run.stdout
        trace = json.load(open(os.path.join(tmp, "trace.json")))
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    seen = {}
    for e in events:
        assert e["dur"] >= 0 and e["ts"] >= 0, e
        if e["cat"] == "kernel":
            seen[e["name"]] = seen.get(e["name"], 0) + 1
            assert e["args"]["computes"] == kernels[e["name"]], e
            assert e["args"]["bytes"] > 0, e
    # A size variant runs where its condition on the sizes holds
    # ("launched when ((10 * batch) >= 29)"): at batch 3, one of each pair.
    def launched(summary):
        m = re.search(r"launched when (.*)$", summary)
        return not m or eval(m.group(1), {"__builtins__": {}}, {"batch": 3})
    ran = {k for k, s in kernels.items() if launched(s)}
    assert seen == {k: RUNS for k in ran}, (seen, kernels)
    runs = [e for e in events if e["cat"] == "host" and e["name"].startswith("run ")]
    assert len(runs) == RUNS, runs
    assert any(e["cat"] == "copy" for e in events), "no copies in the trace"
    for k in ran:
        row = re.search(r"^%s\s.*?\s(\d+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)%%" % re.escape(k),
                        out, re.M)
        assert row and int(row.group(1)) == RUNS, (k, out)
    total = re.search(r"shares add up to ([\d.]+)%", out)
    assert total and abs(float(total.group(1)) - 100.0) < 0.05, out
    shares = [float(m) for m in re.findall(r"\s([\d.]+)%\s+[\d.]+\s+[\d.]+\s*$", out, re.M)]
    assert abs(sum(shares) - 100.0) < 0.5, (shares, out)
    print("profile ok: %d kernels x %d runs, shares %.1f%%" % (len(kernels), RUNS, sum(shares)))


if __name__ == "__main__":
    main()

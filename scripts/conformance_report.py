#!/usr/bin/env python3
"""Runs ONNX's backend node tests through aotc and writes docs/CONFORMANCE.md.

Usage: .venv/bin/python scripts/conformance_report.py [AOTC] [NODE_DIR]

Defaults: build/compiler/tools/aotc and the node tests of the ONNX release
aotc builds with (scripts/build_onnx.sh prints its prefix). Runs
tests/e2e/check_conformance.sh (the same check as CI), then groups every case
by op: passed, refused at compile time (with the most common reasons),
wrong (a run that completed with a different result) and crashed. Also
rewrites tests/e2e/onnx_node_expected_pass.txt with the cases that passed.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

import onnx

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
aotc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "build/compiler/tools/aotc")
if len(sys.argv) > 2:
    root = sys.argv[2]
else:
    prefix = subprocess.run(["bash", os.path.join(here, "build_onnx.sh")], check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    root = os.path.join(prefix, "share/onnx/backend-test/node")
version = "?"
up = root
while up != os.path.dirname(up):
    up = os.path.dirname(up)
    if os.path.exists(os.path.join(up, ".complete")):
        version = open(os.path.join(up, ".complete")).read().split()[0]
        break

with tempfile.NamedTemporaryFile("r", suffix=".log") as log:
    env = dict(os.environ, AOTC_DEVICE=os.environ.get("AOTC_DEVICE", "cpu"))
    check = subprocess.run(["bash", os.path.join(repo, "tests/e2e/check_conformance.sh"), aotc, root, log.name],
                           capture_output=True, text=True, env=env)
    print(check.stdout, end="")
    lines = open(log.name).read().splitlines()

results = {}
for line in lines:
    m = re.match(r"^(PASS|FAIL) (\S+?)(?:: (.*))?$", line)
    if m:
        results[m.group(2)] = (m.group(1), m.group(3) or "")
if not results:
    sys.exit("conformance_report.py: no results (did aotc run?)")


def op_of(case):
    """The op a case tests: its model's node for a one-node model, else the
    non-expanded sibling's; '(expanded)' marks function-expanded variants."""
    base = re.sub(r"_expanded(_ver\d+)?$", "", case)
    path = os.path.join(root, base if os.path.exists(os.path.join(root, base)) else case, "model.onnx")
    try:
        m = onnx.load(path, load_external_data=False)
        ops = [n.op_type for n in m.graph.node if n.op_type != "Constant"] or ["Constant"]
        op = ops[0] if len(set(ops)) == 1 or base != case else ops[-1]
    except Exception:
        op = "?"
    return op + (" (expanded)" if base != case else "")


def reason_of(msg):
    msg = re.sub(r"^compile: \S+model\.onnx: ", "", msg)
    msg = re.sub(r"node '[^']*' ", "node ", msg)
    msg = re.sub(r"(input|output|initializer|tensor) '[^']*'", r"\1", msg)
    msg = re.sub(r" \(domain '[^']*'\)", "", msg)
    return msg


clean = re.compile(r"^compile: .*(unsupported|not supported|must be known at compile time)")
# Cases whose stored outputs depart from ONNX's definition, with why
# (tests/e2e/onnx_node_departures.txt).
departures = {}
for line in open(os.path.join(repo, "tests/e2e/onnx_node_departures.txt")):
    if line.strip() and not line.startswith("#"):
        name, _, why = line.strip().partition(" ")
        departures[name] = why
departed = []
by_op = collections.defaultdict(lambda: {"cases": 0, "pass": 0, "refused": 0, "wrong": 0, "crashed": 0,
                                         "departs": 0,
                                         "reasons": collections.Counter()})
for case, (status, msg) in sorted(results.items()):
    row = by_op[op_of(case)]
    row["cases"] += 1
    if status == "PASS":
        row["pass"] += 1
    elif clean.match(msg):
        row["refused"] += 1
        row["reasons"][reason_of(msg)] += 1
    elif case in departures and re.match(r"test_data_set_\d+ output \d+: ", msg):
        row["departs"] += 1
        departed.append(case)
    elif msg.startswith("compile:"):
        row["crashed"] += 1  # a compile failure that is not a clean refusal
        row["reasons"]["NOT CLEAN: " + reason_of(msg)] += 1
    else:
        row["wrong"] += 1
        row["reasons"]["WRONG: " + msg[:120]] += 1

total = len(results)
passed = sum(r["pass"] for r in by_op.values())
wrong = sum(r["wrong"] for r in by_op.values())
crashed = sum(r["crashed"] for r in by_op.values())
refused = sum(r["refused"] for r in by_op.values())
out = [
    "# ONNX conformance",
    "",
    f"ONNX {version}'s backend node tests (`onnx/backend/test/data/node` of the source release that "
    "`scripts/build_onnx.sh` builds), every case compiled and run by `aotc test` on PoCL and compared "
    "with the outputs stored beside each case. Written by `.venv/bin/python scripts/conformance_report.py`; "
    "CI runs the same check (`ctest -R onnx_node_conformance`): every case in "
    "`tests/e2e/onnx_node_expected_pass.txt` must pass and every other case must be refused at compile "
    "time with a message naming the node and the reason.",
    "",
    f"**{passed} of {total} cases pass ({100.0 * passed / total:.1f}%)**; {refused} refused at compile time; "
    f"{wrong} wrong; {crashed} crashed or failed without a clear refusal"
    + (f"; {len(departed)} whose stored outputs depart from ONNX's definition (below)." if departed else "."),
    "",
    "| op | cases | passed | refused | wrong | crashed | why refused (most common) |",
    "|---|---|---|---|---|---|---|",
]
for op, r in sorted(by_op.items(), key=lambda kv: (-kv[1]["cases"] + kv[1]["pass"], kv[0])):
    reasons = "; ".join(f"{k} ({v})" if v > 1 else k for k, v in r["reasons"].most_common(2))
    reasons = reasons.replace("|", "\\|")
    out.append(f"| {op} | {r['cases']} | {r['pass']} | {r['refused']} | {r['wrong']} | {r['crashed']} | {reasons} |")
if departed:
    out += ["", "## Stored outputs that depart from ONNX's definition", "",
            "`tests/e2e/onnx_node_departures.txt` lists them with why; CI accepts a different result "
            "on these cases only.", ""]
    for case in sorted(departed):
        why = departures[case]
        if why.startswith("as "):
            why = departures.get(why[3:], why)
        out.append(f"- `{case}`: {why}")
# The cases refused only for a shape-like graph input, rerun with it bound
# as a constant (tests/e2e/check_bound_inputs.py).
with tempfile.NamedTemporaryFile("r", suffix=".txt") as bl:
    bound = subprocess.run([sys.executable, os.path.join(repo, "tests/e2e/check_bound_inputs.py"),
                            aotc, root, "--list", bl.name], capture_output=True, text=True, env=env)
    blines = open(bl.name).read().splitlines()
bsummary = (bound.stdout.strip().splitlines() or ["?"])[-1]
out += [
    "",
    "## With shape-like inputs bound as constants",
    "",
    "aotc needs shapes, axes, pads, scales and sizes at compile time; many node tests pass them as graph "
    "inputs. `tests/e2e/check_bound_inputs.py` (CI: `ctest -R onnx_node_bound_inputs`) reruns each case "
    "refused only for that with the named inputs bound to their test values as constants, against the "
    f"same stored outputs: **{bsummary.replace('bound inputs: ', '')}**.",
    "",
]
for line in blines:
    if not line.startswith("PASS"):
        out.append("- " + line.split(": aotc: error: ")[0].replace("REFUSED ", "refused: ").replace("FAIL ", "FAIL: ")
                   + (": " + line.split(": aotc: error: ")[1].split("model.onnx: ")[-1] if ": aotc: error: " in line else ""))
with open(os.path.join(repo, "docs/CONFORMANCE.md"), "w") as f:
    f.write("\n".join(out) + "\n")
with open(os.path.join(repo, "tests/e2e/onnx_node_expected_pass.txt"), "w") as f:
    f.write("".join(c + "\n" for c, (s, _) in sorted(results.items()) if s == "PASS"))
print(f"conformance_report: {passed}/{total} pass, {wrong} wrong, {crashed} crashed; wrote docs/CONFORMANCE.md")
sys.exit(check.returncode if wrong == 0 and crashed == 0 else 1)

"""One system's side of a benchmark config, in its own process (so that its peak
resident memory is its own): loads the model, runs it once (the first run),
saves that run's outputs, then times one run per "run" line read on stdin
until "quit". Started and driven by bench/cpu/run.py.

    worker.py SYSTEM MODEL INPUTS.npz OUTPUTS.npz --threads N [--cache-dir D]

SYSTEM: aotc (MODEL is the .so; device "cpu", PoCL), ort (MODEL is the .onnx;
CPU provider, intra_op_num_threads=N, inter_op_num_threads=1) or iree (MODEL is
the .vmfb; local-task driver with a task topology of N workers).

Protocol: one JSON object per line on the original stdout (libraries' own
prints go to stderr): first {"load_s", "first_s", "rss_base_kb",
"rss_loaded_kb"}, then {"t": seconds} per run, then {"peak_rss_kb"} after quit;
{"error": "..."} and exit status 1 on a failure.
"""

import argparse
import json
import os
import sys
import time

# NumPy's OpenBLAS starts a worker thread per further CPU when NumPy is imported, and that
# thread spins (sched_yield) for a while before it sleeps. On this 2-CPU VM it was still
# spinning when a small model's first run began, 40 ms after the import: gemm_512's first
# run took 1.06-6.15 ms in 20 fresh processes (a third over 2 ms; the spinning thread ran
# 2.9-4.0 ms of the first two runs while PoCL's two threads waited 1-5 ms for a CPU, from
# /proc/self/task/*/schedstat), and 1.06-1.16 ms in every process with this set. The
# worker's NumPy only moves arrays; no measured system uses its BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def status_kb(field):
    """A memory figure of this process from /proc/self/status: VmRSS (now) or VmHWM (peak).
    Not getrusage's ru_maxrss, which execve carries over from the parent (the driver)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def load_aotc(path, inputs, args):
    sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
    import aotc_ctypes  # noqa: E402  (the repository's ctypes binding of the C ABI)

    model = aotc_ctypes.Model(path, device="cpu", cache_dir=args.cache_dir)
    # Size the output buffers from the model (aotc_container_output_shapes), so
    # that large outputs (GPT-2's logits at batch 8) fit.
    ins = (aotc_ctypes.Tensor * len(inputs))()
    for t, a in zip(ins, inputs):
        t.data, t.nbytes, t.dtype, t.rank = a.ctypes.data, a.nbytes, aotc_ctypes.CODES[a.dtype], a.ndim
        for i, d in enumerate(a.shape):
            t.shape[i] = d
    outs = (aotc_ctypes.Tensor * model.num_outputs)()
    model._check(model.lib.aotc_container_output_shapes(model.c, ins, len(inputs), outs, model.num_outputs))
    need = max(int(np.prod([o.shape[i] for i in range(o.rank)])) * 8 for o in outs)
    capacity = max(need, 1 << 16)
    # Output buffers allocated once and reused, as a C host would: a fresh
    # buffer per run put its page faults (2,048 for gemm_1024's 8 MB) and a
    # copy of every output inside the timed run (9.2 ms against 4.7 ms from
    # `aotc run`). The first run's outputs are saved before the next run.
    # Inputs and outputs start on 256-byte boundaries, as a C host that
    # wants no copies allocates them: on PoCL's CPU device aotc_container_run
    # then uses them in place (runtime/src/host_io.h); NumPy's own large
    # arrays start 16 bytes into a page.
    # They are written once here, as the inputs are: NumPy's zeros are pages
    # mapped on their first write, and that write, in the first timed run,
    # cost the host's page faults (about 1.2 us per 4 KB page in this VM:
    # 2.5 of the 7.8 ms first run of the 112x112 depthwise convolution at
    # batch 8, whose steady run is 1.2 ms), which are not aotc's first-run
    # work (its own arena's faults stay in it). ONNX Runtime allocates its
    # outputs in every run, steady ones included.
    bufs = [aligned_zeros(capacity) for _ in range(model.num_outputs)]
    for b in bufs:
        b.fill(0xFF)
    ins_aligned = []
    for a in inputs:
        b = aligned_zeros(a.nbytes).view(a.dtype).reshape(a.shape)
        b[...] = a
        ins_aligned.append(b)
    # The arena sized and written at load for this batch, as a serving host
    # reserves for its largest batch (aotc_container_reserve; in the load
    # time): the first batch-8 run of the 112x112 depthwise convolution
    # otherwise faulted in its 13 MB arena's 3,251 pages (5.0 ms against a
    # steady 2 ms).
    model.reserve(ins_aligned)
    # The argument structs built once (Model.bind), as a C host's loop
    # would: Model.run's per-call Python cost (0.05-0.09 ms) is the
    # binding's, not aotc's. ONNX Runtime's session.run binds in C++.
    return model.bind(ins_aligned, bufs), model


def aligned_zeros(nbytes, align=256):
    """A zeroed uint8 array of nbytes starting on a multiple of align."""
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    skip = (-raw.ctypes.data) % align
    return raw[skip:skip + nbytes]


def load_ort(path, inputs, args):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Its threads spin while a run lasts (ONNX Runtime's default) and stop when it returns.
    # By default they spin-wait between runs for as long as the session is open (ONNX Runtime
    # PR #11841 added this switch for that), so in this harness they held the 2 cores while the
    # other systems' runs were timed: the MLP at batch 1 took aotc 2.2 ms alone and 6.6-9.5 ms
    # in the harness, also in turns of 5 runs after a 0.2 s pause; 3.2-4.9 ms with this switch.
    # ONNX Runtime's own time alone is the same either way (MobileNetV2 4.0-5.2 ms spinning,
    # 4.6-6.0 stopped; ResNet-18 13.1-16.7 and 13.2-16.5; the MLP 2.0 and 2.0-2.3; medians of
    # 40 runs, three alternated rounds).
    so.add_session_config_entry("session.force_spinning_stop", "1")
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), inputs)}
    # The first run through session.run (its outputs are the reference and
    # give their shapes), the timed ones through an IOBinding with inputs and
    # outputs bound once, as aotc's worker binds its runs (Model.bind): each
    # system's host overhead is its C++ (or C) call, not Python's. session.run
    # allocates the outputs and converts the feeds every call (0.54-0.58 ms
    # for gemm_128x768x768 against 0.52 bound).
    binding = []

    def run():
        if binding:
            sess.run_with_iobinding(binding[0])
            return binding[1]
        outs = sess.run(None, feeds)
        io = sess.io_binding()
        for name, a in feeds.items():
            io.bind_cpu_input(name, a)
        bound = []
        for o, ref in zip(sess.get_outputs(), outs):
            buf = np.empty_like(np.ascontiguousarray(ref))
            io.bind_output(o.name, "cpu", 0, buf.dtype, list(buf.shape), buf.ctypes.data)
            bound.append(buf)
        binding.extend([io, bound])
        return outs

    return run, sess


def load_iree(path, inputs, args):
    import iree.runtime as rt

    rt.flags.parse_flags(f"--task_topology_group_count={args.threads}")
    config = rt.Config("local-task")
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(rt.VmModule.mmap(config.vm_instance, path))
    module = ctx.modules[args.iree_module] if args.iree_module else ctx.modules.module
    fn = module[args.iree_function]

    def run():
        out = fn(*inputs)
        outs = out if isinstance(out, (list, tuple)) else [out]
        return [o.to_host() if hasattr(o, "to_host") else np.asarray(o) for o in outs]

    return run, ctx


LOADERS = {"aotc": load_aotc, "ort": load_ort, "iree": load_iree}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("system", choices=LOADERS)
    ap.add_argument("model")
    ap.add_argument("inputs")
    ap.add_argument("outputs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache-dir")
    ap.add_argument("--iree-function", default="main_graph")
    ap.add_argument("--iree-module")
    args = ap.parse_args()

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def send(obj):
        proto.write(json.dumps(obj) + "\n")

    try:
        with np.load(args.inputs) as z:
            inputs = [np.ascontiguousarray(z[f"arr_{i}"]) for i in range(len(z.files))]
        base = status_kb("VmRSS")
        t = time.perf_counter()
        run, keep = LOADERS[args.system](args.model, inputs, args)
        load_s = time.perf_counter() - t
        loaded = status_kb("VmRSS")
        t = time.perf_counter()
        outs = run()
        first_s = time.perf_counter() - t
        np.savez(args.outputs, *[np.asarray(o) for o in outs])
        send({"load_s": load_s, "first_s": first_s, "rss_base_kb": base, "rss_loaded_kb": loaded})
        for line in sys.stdin:
            if line.strip() != "run":
                break
            t = time.perf_counter()
            run()
            send({"t": time.perf_counter() - t})
        send({"peak_rss_kb": status_kb("VmHWM")})
    except Exception as ex:  # reported to the driver, which records it
        msg = str(ex).strip().splitlines()
        send({"error": f"{type(ex).__name__}: {msg[0] if msg else ''}"[:500]})
        sys.exit(1)
    del keep


if __name__ == "__main__":
    main()

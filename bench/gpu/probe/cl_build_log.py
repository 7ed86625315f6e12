"""Builds aotc's generated OpenCL (aotc compile --emit=cl) on the device, writes each
file's full build log and device binary (PTX text on NVIDIA's driver) to OUTDIR, and
prints the log's register and spill lines for the kernels --match names (with
-cl-nv-verbose on NVIDIA's driver; driver 580 printed none for a whole model's program,
only warnings, so count the PTX instead: grep -o the mnemonics of the kernel's .entry).

  python3 bench/gpu/probe/cl_build_log.py OUTDIR --match attn_MatMul_1 FILE.cl ...
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sgemm_probe import Device, cl, info_str, program_binary, check  # noqa: E402
import ctypes as C  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--match", default="", help="regex of the kernel names to report")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dev = Device()
    opts = "-cl-std=CL1.2" + (" -cl-nv-verbose" if dev.nvidia else "")
    for path in a.files:
        name = os.path.splitext(os.path.basename(path))[0]
        src = open(path).read()
        err = C.c_int32()
        s = C.c_char_p(src.encode())
        prog = cl.clCreateProgramWithSource(dev.ctx, 1, C.byref(s), None, C.byref(err))
        check(err.value, "program")
        rc = cl.clBuildProgram(prog, 1, C.byref(dev.device), opts.encode(), None, None)
        log = info_str(cl.clGetProgramBuildInfo, prog, 0x1183, dev.device)
        open(os.path.join(a.out, name + ".log"), "w").write(log)
        if rc != 0:
            print(f"{name}: build failed ({rc})")
            continue
        open(os.path.join(a.out, name + ".ptx"), "wb").write(program_binary(prog))
        # ptxas prints "Compiling entry function 'k'" then its registers and spills.
        current = None
        for line in log.splitlines():
            m = re.search(r"[Ff]unction properties for (\w+)|entry function '(\w+)'", line)
            if m:
                current = m.group(1) or m.group(2)
            if current and re.search(a.match, current) and re.search(r"registers|spill|stack", line):
                print(f"{name} {current}: {line.strip()}")
        cl.clReleaseProgram(prog)


if __name__ == "__main__":
    main()

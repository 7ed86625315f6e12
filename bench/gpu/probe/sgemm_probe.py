"""Times variants of a parametric SGEMM (sgemm.cl beside this) and aotc's own
generated GEMM kernels through raw OpenCL (ctypes, no build step), to find
what the work-group tile template should emit on a GPU before changing it.

  python3 bench/gpu/probe/sgemm_probe.py OUTDIR [--sizes 2048,4096] [--runs 20]
      [--gen NAME=FILE.cl:M ...]   (an aotc --emit cl kernel of an M^3 GEMM)

Prints one line per variant and size: kernel median ms, TFLOP/s, max error
against numpy on 64 sampled rows; writes each variant's build log (with
-cl-nv-verbose where the driver is NVIDIA's: registers and spills).
"""
import argparse
import ctypes as C
import os
import re
import sys

import numpy as np

cl = C.CDLL("libOpenCL.so.1")
P, I32, U32, U64, SZ = C.c_void_p, C.c_int32, C.c_uint32, C.c_uint64, C.c_size_t
for name, res, args in [
    ("clGetPlatformIDs", I32, [U32, C.POINTER(P), C.POINTER(U32)]),
    ("clGetPlatformInfo", I32, [P, U32, SZ, P, C.POINTER(SZ)]),
    ("clGetDeviceIDs", I32, [P, U64, U32, C.POINTER(P), C.POINTER(U32)]),
    ("clGetDeviceInfo", I32, [P, U32, SZ, P, C.POINTER(SZ)]),
    ("clCreateContext", P, [P, U32, C.POINTER(P), P, P, C.POINTER(I32)]),
    ("clCreateCommandQueue", P, [P, P, U64, C.POINTER(I32)]),
    ("clCreateProgramWithSource", P, [P, U32, C.POINTER(C.c_char_p), C.POINTER(SZ), C.POINTER(I32)]),
    ("clBuildProgram", I32, [P, U32, C.POINTER(P), C.c_char_p, P, P]),
    ("clGetProgramInfo", I32, [P, U32, SZ, P, C.POINTER(SZ)]),
    ("clGetProgramBuildInfo", I32, [P, P, U32, SZ, P, C.POINTER(SZ)]),
    ("clCreateKernel", P, [P, C.c_char_p, C.POINTER(I32)]),
    ("clCreateBuffer", P, [P, U64, SZ, P, C.POINTER(I32)]),
    ("clSetKernelArg", I32, [P, U32, SZ, P]),
    ("clEnqueueNDRangeKernel", I32, [P, P, U32, P, C.POINTER(SZ), C.POINTER(SZ), U32, P, C.POINTER(P)]),
    ("clEnqueueReadBuffer", I32, [P, P, U32, SZ, SZ, P, U32, P, P]),
    ("clWaitForEvents", I32, [U32, C.POINTER(P)]),
    ("clGetEventProfilingInfo", I32, [P, U32, SZ, P, C.POINTER(SZ)]),
    ("clReleaseEvent", I32, [P]),
    ("clReleaseKernel", I32, [P]),
    ("clReleaseProgram", I32, [P]),
    ("clReleaseMemObject", I32, [P]),
    ("clFinish", I32, [P]),
]:
    f = getattr(cl, name)
    f.restype, f.argtypes = res, args


def check(err, what):
    if err != 0:
        raise RuntimeError(f"{what}: OpenCL error {err}")


def info_str(fn, obj, param, *extra):
    size = SZ()
    check(fn(obj, *extra, param, 0, None, C.byref(size)), "info")
    buf = C.create_string_buffer(size.value)
    check(fn(obj, *extra, param, size.value, buf, None), "info")
    return buf.value.decode(errors="replace")


class Device:
    def __init__(self):
        n = U32()
        check(cl.clGetPlatformIDs(0, None, C.byref(n)), "platforms")
        plats = (P * n.value)()
        cl.clGetPlatformIDs(n.value, plats, None)
        self.platform = plats[0]
        dev = P()
        check(cl.clGetDeviceIDs(self.platform, 0xFFFFFFFF, 1, C.byref(dev), None), "device")
        self.device = dev
        self.name = info_str(cl.clGetDeviceInfo, dev, 0x102B)  # CL_DEVICE_NAME
        self.nvidia = "NVIDIA" in info_str(cl.clGetPlatformInfo, self.platform, 0x0902)
        err = I32()
        self.ctx = cl.clCreateContext(None, 1, C.byref(dev), None, None, C.byref(err))
        check(err.value, "context")
        self.queue = cl.clCreateCommandQueue(self.ctx, dev, 2, C.byref(err))  # profiling
        check(err.value, "queue")

    def buffer(self, arr):
        err = I32()
        b = cl.clCreateBuffer(self.ctx, 1 | 32, arr.nbytes, arr.ctypes.data, C.byref(err))
        check(err.value, "buffer")
        return b

    def build(self, src, options, kernel_name):
        err = I32()
        s = C.c_char_p(src.encode())
        prog = cl.clCreateProgramWithSource(self.ctx, 1, C.byref(s), None, C.byref(err))
        check(err.value, "program")
        rc = cl.clBuildProgram(prog, 1, C.byref(self.device), options.encode(), None, None)
        log = info_str(cl.clGetProgramBuildInfo, prog, 0x1183, self.device)  # BUILD_LOG
        if rc != 0:
            raise RuntimeError(f"build failed ({rc}): {log[-3000:]}")
        k = cl.clCreateKernel(prog, kernel_name.encode(), C.byref(err))
        check(err.value, "kernel")
        return prog, k, log

    def launch(self, kernel, gsize, lsize, runs):
        g, l = SZ(gsize), SZ(lsize)
        times = []
        for _ in range(runs):
            ev = P()
            check(cl.clEnqueueNDRangeKernel(self.queue, kernel, 1, None, C.byref(g), C.byref(l), 0,
                                            None, C.byref(ev)), "launch")
            check(cl.clWaitForEvents(1, C.byref(ev)), "wait")
            t0, t1 = U64(), U64()
            cl.clGetEventProfilingInfo(ev, 0x1282, 8, C.byref(t0), None)
            cl.clGetEventProfilingInfo(ev, 0x1283, 8, C.byref(t1), None)
            cl.clReleaseEvent(ev)
            times.append((t1.value - t0.value) * 1e-6)
        return times

    def read(self, buf, arr):
        check(cl.clEnqueueReadBuffer(self.queue, buf, 1, 0, arr.nbytes, arr.ctypes.data, 0, None,
                                     None), "read")


def program_binary(prog):
    """The program's device binary (PTX text on NVIDIA's driver)."""
    size = SZ()
    check(cl.clGetProgramInfo(prog, 0x1165, C.sizeof(size), C.byref(size), None), "binary size")
    buf = C.create_string_buffer(size.value)
    ptr = P(C.addressof(buf))
    check(cl.clGetProgramInfo(prog, 0x1166, C.sizeof(ptr), C.byref(ptr), None), "binary")
    # NVIDIA's PTX text ends in a NUL, which ptxas reads as an unexpected end of file.
    return buf.raw.rstrip(b"\0")


def set_args(kernel, args):
    for i, a in enumerate(args):
        if isinstance(a, tuple):  # (ctype value)
            v = a[0]
            check(cl.clSetKernelArg(kernel, i, C.sizeof(v), C.byref(v)), f"arg {i}")
        else:
            v = P(a)
            check(cl.clSetKernelArg(kernel, i, C.sizeof(v), C.byref(v)), f"arg {i}")


# name: GM GN TM TN BK NBUF AVEC BVEC [IDX [CAST]]
VARIANTS = {
    "c16x8_bk16_nb1_s": (16, 8, 8, 8, 16, 1, 1, 1, "int", 1),
    "c16x8_bk16_nb1_s_long": (16, 8, 8, 8, 16, 1, 1, 1, "long", 1),
    "c16x8_bk16_nb2_s_long": (16, 8, 8, 8, 16, 2, 1, 1, "long", 1),
    "c16x8_bk16_nb1_v_long": (16, 8, 8, 8, 16, 1, 4, 4, "long", 1),
    "c16x8_bk16_nb2_v_long": (16, 8, 8, 8, 16, 2, 4, 4, "long", 1),
    "c16x16_bk16_nb2_s_long": (16, 16, 8, 8, 16, 2, 1, 1, "long", 1),
    "c16x16_bk16_nb1_s_long": (16, 16, 8, 8, 16, 1, 1, 1, "long", 1),
    "c16x16_bk8_nb2_v_long": (16, 16, 8, 8, 8, 2, 4, 4, "long", 1),
    "c8x16_tm16tn8_bk8_nb2_s_long": (8, 16, 16, 8, 8, 2, 1, 1, "long", 1),
    "c16x8_tm8tn16_bk8_nb2_s_long": (16, 8, 8, 16, 8, 2, 1, 1, "long", 1),
    "p16x8_bk16_nb1_s": (16, 8, 8, 8, 16, 1, 1, 1),
    "p16x8_bk16_nb1_v": (16, 8, 8, 8, 16, 1, 4, 4),
    "p16x8_bk16_nb2_s": (16, 8, 8, 8, 16, 2, 1, 1),
    "p16x8_bk16_nb2_v": (16, 8, 8, 8, 16, 2, 4, 4),
    "p16x8_bk16_nb2_v_long": (16, 8, 8, 8, 16, 2, 4, 4, "long"),
    "p16x8_bk8_nb2_v": (16, 8, 8, 8, 8, 2, 4, 4),
    "p16x8_bk32_nb2_v": (16, 8, 8, 8, 32, 2, 4, 4),
    "p16x16_bk8_nb2_v": (16, 16, 8, 8, 8, 2, 4, 4),
    "p16x16_bk16_nb2_v": (16, 16, 8, 8, 16, 2, 4, 4),
    "p16x16_bk16_nb1_v": (16, 16, 8, 8, 16, 1, 4, 4),
    "p8x16_bk16_nb2_v": (8, 16, 8, 8, 16, 2, 4, 4),
    "p8x8_bk16_nb2_v": (8, 8, 8, 8, 16, 2, 4, 4),
    "p16x16_tm8tn4_bk16_nb2_v": (16, 16, 8, 4, 16, 2, 4, 4),
    "p32x8_tm4tn8_bk16_nb2_v": (32, 8, 4, 8, 16, 2, 4, 4),
    "p16x8_tm8tn16_bk8_nb2_v": (16, 8, 8, 16, 8, 2, 4, 4),
    "p8x16_tm16tn8_bk8_nb2_v": (8, 16, 16, 8, 8, 2, 4, 4),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sizes", default="2048,4096,8192")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--variants", default="")
    ap.add_argument("--gen", action="append", default=[], help="NAME=FILE.cl:M aotc kernel")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dev = Device()
    print(f"device: {dev.name}", flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, "sgemm.cl")).read()
    names = [v for v in a.variants.split(",") if v] or list(VARIANTS)
    rng = np.random.default_rng(0)
    sizes = [int(s) for s in a.sizes.split(",")]
    gens = []
    for g in a.gen:
        name, rest = g.split("=", 1)
        path, m = rest.rsplit(":", 1)
        gens.append((name, path, int(m), False))
        gens.append((name + "_cast", path, int(m), True))
    for n in sizes:
        A = rng.standard_normal((n, n), dtype=np.float32)
        B = rng.standard_normal((n, n), dtype=np.float32)
        rows = np.sort(rng.choice(n, 64, replace=False))
        ref = A[rows].astype(np.float64) @ B.astype(np.float64)
        scale = np.abs(ref).max()
        dA, dB = dev.buffer(A), dev.buffer(B)
        Cz = np.zeros((n, n), np.float32)
        dC = dev.buffer(Cz)
        flops = 2.0 * n * n * n
        jobs = [(v, None) for v in names] + [(g[0], g) for g in gens if g[2] == n]
        for name, gen in jobs:
            try:
                if gen is None:
                    p = VARIANTS[name]
                    gm, gn, tm, tn, bk, nbuf, av, bv = p[:8]
                    idx = p[8] if len(p) > 8 else "int"
                    cast = p[9] if len(p) > 9 else 0
                    if n % (gm * tm) or n % (gn * tn) or n % bk:
                        continue
                    opts = (f"-cl-std=CL1.2 -DGM={gm} -DGN={gn} -DTM={tm} -DTN={tn} -DBK={bk} "
                            f"-DNBUF={nbuf} -DAVEC={av} -DBVEC={bv} -DIDX={idx} -DCAST={cast}")
                    if dev.nvidia:
                        opts += " -cl-nv-verbose"
                    prog, k, log = dev.build(src, opts, "sgemm")
                    set_args(k, [dA, dB, dC, (I32(n),), (I32(n),), (I32(n),)])
                    wg = gm * gn
                    gsize = (n // (gm * tm)) * (n // (gn * tn)) * wg
                else:
                    gsrc = open(gen[1]).read()
                    if gen[3]:  # local float4 reads through aligned float4 pointers
                        gsrc = re.sub(r"(__local float tile\w+\[\d+\]);", r"\1 __attribute__((aligned(16)));",
                                      gsrc)
                        gsrc = re.sub(r"vload4\(0, (tile\w+ \+ [^;]*)\);",
                                      r"(*(__local const float4 *)(\1));", gsrc)
                    kname = re.search(r"__kernel void (\w+)\(", gsrc).group(1)
                    opts = "-cl-std=CL1.2" + (" -cl-nv-verbose" if dev.nvidia else "")
                    prog, k, log = dev.build(gsrc, opts, kname)
                    # aotc's buffers: (const B, off), (A, off), (C, off)
                    set_args(k, [dB, (U64(0),), dA, (U64(0),), dC, (U64(0),)])
                    wg = int(re.search(r"gid0 % (\d+)", gsrc).group(1))
                    m = re.search(r"\(gid0 / \d+\) % (\d+)", gsrc)
                    nbn = int(m.group(1))
                    bm = int(re.search(r"\((\d+) \* gm\)", gsrc).group(1)) // n
                    gsize = (n // bm) * nbn * wg
                with open(os.path.join(a.out, f"{name}_{n}.log"), "w") as f:
                    f.write(opts + "\n" + log)
                ptx = program_binary(prog)
                with open(os.path.join(a.out, f"{name}_{n}.ptx"), "wb") as f:
                    f.write(ptx)
                v4 = len(re.findall(rb"ld\.shared\.v4\.f32", ptx))
                s1 = len(re.findall(rb"ld\.shared\.f32", ptx))
                regs = re.findall(r"Used (\d+) registers", log)
                spill = re.findall(r"(\d+) bytes spill stores", log)
                dev.launch(k, gsize, wg, 2)
                t = dev.launch(k, gsize, wg, a.runs)
                dev.read(dC, Cz)
                err = np.abs(Cz[rows] - ref).max() / scale
                med = float(np.median(t))
                print(f"{n:5d} {name:28s} {med:8.3f} ms {flops / med * 1e-9:7.2f} TFLOP/s "
                      f"min {min(t):8.3f} err {err:.1e} regs {','.join(regs)} spill {','.join(spill)} "
                      f"lds.v4 {v4} lds.f32 {s1}",
                      flush=True)
                Cz[:] = 0
                cl.clReleaseKernel(k)
                cl.clReleaseProgram(prog)
            except Exception as e:  # noqa: BLE001 - report and go on with the next variant
                print(f"{n:5d} {name:28s} FAILED {e}", flush=True)
        for b in (dA, dB, dC):
            cl.clReleaseMemObject(b)


if __name__ == "__main__":
    sys.exit(main())

"""A minimal Python binding of the aotc C ABI through ctypes (no build step).

Used to check and time model .so files on machines that have Python and an
OpenCL driver but no aotc build (the lent GPU machine).
"""
import ctypes
import os

import numpy as np

MAX_RANK = 8
BF16 = np.dtype([("bf16", np.uint16)])  # bfloat16: its bits, as a one-field record
DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
          9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 16: BF16}
CODES = {np.dtype(v): k for k, v in DTYPES.items()}


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("nbytes", ctypes.c_uint64), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * MAX_RANK)]


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("device", ctypes.c_char_p),
                ("num_instances", ctypes.c_uint32), ("cache_dir", ctypes.c_char_p)]


class ProfileRecord(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("index", ctypes.c_int32), ("start_ns", ctypes.c_uint64),
                ("end_ns", ctypes.c_uint64), ("flops", ctypes.c_double), ("bytes", ctypes.c_double)]


PROFILE_KINDS = {0: "run", 1: "enqueue", 2: "kernel", 3: "copy_in", 4: "copy_out"}


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.c_int64 * MAX_RANK), ("dim_symbols", ctypes.c_int32 * MAX_RANK),
                ("dim_texts", ctypes.c_char_p * MAX_RANK)]


class ConstantEntry(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("tensor", Tensor)]


class DeviceTensor(ctypes.Structure):
    _fields_ = [("buffer", ctypes.c_void_p), ("offset", ctypes.c_uint64), ("nbytes", ctypes.c_uint64),
                ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * MAX_RANK)]


def _fill(t, a):
    """Points an aotc_tensor_t at the C-contiguous array a (kept alive by the caller)."""
    t.data, t.nbytes, t.dtype, t.rank = a.ctypes.data, a.nbytes, CODES[a.dtype], a.ndim
    for i, d in enumerate(a.shape):
        t.shape[i] = d


def _shape(t):
    """The shape an aotc_tensor_t reports, as a tuple."""
    return tuple(t.shape[i] for i in range(t.rank))


def _output_view(buf, code, shape):
    """An output written into the uint8 array buf: its first elements of the
    aotc dtype code, shaped."""
    dt = np.dtype(DTYPES[code])
    n = int(np.prod(shape)) if shape else 1
    return buf[: n * dt.itemsize].view(dt).reshape(shape)


class OpenCL:
    """The few OpenCL calls a host needs to keep tensors on the device: buffers in the
    container's context, filled and read back through a queue of its own."""
    MEM_READ_WRITE, MEM_COPY_HOST_PTR = 1 << 0, 1 << 5

    def __init__(self, context, device):
        self.cl = ctypes.CDLL("libOpenCL.so.1")
        self.cl.clCreateBuffer.restype = ctypes.c_void_p
        self.cl.clCreateBuffer.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t,
                                           ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]
        self.cl.clCreateCommandQueue.restype = ctypes.c_void_p
        self.cl.clCreateCommandQueue.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                                 ctypes.POINTER(ctypes.c_int32)]
        self.cl.clEnqueueReadBuffer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32,
                                                ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p,
                                                ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
        self.cl.clReleaseMemObject.argtypes = [ctypes.c_void_p]
        self.cl.clReleaseCommandQueue.argtypes = [ctypes.c_void_p]
        self.cl.clFinish.argtypes = [ctypes.c_void_p]
        self.context = context
        err = ctypes.c_int32()
        self.queue = self.cl.clCreateCommandQueue(context, device, 0, ctypes.byref(err))
        self._check(err.value, "clCreateCommandQueue")

    @staticmethod
    def _check(err, what):
        if err != 0:
            raise RuntimeError(f"{what} failed: OpenCL error {err}")

    def buffer(self, nbytes, host=None):
        """A cl_mem of max(nbytes, 1) bytes, a copy of `host` (an array) when given."""
        err = ctypes.c_int32()
        flags = self.MEM_READ_WRITE | (self.MEM_COPY_HOST_PTR if host is not None else 0)
        ptr = host.ctypes.data if host is not None else None
        buf = self.cl.clCreateBuffer(self.context, flags, max(nbytes, 1), ptr, ctypes.byref(err))
        self._check(err.value, "clCreateBuffer")
        return buf

    def read(self, buf, out):
        """Blocking read of out.nbytes bytes from the buffer's start into the array out."""
        if out.nbytes:
            self._check(self.cl.clEnqueueReadBuffer(self.queue, buf, 1, 0, out.nbytes, out.ctypes.data,
                                                    0, None, None), "clEnqueueReadBuffer")
        return out

    def release(self, buf):
        self.cl.clReleaseMemObject(buf)

    def finish(self):
        self._check(self.cl.clFinish(self.queue), "clFinish")

    def __del__(self):
        if getattr(self, "queue", None):
            self.cl.clReleaseCommandQueue(self.queue)


def _device_tensors(inputs, outputs):
    """The aotc_device_tensor_t arrays of a device run: inputs [(cl_mem, array-like template of
    dtype and shape)], outputs [(cl_mem, capacity bytes)]."""
    ins = (DeviceTensor * len(inputs))()
    for t, (buf, a) in zip(ins, inputs):
        t.buffer, t.offset, t.nbytes, t.dtype, t.rank = buf, 0, a.nbytes, CODES[a.dtype], a.ndim
        for i, d in enumerate(a.shape):
            t.shape[i] = d
    outs = (DeviceTensor * len(outputs))()
    for t, (buf, cap) in zip(outs, outputs):
        t.buffer, t.offset, t.nbytes = buf, 0, cap
    return ins, outs


class Model:
    def __init__(self, path, device="gpu", cache_dir=None, profile=False):
        self.lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        self.lib.aotc_last_error.restype = ctypes.c_char_p
        if hasattr(self.lib, "aotc_container_run_device_async"):  # .so files of older aotc lack it
            self.lib.aotc_container_run_device_async.argtypes = [
                ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
                ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
            self.lib.aotc_run_wait.argtypes = [ctypes.c_void_p]
        opts = Options()
        self.lib.aotc_container_options_init(ctypes.byref(opts))
        opts.device = device.encode()
        if cache_dir:
            opts.cache_dir = cache_dir.encode()
        self.c = ctypes.c_void_p()
        self._check(self.lib.aotc_container_create(ctypes.byref(opts), ctypes.byref(self.c)))
        if profile:
            self.set_profiling(True)
        name = ctypes.c_char_p()
        self._check(self.lib.aotc_container_device_name(self.c, ctypes.byref(name)))
        self.device_name = name.value.decode()
        n = ctypes.c_size_t()
        self._check(self.lib.aotc_container_num_outputs(self.c, ctypes.byref(n)))
        self.num_outputs = n.value
        from_cache = ctypes.c_int32()
        self._check(self.lib.aotc_container_program_source(self.c, ctypes.byref(from_cache)))
        self.program_from_cache = bool(from_cache.value)
        # 0: built from source, 1: the binary cache, 2: embedded (--prebuild).
        self.program_source = from_cache.value

    def _check(self, status):
        if status != 0:
            raise RuntimeError(f"aotc status {status}: {self.lib.aotc_last_error().decode()}")

    def _capacities(self, ins, n_in, capacity):
        """Bytes for each output: `capacity`, or where it is None 64 MiB or
        the size aotc_container_output_shapes gives for these inputs where
        that is more (an output sized by data reports less than it may need:
        64 MiB covers the tests' own)."""
        if capacity is not None:
            return [capacity] * self.num_outputs
        outs = (Tensor * self.num_outputs)()
        if self.lib.aotc_container_output_shapes(self.c, ins, n_in, outs, self.num_outputs) != 0:
            return [1 << 26] * self.num_outputs
        return [max(int(np.prod([o.shape[i] for i in range(o.rank)])) * 8, 1 << 26) for o in outs]

    def run(self, inputs, capacity=None, out_buffers=None):
        """Runs the model; returns the outputs. With out_buffers (one uint8
        array per output, from the caller, reused across runs as a C host
        would) the outputs are views into them, valid until the next run;
        without, fresh buffers of `capacity` bytes (by default the outputs'
        sizes for these inputs) and copies."""
        ins = (Tensor * len(inputs))()
        keep = []
        for t, a in zip(ins, inputs):
            # np.ascontiguousarray would make a rank-0 array rank 1.
            a = np.require(np.asarray(a), requirements="C")
            keep.append(a)
            _fill(t, a)
        outs = (Tensor * self.num_outputs)()
        bufs = list(out_buffers) if out_buffers is not None else []
        sizes = self._capacities(ins, len(inputs), capacity) if out_buffers is None else []
        for i, t in enumerate(outs):
            if out_buffers is None:
                bufs.append(np.empty(sizes[i], dtype=np.uint8))
            b = bufs[i]
            t.data, t.nbytes = b.ctypes.data, b.nbytes
        self._check(self.lib.aotc_container_run(self.c, ins, len(inputs), outs, self.num_outputs))
        result = []
        for t, b in zip(outs, bufs):
            view = _output_view(b, t.dtype, _shape(t))
            result.append(view if out_buffers is not None else view.copy())
        return result

    def bind(self, inputs, out_buffers):
        """A run over fixed inputs and output buffers (C-contiguous arrays the
        caller keeps, whose contents may change between runs), as a C host
        calls aotc_container_run in a loop: the aotc_tensor_t arrays are built
        once, and the outputs' views are rebuilt only when a run reports other
        shapes. Returns a function that runs the model and returns the views
        (valid until the next run). Model.run builds all of that per call:
        0.05-0.09 ms of Python a run (gemm_128x768x768 ran 0.59-0.64 ms
        through it against 0.54 through one prepared call)."""
        keep = [np.require(np.asarray(a), requirements="C") for a in inputs]
        ins = (Tensor * len(keep))()
        for t, a in zip(ins, keep):
            _fill(t, a)
        bufs = list(out_buffers)
        outs = (Tensor * self.num_outputs)()
        for t, b in zip(outs, bufs):
            t.data, t.nbytes = b.ctypes.data, b.nbytes
        call = self.lib.aotc_container_run
        c, n_in, n_out = self.c, len(keep), self.num_outputs
        views, shapes = [], None

        def run():
            nonlocal views, shapes
            self._check(call(c, ins, n_in, outs, n_out))
            now = [(t.dtype, _shape(t)) for t in outs]
            if now != shapes:
                views = [_output_view(b, code, shape) for (code, shape), b in zip(now, bufs)]
                shapes = now
            return views

        run.keep = (keep, bufs, ins, outs)
        return run

    def constants(self):
        """[(onnx name, dtype, shape)] of the updatable constants (aotc_container_extract_constants
        describes them: a packed weight is listed under its initializer's name)."""
        n = ctypes.c_size_t()
        self._check(self.lib.aotc_container_extract_constants(self.c, 0, None, 0, ctypes.byref(n)))
        entries = (ConstantEntry * n.value)()
        self._check(self.lib.aotc_container_extract_constants(self.c, 0, entries, n.value,
                                                              ctypes.byref(n)))
        return [(e.name.decode(), DTYPES[e.tensor.dtype],
                 tuple(e.tensor.shape[d] for d in range(e.tensor.rank))) for e in entries]

    def update_constants(self, values, use_inactive=False, validate_full=True):
        """values: {onnx name: array}. Copies them into the active (or inactive) constant set."""
        entries = (ConstantEntry * len(values))()
        keep = []
        for e, (name, a) in zip(entries, values.items()):
            a = np.require(np.asarray(a), requirements="C")
            keep.append((name.encode(), a))
            e.name = keep[-1][0]
            _fill(e.tensor, a)
        self._check(self.lib.aotc_container_update_constants(self.c, entries, len(values),
                                                             int(use_inactive), int(validate_full)))

    def opencl(self):
        """An OpenCL helper bound to the container's context (for run_device)."""
        ctx, dev = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.lib.aotc_container_opencl_handles(self.c, ctypes.byref(ctx), ctypes.byref(dev)))
        return OpenCL(ctx.value, dev.value)

    def run_device(self, inputs, outputs):
        """inputs: [(cl_mem, array-like template of dtype and shape)]; outputs: [(cl_mem, capacity
        bytes)]. Runs on the device buffers; returns the outputs' (dtype, shape)."""
        ins, outs = _device_tensors(inputs, outputs)
        self._check(self.lib.aotc_container_run_device(self.c, ins, len(inputs), outs, len(outputs)))
        return [(np.dtype(DTYPES[t.dtype]), _shape(t)) for t in outs]

    def run_device_async(self, inputs, outputs, queue):
        """As run_device, enqueued in order with the cl_command_queue `queue` without waiting
        (aotc_container_run_device_async); returns the run, for wait()."""
        ins, outs = _device_tensors(inputs, outputs)
        run = ctypes.c_void_p()
        self._check(self.lib.aotc_container_run_device_async(
            self.c, ins, len(inputs), outs, len(outputs), queue, ctypes.byref(run)))
        return run

    def wait(self, run):
        """aotc_run_wait: the run's result (its run-time checks) as an exception."""
        self._check(self.lib.aotc_run_wait(run))

    def kernel_summaries(self):
        """[(kernel name, what it computes)] in kernel order."""
        n = ctypes.c_size_t()
        self._check(self.lib.aotc_container_num_kernels(self.c, ctypes.byref(n)))
        out = []
        for k in range(n.value):
            name, summary = ctypes.c_char_p(), ctypes.c_char_p()
            self._check(self.lib.aotc_container_kernel_name(self.c, k, ctypes.byref(name)))
            self._check(self.lib.aotc_container_kernel_summary(self.c, k, ctypes.byref(summary)))
            out.append((name.value.decode(), summary.value.decode()))
        return out

    def reserve(self, inputs):
        """aotc_container_reserve for the symbol values these inputs' shapes
        give (each symbol a dim of some input is): every instance's arena
        sized and written for runs of these sizes. False where a symbol is
        not a dim of an input (nothing reserved)."""
        n = ctypes.c_size_t()
        self._check(self.lib.aotc_container_num_symbols(self.c, ctypes.byref(n)))
        values = [None] * n.value
        for i, a in enumerate(inputs):
            info = TensorInfo()
            self._check(self.lib.aotc_container_input_info(self.c, i, ctypes.byref(info)))
            for d in range(info.rank):
                if info.dim_symbols[d] >= 0:
                    values[info.dim_symbols[d]] = int(np.shape(a)[d])
        if any(v is None for v in values):
            return False
        arr = (ctypes.c_int64 * max(1, len(values)))(*values)
        self._check(self.lib.aotc_container_reserve(self.c, arr, len(values)))
        return True

    def set_profiling(self, enable):
        """Turns the container's profiling events on or off (for last_profile)."""
        self._check(self.lib.aotc_container_set_profiling(self.c, int(enable)))

    def last_profile(self):
        """The last run's records (profile=True): dicts with kind, index,
        start_ns, end_ns, flops, bytes."""
        n = ctypes.c_size_t()
        self._check(self.lib.aotc_container_last_profile(self.c, None, 0, ctypes.byref(n)))
        recs = (ProfileRecord * n.value)()
        self._check(self.lib.aotc_container_last_profile(self.c, recs, n.value, ctypes.byref(n)))
        return [{"kind": PROFILE_KINDS.get(r.kind, r.kind), "index": r.index,
                 "start_ns": r.start_ns, "end_ns": r.end_ns, "flops": r.flops,
                 "bytes": r.bytes} for r in recs[: n.value]]

    def __del__(self):
        if getattr(self, "c", None):
            self.lib.aotc_container_delete(self.c)

/*
 * \file
 * The public C ABI of an aotc model shared object.
 *
 * Every model .so produced by aotc exports exactly these functions (all with
 * the prefix aotc_). A host application dlopen()s the .so (RTLD_LOCAL, so
 * that several models can live in one process), resolves the functions with
 * dlsym() (the *_fn typedefs at the end of this file help) or links the .so
 * directly, and runs the model through an opaque container. dlopen() of a
 * path whose library is still open returns that library: a host that
 * recompiles a model to the same path and loads it again in one process
 * must dlclose() the old handle first (after destroying its containers), or
 * write each build to a path of its own, else it runs the old model.
 *
 * Conventions (after IREE's runtime API):
 *  - Every fallible call returns an aotc_status_t (AOTC_OK == 0) and writes
 *    its results through trailing out_ pointers. On failure the out_ values
 *    are left unspecified unless the function says otherwise, and
 *    aotc_last_error() returns a message that names the offending input,
 *    output, device or file.
 *  - No call aborts the process or throws: bad input, a missing device, a
 *    failed OpenCL build or an allocation failure is an error status.
 *  - Strings returned by the container (names, metadata, device name) live
 *    as long as the container.
 *
 * Thread safety: aotc_container_run, aotc_container_output_shapes, every
 * introspection call and the constant updates (update, fold, swap, free,
 * extract) may be used concurrently from any number of threads on one
 * container. aotc_container_delete must not race with any other call on
 * the same container.
 *
 * This header is plain C99 and depends on no OpenCL header.
 */
#ifndef AOTC_RUNTIME_H
#define AOTC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a function of the C ABI: exported from the model .so even though the
 * runtime is compiled with -fvisibility=hidden. */
#if defined(_WIN32)
#define AOTC_API
#else
#define AOTC_API __attribute__((visibility("default")))
#endif

/* Version of this C ABI; bumped on any incompatible change of a signature or
 * of a struct layout below. Hosts compare it with aotc_abi_version(). */
#define AOTC_ABI_VERSION 1

/* The largest tensor rank of a model input or output. */
#define AOTC_MAX_RANK 8

typedef enum aotc_status_t {
  AOTC_OK = 0,
  /* A null pointer, a bad count, an input that does not match the model. */
  AOTC_ERROR_INVALID_ARGUMENT = 1,
  /* No such device, metadata key, file or symbol. */
  AOTC_ERROR_NOT_FOUND = 2,
  /* OpenCL reported an error (build failure, lost device, ...). */
  AOTC_ERROR_DEVICE_ERROR = 3,
  /* Host or device memory could not be allocated. */
  AOTC_ERROR_OUT_OF_MEMORY = 4,
  /* An output buffer is smaller than the output; shapes are filled. */
  AOTC_ERROR_BUFFER_TOO_SMALL = 5,
  /* The model or device needs something this runtime cannot do. */
  AOTC_ERROR_UNSUPPORTED = 6,
  /* A bug in aotc (or a corrupt model .so). */
  AOTC_ERROR_INTERNAL = 7,
} aotc_status_t;

/* Element types. Values follow ONNX TensorProto.DataType and equal the
 * AOTC_DT_* values of the compiler's model descriptor. */
typedef enum aotc_dtype_t {
  AOTC_DTYPE_FLOAT32 = 1,
  AOTC_DTYPE_UINT8 = 2,
  AOTC_DTYPE_INT8 = 3,
  AOTC_DTYPE_UINT16 = 4,
  AOTC_DTYPE_INT16 = 5,
  AOTC_DTYPE_INT32 = 6,
  AOTC_DTYPE_INT64 = 7,
  AOTC_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  AOTC_DTYPE_FLOAT16 = 10, /* IEEE 754 binary16, two bytes */
  AOTC_DTYPE_FLOAT64 = 11,
  AOTC_DTYPE_UINT32 = 12,
  AOTC_DTYPE_BFLOAT16 = 16, /* a float32's top 16 bits, two bytes */
} aotc_dtype_t;

/* Returns AOTC_ABI_VERSION as compiled into the model .so. */
AOTC_API uint32_t aotc_abi_version(void);

/* Returns the message of the last failed aotc_ call on the calling thread
 * ("" if none failed yet). Successful calls leave it unchanged. The pointer is
 * valid until the next failing aotc_ call on this thread. Messages longer
 * than 16 KiB are truncated. */
AOTC_API const char *aotc_last_error(void);

/* Returns a static name for a status ("AOTC_ERROR_NOT_FOUND"), or
 * "AOTC_ERROR_UNKNOWN". */
AOTC_API const char *aotc_status_name(aotc_status_t status);

/* Returns a static name for a dtype ("float32", "int64", ...), or "unknown".
 * Takes an int32_t so that the dtype fields below can be passed directly. */
AOTC_API const char *aotc_dtype_name(int32_t dtype);

/* Returns the size of one element in bytes, or 0 for an unknown dtype. */
AOTC_API size_t aotc_dtype_size(int32_t dtype);

/*===------------------------------------------------------------------------===
 * Container: one loaded model on one device with N instances
 *===------------------------------------------------------------------------===*/

/* A loaded model: one OpenCL context and program on one device, the
 * constants uploaded once, and num_instances model instances (each with its
 * own kernels, in-order queue and memory arena), so that up to num_instances
 * runs proceed concurrently. Opaque. */
typedef struct aotc_container_t aotc_container_t;

typedef struct aotc_container_options_t {
  /* sizeof(aotc_container_options_t), set by aotc_container_options_init. */
  uint32_t struct_size;
  /* Which OpenCL device to use:
   *   NULL        the environment variable AOTC_DEVICE if set, else as "";
   *   ""          the first GPU of any platform, else the first device;
   *   "cpu" "gpu" the first CPU / GPU device;
   *   "cpu:N" "gpu:N"  the N-th (from 0) CPU / GPU device over all platforms;
   *   other       the first device whose "platform name / device name"
   *               contains the string, compared case-insensitively.
   * Default: NULL. */
  const char *device;
  /* Number of model instances (concurrent runs), at least 1. Default: 1. */
  uint32_t num_instances;
  /* Directory of the OpenCL program-binary cache. NULL or "": $AOTC_CACHE_DIR,
   * else $XDG_CACHE_HOME/aotc, else $HOME/.cache/aotc. A directory that cannot
   * be created or written only disables caching. Default: NULL. */
  const char *cache_dir;
} aotc_container_options_t;

/* Fills *out_options with the defaults above. Does nothing if null. */
AOTC_API void
aotc_container_options_init(aotc_container_options_t *out_options);

/* Loads the model of this .so onto a device: selects the device, uploads the
 * constants, builds the OpenCL program (or loads it from the binary cache)
 * and creates every kernel of every instance. Nothing is compiled later.
 *
 * Then, on the calling thread and before the call returns, each instance
 * runs the model once, at the smallest sizes its symbols
 * allow (1 where their range has it) on zero inputs (a size read from an
 * input's values gets that size), and discards the result: what the device
 * does on a kernel's first launch and a buffer's first use (PoCL readies
 * each kernel's work-group function; the arena's and the constants' pages
 * are touched) happens here rather than in the host's first run
 * (MobileNetV2 on PoCL: a first run of 1.2x the steady one instead of 2-3x).
 * Its errors are not reported and leave the calling thread's
 * aotc_last_error as it was (a model that refuses zeros starts cold); it
 * is skipped for a weightless model and for one whose outputs are sized by
 * counts it computes, and when the environment sets AOTC_WARM_UP=0. A
 * first run at larger sizes still grows the arena then.
 *
 * On PoCL's CPU device that takes one process-wide setting: the first
 * container created on it sets POCL_WORK_GROUP_SPECIALIZATION=0 in the
 * process environment unless the host has set the variable, so that PoCL
 * runs the work-group functions it builds with the program instead of
 * compiling a specialized one on each kernel's first launch (BERT-base:
 * 40 s of first run after a cold load; its steady runs are about 10% slower
 * with the generic functions, docs/PERFORMANCE.md). A host that keeps
 * specialization sets the variable to 1 itself. The setting is made before
 * the program is built and stays when the call then fails. Before its
 * first OpenCL call, whatever the device, the first container created in
 * the process also sets POCL_AFFINITY=1 (PoCL then pins its CPU worker
 * thread i to CPU i; other OpenCL implementations ignore it), unless the
 * host set the variable or the calling thread may not run on every online
 * CPU (PoCL would abort the process where a pin fails). It has no effect
 * where the host initialized OpenCL first, and it never makes the call
 * fail; it stays when the call then fails.
 *
 * Threads: any thread may call it, also concurrently (each container is
 * independent; each variable is set once, under a once-flag). Because
 * setenv is not thread-safe against getenv, a host whose other threads read
 * the environment while it creates its first container sets both
 * variables (POCL_WORK_GROUP_SPECIALIZATION, POCL_AFFINITY) itself before
 * starting them; the runtime then leaves them as they are.
 *
 * Ownership: options (may be null: the defaults) and its strings are read
 * during the call only. On success *out_container owns everything and must
 * be released with aotc_container_delete; on failure it is set to null and
 * nothing is left allocated. Errors: AOTC_ERROR_NOT_FOUND (no matching
 * device; the message lists the available ones), AOTC_ERROR_DEVICE_ERROR
 * (the build log is in the message), AOTC_ERROR_OUT_OF_MEMORY,
 * AOTC_ERROR_INVALID_ARGUMENT. */
AOTC_API aotc_status_t aotc_container_create(
    const aotc_container_options_t *options, aotc_container_t **out_container);

/* As aotc_container_create, for a model compiled with a weights side file
 * (aotc compile --weights-file, and every package) whose side file is not
 * beside the .so (a .so loaded from memory, a package): the weights file
 * (its 4096-byte "AOTCWGT1" header, then the payload) is the weights_size
 * bytes at byte weights_offset of the open, readable file weights_fd; the
 * offset need not be page aligned. The runtime maps that range read-only (a
 * CPU device then reads the weights where they are mapped, with no copy)
 * and checks the header's id and size against the .so as for a side file.
 *
 * Ownership: the runtime keeps the mapping, not the descriptor: the caller
 * keeps weights_fd and may close it once the call returns. Threads: as
 * aotc_container_create; the descriptor is read with pread and mmap only
 * (its file offset is not used), so other threads may use it meanwhile.
 * Errors: as aotc_container_create, and AOTC_ERROR_INVALID_ARGUMENT for a
 * negative descriptor, a range past the end of the file, a header that does
 * not belong to this .so, or a model whose weights are inside the .so (or
 * that has none). (A function rather than new fields of
 * aotc_container_options_t: aotc_container_options_init writes the whole
 * struct, so a larger struct would overrun the options of hosts built
 * before it.) */
AOTC_API aotc_status_t aotc_container_create_with_weights(
    const aotc_container_options_t *options, int32_t weights_fd,
    uint64_t weights_offset, uint64_t weights_size,
    aotc_container_t **out_container);

/* As aotc_container_create_with_weights (weights_fd -1: the weights where
 * aotc_container_create finds them, and weights_offset and weights_size
 * unused), in the host's OpenCL context cl_context (a cl_context) instead
 * of one of its own. Containers of one context share what the OpenCL
 * implementation keeps per context: PoCL loads its kernel library (10 MB
 * of LLVM bitcode) into every context it builds a program in, 0.4-0.7 s of
 * each model's first load on a cold PoCL cache, once a context instead.
 * The host's buffers of the context can be passed to
 * aotc_container_run_device. The device is selected as options->device
 * says and must be one of the context's devices.
 *
 * Ownership: the container holds a reference to the context
 * (clRetainContext) until it is deleted; the host may release its own.
 * Threads: as aotc_container_create. Errors: as
 * aotc_container_create_with_weights, and AOTC_ERROR_INVALID_ARGUMENT for a
 * null cl_context or one without the selected device. */
AOTC_API aotc_status_t aotc_container_create_in_context(
    const aotc_container_options_t *options, void *cl_context,
    int32_t weights_fd, uint64_t weights_offset, uint64_t weights_size,
    aotc_container_t **out_container);

/* Waits for the container's device work and releases it. Null is ignored.
 * Must not be called while another thread uses the container. */
AOTC_API void aotc_container_delete(aotc_container_t *container);

/* Where this container's OpenCL program came from: sets *out_from_cache to
 * AOTC_PROGRAM_FROM_SOURCE (0: OpenCL C compiled at this load),
 * AOTC_PROGRAM_FROM_CACHE (1: the on-disk binary cache) or
 * AOTC_PROGRAM_EMBEDDED (2: a binary built for this device at compile time,
 * aotc compile --prebuild or --program-binary). Non-zero: no OpenCL C
 * compilation happened. (Hosts built when it returned only 0 and 1 and
 * tested for non-zero read the new value as they read 1.)
 *
 * Ownership: *out_from_cache is the caller's int32_t. Threads: any thread,
 * concurrently with runs and with other calls on the container (the value
 * is fixed when the container is created). Errors:
 * AOTC_ERROR_INVALID_ARGUMENT for a null container or out_from_cache, which
 * is then not written. */
enum {
  AOTC_PROGRAM_FROM_SOURCE = 0,
  AOTC_PROGRAM_FROM_CACHE = 1,
  AOTC_PROGRAM_EMBEDDED = 2,
};
AOTC_API aotc_status_t aotc_container_program_source(
    const aotc_container_t *container, int32_t *out_from_cache);

/*===------------------------------------------------------------------------===
 * Running with host memory
 *===------------------------------------------------------------------------===*/

/* A tensor in host memory, dense and row-major.
 * As an input: every field is set by the caller; nbytes must be at least the
 * tensor's size (data may be null when the size is 0).
 * As an output: the caller sets data and nbytes (the capacity in bytes); the
 * runtime writes dtype, rank, shape and the data. */
typedef struct aotc_tensor_t {
  void *data;
  uint64_t nbytes;
  int32_t dtype; /* aotc_dtype_t */
  int32_t rank;
  int64_t shape[AOTC_MAX_RANK];
} aotc_tensor_t;

/* Runs the model once. `inputs` are the model's inputs in order (num_inputs
 * of them), or, when the ONNX graph lists defaults (initializers) among its
 * inputs, one tensor per graph input in the graph's order
 * (aotc_container_graph_input_info): a default's tensor replaces it for this
 * run. Validates the inputs against the model (count, dtype,
 * rank, static dims, symbolic dims equal wherever the same symbol appears and
 * inside the symbol's range), binds the symbolic sizes (some models also
 * read sizes from the values of an int32/int64 input: a Reshape shape given
 * at run time; those values are read from the input's data before the run),
 * takes a free instance (waiting if all are busy), copies the inputs to the
 * device, enqueues every kernel and copies the outputs back. The caller's
 * buffers are not used after the call returns. On PoCL's CPU device the
 * copies are skipped where every input and output starts on a multiple of
 * 256 bytes (HostTensor's storage does), none overlaps another and no
 * output is sized by a count: the kernels then read the inputs and write
 * the outputs where they are (AOTC_ZERO_COPY=0 in the environment keeps
 * the copies). An output over its own input is always copied, so an
 * in-place call stays correct. Used in place, an output is written while
 * the kernels run: after an error it may hold part of a result, and the
 * caller's inputs and outputs must not be written (inputs) or read or
 * written (outputs) by other threads during the call, as with copies.
 * Errors: AOTC_ERROR_INVALID_ARGUMENT with a message naming the input, or
 * naming the node whose rule a size read from values breaks (two -1s in a
 * Reshape shape, a negative dim);
 * AOTC_ERROR_BUFFER_TOO_SMALL if an output's capacity is too small (nothing
 * ran; every output's dtype, rank and shape are filled, so a call with
 * data = NULL, nbytes = 0 queries the sizes); AOTC_ERROR_OUT_OF_MEMORY;
 * AOTC_ERROR_DEVICE_ERROR. Output data is unspecified after an error.
 * Outputs sized by data: a model with NonZero or Compress computes a count
 * while it runs, and an output sized by it has -1 dims until then
 * (aotc_container_output_shapes). The run waits for the device once per
 * such count (a sync point), reads it, and sizes those outputs then: if
 * one's capacity is too small the run stops there with
 * AOTC_ERROR_BUFFER_TOO_SMALL and that output's shape filled (the kernels
 * before the sync ran; nothing was copied out), so the caller can grow the
 * buffer and run again. An upper bound that always fits is the element
 * count the op counts over (NonZero: rank x the input's element count).
 * Threads: any thread, and several at once on one container: each call
 * takes its own instance (waiting while all are busy), and a sync point
 * waits only for that instance's queue, never for runs on other threads.
 * Ownership: the container and the caller's buffers stay the caller's;
 * the output buffers are written only before the call returns. */
AOTC_API aotc_status_t aotc_container_run(aotc_container_t *container,
                                          const aotc_tensor_t *inputs,
                                          size_t num_inputs,
                                          aotc_tensor_t *outputs,
                                          size_t num_outputs);

/* Validates the inputs like aotc_container_run and writes each output's
 * dtype, rank and shape (-1 for a dim sized by a count the model computes
 * while it runs, see aotc_container_run). The inputs' data is not read and
 * may be null,
 * except for an input whose values give sizes (see aotc_container_run):
 * its data is read, and null data or a buffer shorter than its shape is
 * AOTC_ERROR_INVALID_ARGUMENT naming the input. data and nbytes of the
 * outputs are left alone. Runs nothing. Threads and other errors as
 * aotc_container_run; the caller keeps every buffer. */
AOTC_API aotc_status_t aotc_container_output_shapes(
    const aotc_container_t *container, const aotc_tensor_t *inputs,
    size_t num_inputs, aotc_tensor_t *outputs, size_t num_outputs);

/*===------------------------------------------------------------------------===
 * Running with device memory
 *===------------------------------------------------------------------------===*/

/* The container's OpenCL context and device (cl_context, cl_device_id), for a
 * host that keeps its tensors on the device: it allocates buffers in this
 * context (clCreateBuffer) and passes them to aotc_container_run_device.
 * The handles live as long as the container; do not release them. Any
 * thread. Errors: AOTC_ERROR_INVALID_ARGUMENT for a null pointer. */
AOTC_API aotc_status_t aotc_container_opencl_handles(
    const aotc_container_t *container, void **out_context, void **out_device);

/* A tensor in an OpenCL buffer the caller owns, dense and row-major. */
typedef struct aotc_device_tensor_t {
  void *buffer;    /* a cl_mem of the container's context */
  uint64_t offset; /* bytes from the buffer's start, a multiple of 256 */
  uint64_t nbytes; /* bytes usable from offset */
  int32_t dtype;   /* aotc_dtype_t */
  int32_t rank;
  int64_t shape[AOTC_MAX_RANK];
} aotc_device_tensor_t;

/* Runs the model once on tensors that stay on the device: kernels read the
 * caller's input buffers and write the caller's output buffers directly (no
 * host copies). Inputs: the model's required inputs in order (defaults
 * cannot be replaced in a device run), validated like aotc_container_run;
 * outputs: the runtime writes dtype, rank and shape, and the buffer ranges
 * must hold them (AOTC_ERROR_BUFFER_TOO_SMALL otherwise, after filling every
 * shape). Output ranges must not overlap each other or an input. Returns
 * after the device work has finished and the model's run-time checks were
 * read, so the buffers may be used by any queue afterwards; the caller must
 * not write the inputs or touch the outputs while the call runs. Same
 * threads and errors as aotc_container_run; a buffer of another context, a
 * range past the buffer's end or a misaligned offset is
 * AOTC_ERROR_INVALID_ARGUMENT, and an input whose values give sizes (see
 * aotc_container_run) is AOTC_ERROR_UNSUPPORTED: sizes are read from host
 * memory, so run such a model with aotc_container_run, nothing ran. So is a
 * model that sizes outputs by counts it computes (NonZero, Compress): its
 * run must read them back mid-run, which aotc_container_run does.
 * aotc_container_run_device_async enqueues
 * the same run behind the caller's own command queue without waiting. */
AOTC_API aotc_status_t aotc_container_run_device(
    aotc_container_t *container, const aotc_device_tensor_t *inputs,
    size_t num_inputs, aotc_device_tensor_t *outputs, size_t num_outputs);

/* A device run in flight, from aotc_container_run_device_async until
 * aotc_run_wait. */
typedef struct aotc_run_t aotc_run_t;

/* Enqueues a device run (inputs and outputs as for aotc_container_run_device)
 * in order with the caller's command queue `queue` (a cl_command_queue of the
 * container's context and device, in order or not) and returns without
 * waiting for the device: the run starts after every command enqueued on
 * `queue` before the call, and every command enqueued on `queue` after the
 * call starts after the run's device work has finished (a marker and a
 * barrier on `queue`). So a host writes the inputs, runs and reads the
 * outputs on its queue with no host synchronization. The run's kernels are
 * enqueued on one of the container's instances
 * (aotc_container_options_t::num_instances), held only while the call
 * enqueues: runs on one instance execute in order, so many runs may be in
 * flight from one thread. A profiling container refuses this call
 * (AOTC_ERROR_INVALID_ARGUMENT). On
 * success *out_run is the run, owned by the runtime until the caller passes
 * it to aotc_run_wait, exactly once, before aotc_container_delete. The shapes
 * of the outputs are written before the call returns. The run reads the
 * constant set active at the call until it finishes. Ownership: the caller
 * keeps its buffers and queue (neither is retained); until the run has
 * finished (aotc_run_wait, or commands on `queue` enqueued after the call)
 * the caller must not write the inputs or touch the outputs from anywhere
 * else, nor release them. Threads: as aotc_container_run_device; runs may be
 * in flight on several threads at once. Errors: as
 * aotc_container_run_device, plus a null out_run and a null or foreign
 * queue (AOTC_ERROR_INVALID_ARGUMENT); on an error nothing stays in flight
 * and *out_run is null (when out_run is not null). */
AOTC_API aotc_status_t aotc_container_run_device_async(
    aotc_container_t *container, const aotc_device_tensor_t *inputs,
    size_t num_inputs, aotc_device_tensor_t *outputs, size_t num_outputs,
    void *queue, aotc_run_t **out_run);

/* Waits until `run`'s device work has finished and frees `run`; returns the
 * run's result: the model's run-time checks (an index out of range) are
 * reported here, as aotc_container_run would report them, and a device
 * failure as AOTC_ERROR_DEVICE_ERROR (or AOTC_ERROR_OUT_OF_MEMORY). `run` is
 * freed whatever the result; null is AOTC_ERROR_INVALID_ARGUMENT. The
 * outputs may be read after the call from any queue, or before it from the
 * queue the run was ordered with. Any thread, once per run, while the
 * container lives. */
AOTC_API aotc_status_t aotc_run_wait(aotc_run_t *run);

/*===------------------------------------------------------------------------===
 * Constants: updating, swapping and reading back the weights
 *===------------------------------------------------------------------------===*/

/* A container holds an active constant set, which every new run reads, and
 * optionally an inactive one, which updates can prepare while runs go on
 * and aotc_container_swap_constant_buffer makes active. A run reads the set
 * that was active when it started, from start to end: no call below changes
 * what a run in flight reads, and memory a run reads is released only after
 * its device work has finished.
 *
 * Updatable constants are the model's ONNX initializers (name: the
 * initializer's name), except those whose values the compiler compiled into
 * the code (small integer shape data, Resize scales, float Range bounds,
 * a Clip's float min and max;
 * aotc_container_constant_updatable says which and why). A weight the
 * compiler packed for its kernels is updatable: the update also rewrites
 * the packed copy. Constants computed at compile time (folded, packed
 * copies) cannot be given themselves. Nor can the constants the model's
 * folding program computes from its weights (a Conv's weights and bias with
 * a BatchNormalization folded in, a weight cast or scaled by weights, and
 * their packed copies): the runtime runs that program on the device when
 * the container is created, and an update runs it again on the set it
 * changed before the set is published, so every set is consistent. A
 * weightless .so (aotc compile --weightless) refuses runs until every
 * updatable constant was given; its folding program runs with the update
 * that completes them.
 *
 * Threads: the calls of this section may be made from any thread while runs
 * are in flight on other threads; they are serialized among themselves.
 * Failure: an unknown name, a name given twice, a wrong dtype, rank or shape,
 * too few bytes, a frozen or folded constant, or (validate_full) a missing
 * updatable constant is AOTC_ERROR_INVALID_ARGUMENT (unknown name:
 * AOTC_ERROR_NOT_FOUND) and changes nothing; so does a device allocation
 * failure. */
typedef struct aotc_constant_entry_t {
  const char *name;
  aotc_tensor_t tensor;
} aotc_constant_entry_t;

/* Copies the given constants into a new version of the active set
 * (use_inactive == 0: the next run reads them; runs in flight keep the old
 * values) or of the inactive set (use_inactive != 0: created from the
 * active set's values on first use; runs see it only after a swap).
 * Constants not given keep their values. The caller's memory is not used
 * after the call. validate_full != 0: every updatable constant must be
 * given. Device memory: each given constant (and its packed copy) gets its
 * own buffer; the compiled-in copy stays until the container is deleted. */
AOTC_API aotc_status_t aotc_container_update_constants(
    aotc_container_t *container, const aotc_constant_entry_t *entries,
    size_t num_entries, int32_t use_inactive, int32_t validate_full);

/* As aotc_container_update_constants, without the copy: the runtime wraps
 * the caller's memory (CL_MEM_USE_HOST_PTR; a packed copy is still made for
 * a weight the kernels read packed). The caller keeps each tensor's
 * memory alive and unchanged while the set that holds it can be read: until
 * another update replaces the constant in that set and every run that read
 * it has returned, or until the set is freed, or the container deleted.
 * Zero copy on CPU devices (PoCL reads the caller's memory); a GPU driver
 * may keep its own copy, and packed copies of a weight (aotc inspect lists
 * them) are always the runtime's: after editing the memory in place, call
 * aotc_container_run_const_fold to publish the edits (or update again). */
AOTC_API aotc_status_t aotc_container_update_user_managed_constants(
    aotc_container_t *container, const aotc_constant_entry_t *entries,
    size_t num_entries, int32_t use_inactive, int32_t validate_full);

/* Publishes the current values of the set's user-managed constants and
 * recomputes what derives from them: a new version of the active or
 * inactive set in which every constant given by
 * aotc_container_update_user_managed_constants is read again from the
 * caller's memory (its packed copies repacked from it; on a device that
 * copies host memory, copied again) and the folding program has run again
 * into new buffers (runs in flight keep the old ones); published when the
 * device has finished. An update already did this for what it changed, so
 * the call is needed only after the caller changed the memory of
 * user-managed constants in place. With neither user-managed constants nor
 * a folding program it only checks that the set exists. Threads: as the
 * updates (serialized with them; runs may be in flight). Errors:
 * AOTC_ERROR_NOT_FOUND for use_inactive without an inactive set; a device
 * failure changes nothing. */
AOTC_API aotc_status_t aotc_container_run_const_fold(
    aotc_container_t *container, int32_t use_inactive);

/* Makes the inactive set active and the active one inactive, atomically for
 * new runs (runs in flight finish with the set they started with).
 * Ownership: nothing changes hands; both sets stay the container's.
 * Threads: any thread, while runs are in flight; serialized with the
 * other calls of this section. Failure: AOTC_ERROR_NOT_FOUND if there is
 * no inactive set (nothing changes); AOTC_ERROR_INVALID_ARGUMENT for a
 * null container. */
AOTC_API aotc_status_t
aotc_container_swap_constant_buffer(aotc_container_t *container);

/* Drops the inactive set; its device memory is released once no run reads
 * it. A later update with use_inactive creates it again from the active
 * set. No inactive set: nothing to do, AOTC_OK. Ownership: user-managed
 * memory the set held may be freed by the caller once this returns and
 * every run that read it (before a swap made it inactive) has returned.
 * Threads: any thread, while runs are in flight; serialized with the other
 * calls of this section. Failure: AOTC_ERROR_INVALID_ARGUMENT for a null
 * container. */
AOTC_API aotc_status_t
aotc_container_free_inactive_constant_buffer(aotc_container_t *container);

/* Reads back the updatable constants of the active or inactive set, in the
 * model's order. *out_count receives their number. For each of the first
 * min(capacity, count) entries, writes name (the initializer's name, valid
 * as long as the container), tensor.dtype, rank and shape; and when
 * tensor.data is not null, copies the values into it (tensor.nbytes must
 * hold them, else AOTC_ERROR_BUFFER_TOO_SMALL after filling the shapes).
 * So a call with out = NULL, capacity = 0 counts, one with data = NULL
 * describes, and a third reads. Ownership: the caller owns `out` and the
 * data buffers; names belong to the container. Threads: any thread, while
 * runs are in flight (it reads a set that no call changes in place);
 * serialized with the other calls of this section. Failure:
 * AOTC_ERROR_NOT_FOUND for use_inactive without an inactive set;
 * AOTC_ERROR_INVALID_ARGUMENT for a null container, a null out_count, or
 * out = NULL with capacity > 0; a device read failure; nothing changes. */
AOTC_API aotc_status_t aotc_container_extract_constants(
    const aotc_container_t *container, int32_t use_inactive,
    aotc_constant_entry_t *out, size_t capacity, size_t *out_count);

/* Whether constant `index` (aotc_container_constant_info order) can be
 * updated: *out_updatable is 1 or 0, and *out_reason (null when updatable;
 * out_reason itself may be null) says why not: folded, the packed copy of
 * an initializer, or what the compiler used its value for. The string lives
 * as long as the container. Any thread. Errors: AOTC_ERROR_INVALID_ARGUMENT
 * for a null container or out_updatable, or an index out of range. */
AOTC_API aotc_status_t aotc_container_constant_updatable(
    const aotc_container_t *container, size_t index, int32_t *out_updatable,
    const char **out_reason);

/*===------------------------------------------------------------------------===
 * Introspection
 *===------------------------------------------------------------------------===*/

/* An input or output of the model. */
typedef struct aotc_tensor_info_t {
  const char *name;
  int32_t dtype; /* aotc_dtype_t */
  int32_t rank;
  /* The static size of each dim, or -1 for a symbolic one. */
  int64_t dims[AOTC_MAX_RANK];
  /* The symbol index of a dim that is exactly one symbol, else -1. */
  int32_t dim_symbols[AOTC_MAX_RANK];
  /* Each dim as text: "4", "batch", "batch*2+1". */
  const char *dim_texts[AOTC_MAX_RANK];
} aotc_tensor_info_t;

/* A constant (weight) of the model. */
typedef struct aotc_constant_info_t {
  const char *name;      /* aotc's name */
  const char *onnx_name; /* the ONNX initializer's name */
  int32_t dtype;         /* aotc_dtype_t */
  int32_t rank;
  const int64_t *shape; /* rank entries, lives as long as the container */
  uint64_t nbytes;
  int32_t folded; /* 1 if computed from other constants by constant folding */
} aotc_constant_info_t;

/* How an input that the ONNX graph lists is bound. An ONNX graph may list
 * initializers among its inputs: defaults a run may replace. */
typedef enum aotc_graph_input_kind_t {
  AOTC_GRAPH_INPUT_REQUIRED = 1, /* index: the input number */
  /* A default a run may replace; index: its constant number (dtype and shape
   * from aotc_container_constant_info). */
  AOTC_GRAPH_INPUT_DEFAULT = 2,
  /* A default compiled into the code because it decides sizes: a run may
   * pass it, but only with the default's value; index: its constant. */
  AOTC_GRAPH_INPUT_FIXED = 3,
} aotc_graph_input_kind_t;

typedef struct aotc_graph_input_info_t {
  const char *name;
  int32_t kind; /* aotc_graph_input_kind_t */
  int32_t index;
} aotc_graph_input_info_t;

/* A symbolic size and its inclusive range. */
typedef struct aotc_symbol_info_t {
  const char *name;
  int64_t min;
  int64_t max;
} aotc_symbol_info_t;

AOTC_API aotc_status_t aotc_container_model_name(
    const aotc_container_t *container, const char **out_name);
/* "platform name / device name" of the container's device. */
AOTC_API aotc_status_t aotc_container_device_name(
    const aotc_container_t *container, const char **out_name);
AOTC_API aotc_status_t aotc_container_num_instances(
    const aotc_container_t *container, size_t *out_count);

AOTC_API aotc_status_t
aotc_container_num_inputs(const aotc_container_t *container, size_t *out_count);
AOTC_API aotc_status_t aotc_container_num_outputs(
    const aotc_container_t *container, size_t *out_count);
AOTC_API aotc_status_t aotc_container_num_constants(
    const aotc_container_t *container, size_t *out_count);
AOTC_API aotc_status_t aotc_container_num_symbols(
    const aotc_container_t *container, size_t *out_count);
/* num_kernels counts the folding program's kernels (named fold_*, after
 * the model's) too. */
AOTC_API aotc_status_t aotc_container_num_kernels(
    const aotc_container_t *container, size_t *out_count);
AOTC_API aotc_status_t aotc_container_num_metadata(
    const aotc_container_t *container, size_t *out_count);

/* The inputs as the ONNX graph lists them, defaults included (equal to the
 * inputs when the graph lists no initializer as an input). */
AOTC_API aotc_status_t aotc_container_num_graph_inputs(
    const aotc_container_t *container, size_t *out_count);
AOTC_API aotc_status_t
aotc_container_graph_input_info(const aotc_container_t *container, size_t index,
                                aotc_graph_input_info_t *out_info);

/* The index-th input / output; AOTC_ERROR_INVALID_ARGUMENT if out of range. */
AOTC_API aotc_status_t
aotc_container_input_info(const aotc_container_t *container, size_t index,
                          aotc_tensor_info_t *out_info);
AOTC_API aotc_status_t
aotc_container_output_info(const aotc_container_t *container, size_t index,
                           aotc_tensor_info_t *out_info);
AOTC_API aotc_status_t
aotc_container_constant_info(const aotc_container_t *container, size_t index,
                             aotc_constant_info_t *out_info);
AOTC_API aotc_status_t
aotc_container_symbol_info(const aotc_container_t *container, size_t index,
                           aotc_symbol_info_t *out_info);
/* The OpenCL kernel name of the index-th kernel. */
AOTC_API aotc_status_t aotc_container_kernel_name(
    const aotc_container_t *container, size_t index, const char **out_name);

/* The index-th metadata pair. */
AOTC_API aotc_status_t
aotc_container_metadata(const aotc_container_t *container, size_t index,
                        const char **out_key, const char **out_value);
/* The value of a metadata key; AOTC_ERROR_NOT_FOUND if absent. */
AOTC_API aotc_status_t aotc_container_metadata_lookup(
    const aotc_container_t *container, const char *key, const char **out_value);

/* The arena bytes one run needs for the given symbol values (num_symbols
 * values in symbol order, each inside its range; the caller's array, only
 * read). A symbol the model computes from the others (a size that branches
 * on values given at run time) is computed here: its entry is not read.
 * Fails with AOTC_ERROR_INVALID_ARGUMENT, *out_bytes untouched, when a
 * value is outside its range, breaks a rule of the model (the message
 * names the node) or makes a computed size overflow. Threads: as any
 * introspection call (see the top of this header). */
AOTC_API aotc_status_t aotc_container_arena_bytes(
    const aotc_container_t *container, const int64_t *symbol_values,
    size_t num_symbols, uint64_t *out_bytes);

/* Prepares every instance for runs with the given symbol values (num_symbols
 * values in symbol order, as aotc_container_arena_bytes takes them: a
 * host's largest batch; the caller's array, only read): sizes each
 * instance's arena for them and writes it once, then runs the model once on
 * zero inputs at those sizes. Runs at those sizes and smaller then allocate
 * no arena, and the first touch of its pages (a page fault each, about
 * 1.5 us per 4 KB on a VM) and the kernels' first launches at those sizes
 * happen here, at load, not in the host's first run. An arena only grows:
 * a later run that needs more grows it then. The run on zeros is skipped
 * where aotc_container_create's warm-up would be (a weightless model before
 * its weights, outputs sized by counts), and its own failures (zeros a
 * model refuses) are not reported: they are left to the host's runs.
 * Threads: any thread; it waits for the runs in flight and holds new ones
 * until it is done (as aotc_container_set_profiling). Fails with
 * AOTC_ERROR_INVALID_ARGUMENT as aotc_container_arena_bytes does (nothing
 * changed), AOTC_ERROR_OUT_OF_MEMORY or AOTC_ERROR_DEVICE_ERROR where the
 * device cannot allocate or write an arena: instances before the failing
 * one keep their grown arena, the failing one has none until its next run
 * allocates it, and no run on zeros is made. */
AOTC_API aotc_status_t aotc_container_reserve(aotc_container_t *container,
                                              const int64_t *symbol_values,
                                              size_t num_symbols);

/*===------------------------------------------------------------------------===
 * Profiling
 *===------------------------------------------------------------------------===*/

/* Turns profiling on (enable != 0) or off; a container starts with it off.
 * While on, every kernel launch and host copy of every run is timed with
 * OpenCL profiling events (the instances' queues are recreated with
 * CL_QUEUE_PROFILING_ENABLE) for aotc_container_last_profile; it costs a
 * little host time per launch. Safe to call from any thread: it waits for
 * the runs in flight to finish and holds new runs until it is done. On
 * failure (AOTC_ERROR_DEVICE_ERROR) profiling stays as it was. */
AOTC_API aotc_status_t aotc_container_set_profiling(aotc_container_t *container,
                                                    int32_t enable);

/* What a profile record times. */
typedef enum aotc_profile_kind_t {
  AOTC_PROFILE_RUN = 0,      /* the whole aotc_container_run call (host) */
  AOTC_PROFILE_ENQUEUE = 1,  /* the wrapper enqueueing the kernels (host) */
  AOTC_PROFILE_KERNEL = 2,   /* a kernel on the device; index: kernel number */
  AOTC_PROFILE_COPY_IN = 3,  /* a host-to-device copy; index: input number,
                                or -1 for the error record, or -2 - c for
                                the caller's value of default (constant) c */
  AOTC_PROFILE_COPY_OUT = 4, /* a device-to-host copy; index: output number,
                                or -1 for the error record */
} aotc_profile_kind_t;

typedef struct aotc_profile_record_t {
  int32_t kind;  /* aotc_profile_kind_t */
  int32_t index; /* see aotc_profile_kind_t */
  /* Nanoseconds from the start of the run, on the host's monotonic clock;
   * device times are mapped onto it at the first command of the run, so
   * device records are exact relative to each other and aligned with the
   * host records to within one enqueue call. */
  uint64_t start_ns;
  uint64_t end_ns;
  /* Kernels: estimated floating-point operations of this launch (every
   * floating-point operator the kernel executes) and bytes of the buffers it
   * reads and writes (each once); copies: 0 and the bytes copied. */
  double flops;
  double bytes;
} aotc_profile_record_t;

/* Copies the records of the container's most recent successful run with
 * profiling on (of any instance) to out, in the order the commands were issued: first
 * AOTC_PROFILE_RUN, then AOTC_PROFILE_ENQUEUE, then the copies and kernels.
 * *out_count is set to the number of records the run has (0 before the
 * first run); at most `capacity` are written (out may be null when capacity
 * is 0). Safe to call while other threads run the container. Errors:
 * AOTC_ERROR_INVALID_ARGUMENT if profiling is off. */
AOTC_API aotc_status_t aotc_container_last_profile(
    const aotc_container_t *container, aotc_profile_record_t *out,
    size_t capacity, size_t *out_count);

/* What kernel `index` computes, for people: its ONNX ops, producers first,
 * and its output, "Conv+Relu -> f32[batch,64,56,56]"; "" if the .so does
 * not say. The string lives as long as the container. */
AOTC_API aotc_status_t aotc_container_kernel_summary(
    const aotc_container_t *container, size_t index, const char **out_summary);

/*===------------------------------------------------------------------------===
 * Function pointer types, for hosts that resolve the ABI with dlsym()
 *===------------------------------------------------------------------------===*/

typedef uint32_t (*aotc_abi_version_fn)(void);
typedef const char *(*aotc_last_error_fn)(void);
typedef const char *(*aotc_status_name_fn)(aotc_status_t);
typedef const char *(*aotc_dtype_name_fn)(int32_t);
typedef size_t (*aotc_dtype_size_fn)(int32_t);
typedef void (*aotc_container_options_init_fn)(aotc_container_options_t *);
typedef aotc_status_t (*aotc_container_create_fn)(
    const aotc_container_options_t *, aotc_container_t **);
typedef aotc_status_t (*aotc_container_create_with_weights_fn)(
    const aotc_container_options_t *, int32_t, uint64_t, uint64_t,
    aotc_container_t **);
typedef aotc_status_t (*aotc_container_create_in_context_fn)(
    const aotc_container_options_t *, void *, int32_t, uint64_t, uint64_t,
    aotc_container_t **);
typedef void (*aotc_container_delete_fn)(aotc_container_t *);
typedef aotc_status_t (*aotc_container_program_source_fn)(
    const aotc_container_t *, int32_t *);
typedef aotc_status_t (*aotc_container_run_fn)(aotc_container_t *,
                                               const aotc_tensor_t *, size_t,
                                               aotc_tensor_t *, size_t);
typedef aotc_status_t (*aotc_container_output_shapes_fn)(
    const aotc_container_t *, const aotc_tensor_t *, size_t, aotc_tensor_t *,
    size_t);
typedef aotc_status_t (*aotc_container_string_fn)(const aotc_container_t *,
                                                  const char **);
typedef aotc_container_string_fn aotc_container_model_name_fn;
typedef aotc_container_string_fn aotc_container_device_name_fn;
typedef aotc_status_t (*aotc_container_count_fn)(const aotc_container_t *,
                                                 size_t *);
typedef aotc_container_count_fn aotc_container_num_instances_fn;
typedef aotc_container_count_fn aotc_container_num_inputs_fn;
typedef aotc_container_count_fn aotc_container_num_outputs_fn;
typedef aotc_container_count_fn aotc_container_num_constants_fn;
typedef aotc_container_count_fn aotc_container_num_symbols_fn;
typedef aotc_container_count_fn aotc_container_num_kernels_fn;
typedef aotc_container_count_fn aotc_container_num_metadata_fn;
typedef aotc_container_count_fn aotc_container_num_graph_inputs_fn;
typedef aotc_status_t (*aotc_container_graph_input_info_fn)(
    const aotc_container_t *, size_t, aotc_graph_input_info_t *);
typedef aotc_status_t (*aotc_container_input_info_fn)(const aotc_container_t *,
                                                      size_t,
                                                      aotc_tensor_info_t *);
typedef aotc_container_input_info_fn aotc_container_output_info_fn;
typedef aotc_status_t (*aotc_container_constant_info_fn)(
    const aotc_container_t *, size_t, aotc_constant_info_t *);
typedef aotc_status_t (*aotc_container_symbol_info_fn)(const aotc_container_t *,
                                                       size_t,
                                                       aotc_symbol_info_t *);
typedef aotc_status_t (*aotc_container_kernel_name_fn)(const aotc_container_t *,
                                                       size_t, const char **);
typedef aotc_status_t (*aotc_container_metadata_fn)(const aotc_container_t *,
                                                    size_t, const char **,
                                                    const char **);
typedef aotc_status_t (*aotc_container_metadata_lookup_fn)(
    const aotc_container_t *, const char *, const char **);
typedef aotc_status_t (*aotc_container_arena_bytes_fn)(const aotc_container_t *,
                                                       const int64_t *, size_t,
                                                       uint64_t *);
typedef aotc_status_t (*aotc_container_reserve_fn)(aotc_container_t *,
                                                   const int64_t *, size_t);
typedef aotc_status_t (*aotc_container_set_profiling_fn)(aotc_container_t *,
                                                         int32_t);
typedef aotc_status_t (*aotc_container_last_profile_fn)(
    const aotc_container_t *, aotc_profile_record_t *, size_t, size_t *);
typedef aotc_container_kernel_name_fn aotc_container_kernel_summary_fn;
typedef aotc_status_t (*aotc_container_opencl_handles_fn)(
    const aotc_container_t *, void **, void **);
typedef aotc_status_t (*aotc_container_run_device_fn)(
    aotc_container_t *, const aotc_device_tensor_t *, size_t,
    aotc_device_tensor_t *, size_t);
typedef aotc_status_t (*aotc_container_run_device_async_fn)(
    aotc_container_t *, const aotc_device_tensor_t *, size_t,
    aotc_device_tensor_t *, size_t, void *, aotc_run_t **);
typedef aotc_status_t (*aotc_run_wait_fn)(aotc_run_t *);
typedef aotc_status_t (*aotc_container_update_constants_fn)(
    aotc_container_t *, const aotc_constant_entry_t *, size_t, int32_t,
    int32_t);
typedef aotc_container_update_constants_fn
    aotc_container_update_user_managed_constants_fn;
typedef aotc_status_t (*aotc_container_run_const_fold_fn)(aotc_container_t *,
                                                          int32_t);
typedef aotc_status_t (*aotc_container_swap_constant_buffer_fn)(
    aotc_container_t *);
typedef aotc_container_swap_constant_buffer_fn
    aotc_container_free_inactive_constant_buffer_fn;
typedef aotc_status_t (*aotc_container_extract_constants_fn)(
    const aotc_container_t *, int32_t, aotc_constant_entry_t *, size_t,
    size_t *);
typedef aotc_status_t (*aotc_container_constant_updatable_fn)(
    const aotc_container_t *, size_t, int32_t *, const char **);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_RUNTIME_H */

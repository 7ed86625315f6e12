/*
 * \file
 * The internal contract between a generated model wrapper and the aotc
 * runtime library that is linked beside it into every model .so.
 *
 * The compiler emits C++ that fills one AotcModelDesc and exports it as
 * aotc_model_desc(); the runtime (runtime/src) reads it to build kernels,
 * validate inputs, allocate the arena and call run(). Host applications never
 * see this header: they use aotc_runtime.h. The wrapper is compiled without
 * any system header, so this file uses only compiler builtin types when
 * AOTC_FREESTANDING is defined.
 */
#ifndef AOTC_MODEL_DESC_H
#define AOTC_MODEL_DESC_H

#ifdef AOTC_FREESTANDING
typedef __INT8_TYPE__ int8_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below changes layout. */
#define AOTC_MODEL_DESC_VERSION 16

/* Element types; values match aotc_dtype_t in aotc_runtime.h. */
enum {
  AOTC_DT_FLOAT32 = 1,
  AOTC_DT_UINT8 = 2,
  AOTC_DT_INT8 = 3,
  AOTC_DT_UINT16 = 4,
  AOTC_DT_INT16 = 5,
  AOTC_DT_INT32 = 6,
  AOTC_DT_INT64 = 7,
  AOTC_DT_BOOL = 9,
  AOTC_DT_FLOAT16 = 10, /* IEEE binary16 */
  AOTC_DT_FLOAT64 = 11,
  AOTC_DT_UINT32 = 12,
  AOTC_DT_BFLOAT16 = 16, /* a float's top 16 bits */
};

/* A dimension: static (symbol < 0, value holds the size) or exactly the
 * symbol with index `symbol` (input dims are always one of the two). `text`
 * is the printed expression ("3", "batch", "batch*16") for introspection. */
typedef struct AotcDimDesc {
  int64_t value;
  int32_t symbol;
  const char *text;
} AotcDimDesc;

typedef struct AotcTensorDesc {
  const char *name;
  int32_t dtype;
  int32_t rank;
  const AotcDimDesc *dims;
  /* -1: the shape is known before the run; k: known after sync k (an
   * output sized by a count the model computes). Inputs: -1. */
  int32_t after_sync;
} AotcTensorDesc;

/* How a symbol gets its value (AotcSymbolDesc.kind). */
enum {
  AOTC_SYMBOL_DIM = 0,   /* an input dim binds it */
  AOTC_SYMBOL_VALUE = 1, /* element value_index of input value_input (an
                            int32 or int64 input read as sizes: a Reshape
                            shape given at run time), bound from its data */
  AOTC_SYMBOL_DERIVED = 2, /* computed by derive_symbols() from the symbols
                              before it (a size that branches on values) */
  AOTC_SYMBOL_DATA = 3,    /* a count the model computes from data (NonZero's
                              number of nonzero elements): run() binds it at
                              a sync point (aotc_rt_sync) */
};

/* The value of a symbol not known yet: a data symbol before its sync, and
 * every derived symbol computed from one. derive_symbols() gives such a
 * symbol this value; check_symbols(), output_shapes() (which writes -1 for
 * such a dim) and kernel_costs() skip what reads one. */
#define AOTC_SYMBOL_UNKNOWN (-9223372036854775807LL - 1)

/* A symbolic size with its declared range (inclusive) and kind
 * (AOTC_SYMBOL_*); value_input and value_index say where a value symbol is
 * read from (-1 otherwise). */
typedef struct AotcSymbolDesc {
  const char *name;
  int64_t min;
  int64_t max;
  int32_t kind;
  int32_t value_input;
  int64_t value_index;
  /* -1: known before the run (the inputs bind it); k: known after sync k
   * (a data symbol, or a derived one computed from one). */
  int32_t after_sync;
} AotcSymbolDesc;

/* A constant (weight) inside the constants blob. `name` is the constant's
 * name in aotc, `onnx_name` the initializer's ONNX name (what users update
 * by). offset is in bytes from the start of the blob, 64-byte aligned.
 * folded: 0 for a weight, 1 for a value computed at compile time, or
 * AOTC_CONSTANT_COMPUTED for one the folding program (run_fold) writes: it
 * has no place in the blob (offset 0) and lives in a buffer of its own in
 * every constant set. */
#define AOTC_CONSTANT_COMPUTED 2
typedef struct AotcConstantDesc {
  const char *name;
  const char *onnx_name;
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
  uint64_t offset;
  uint64_t nbytes;
  int32_t folded;
} AotcConstantDesc;

/* A folded constant that permutes an ONNX initializer (a weight packed for
 * the kernels): when the initializer is updated, the runtime writes
 * target[t] = source[s] where target dim k is dim perm[k] of the source's
 * view. The view is the source itself, or with split > 0 the source with
 * dim split_dim split into [ceil(shape[split_dim] / split), split] (panels
 * of `split` columns; when split does not divide the dim, the source is
 * padded with zeros along it first), which has rank + 1 dims. */
typedef struct AotcFoldDesc {
  const char *source; /* the initializer's ONNX name */
  int32_t dtype;
  int32_t rank;
  const int64_t *shape; /* the initializer's shape */
  int32_t target;       /* the folded constant's index */
  const int32_t *perm;  /* one entry per dim of the view */
  int32_t split_dim;    /* with split > 0: the dim split into panels */
  int64_t split;        /* 0: no split */
} AotcFoldDesc;

/* An OpenCL program binary built at compile time (aotc compile --prebuild
 * or --program-binary) from this model's source and build options, for the
 * device whose key (the runtime's deviceKey(): platform, device and driver
 * names and versions, address bits and, for a CPU device, the host's
 * instruction set extensions) is device_key. The runtime loads it instead
 * of compiling when its device's key is the same text. Several entries
 * with one key are the parts of one program (built at once by several
 * builder processes: runtime/src/program_split.h); the runtime loads them
 * all and creates each kernel from the part that defines it, or, where one
 * is refused or a kernel is in none or two, none of them. Both are
 * read-only data of the .so, valid while it is loaded; the runtime only
 * reads them (from whichever thread creates a container). */
typedef struct AotcProgramBinaryDesc {
  const char *device_key;
  const uint8_t *binary;
  uint64_t binary_size;
} AotcProgramBinaryDesc;

/* How an input that the ONNX graph lists is bound (AotcInputSlotDesc). */
enum {
  AOTC_SLOT_REQUIRED = 1, /* a model input; index: input number */
  /* An initializer listed as an input: a default the caller may replace per
   * run; index: the constant kernels read it from. */
  AOTC_SLOT_DEFAULT = 2,
  /* A default compiled into the code (shape data): a value given for it must
   * equal `data`; index: its constant. */
  AOTC_SLOT_FIXED = 3,
};

typedef struct AotcInputSlotDesc {
  const char *name;
  int32_t kind; /* AOTC_SLOT_* */
  int32_t index;
  const uint8_t *data; /* AOTC_SLOT_FIXED: the compiled-in value */
  uint64_t nbytes;
} AotcInputSlotDesc;

/* A kernel argument, set by the wrapper for aotc_rt_launch(). A buffer
 * argument becomes two OpenCL kernel arguments: the cl_mem and a ulong byte
 * offset into it. */
enum {
  AOTC_ARG_INPUT = 1,    /* index: input number, value: byte offset */
  AOTC_ARG_OUTPUT = 2,   /* index: output number, value: byte offset */
  AOTC_ARG_CONSTANT = 3, /* index: constant number, value: its byte offset
                            in the constants buffer */
  AOTC_ARG_ARENA = 4,    /* value: byte offset into the instance's arena */
  AOTC_ARG_I64 = 5,      /* value: a long scalar */
  AOTC_ARG_I32 = 6,      /* value: an int scalar */
  AOTC_ARG_ERRORS = 7,   /* the instance's error record; value: 0 */
  /* The instance's counters of persistent kernels (aotc_rt_launch_persistent);
   * value: byte offset into them. */
  AOTC_ARG_COUNTERS = 8,
};

/* The error record a run's kernels write when they meet bad data (an index
 * out of range): the first error wins. The runtime zeroes it before a run of
 * a model with num_errors > 0 and reads it after. `code` is 0 (no error) or
 * one more than an index into AotcModelDesc::error_messages. */
typedef struct AotcErrorRecord {
  int32_t code;
  int32_t reserved;
  int64_t value;
  int64_t extent;
  int64_t reserved2;
} AotcErrorRecord;

typedef struct AotcArg {
  int32_t kind;
  int32_t index;
  int64_t value;
} AotcArg;

/* Opaque to the wrapper: one run on one model instance. */
typedef struct AotcRunCtx AotcRunCtx;

/* Enqueues kernel `kernel` with `nargs` arguments over an ND-range of `dims`
 * dimensions. `global` is the number of work-items needed per dimension (the
 * runtime rounds it up to a multiple of `local`; kernels guard against the
 * excess); `local` may be null to let the runtime choose. A zero-sized range
 * launches nothing. Returns 0 or an aotc_status_t error code (the runtime has
 * recorded the message). Implemented by the runtime library. */
int32_t aotc_rt_launch(AotcRunCtx *ctx, int32_t kernel, const AotcArg *args,
                       int32_t nargs, int32_t dims, const uint64_t *global,
                       const uint64_t *local);

/* Enqueues persistent kernel `kernel` (a kernel that runs `nparts` kernels
 * of the model in turn, each work-group claiming their work-items from
 * counters in the instance's counter buffer; the compiler's
 * persistent_kernels.h): `tiles[i]` is part i's number of work-items (0
 * where it does not run), each at most INT32_MAX. The runtime launches one
 * work-group of one work-item per compute unit of a CPU device (never more
 * than the largest part has work-items), and a single one on other
 * devices (where run() launches the parts instead: aotc_rt_persistent);
 * none where every part is empty. Called by run() only, on the thread
 * running it, with the ctx the runtime passed; `args` and `tiles` are the
 * caller's and read during the call only; the launch uses the ctx's
 * instance's counters, which no other run touches meanwhile. Returns 0 or
 * an aotc_status_t error code (the runtime has recorded the message, and
 * every later call of this run returns the same code; a part over
 * INT32_MAX work-items is AOTC_ERROR_UNSUPPORTED, nothing enqueued). */
int32_t aotc_rt_launch_persistent(AotcRunCtx *ctx, int32_t kernel,
                                  const AotcArg *args, int32_t nargs,
                                  int32_t nparts, const uint64_t *tiles);

/* 1 where the run's device runs persistent kernels (a CPU device, whose
 * work-groups see each other's stores as they happen, unless AOTC_PERSISTENT
 * was 0 when the container was created), 0 where run() is to launch their
 * parts one by one instead (each part is also a kernel of the .so). Called
 * by run() on the thread running it; reads the container's choice, made
 * once at creation, so any thread may call it concurrently; never fails (0
 * for a null or foreign ctx). Implemented by the runtime library. */
int32_t aotc_rt_persistent(AotcRunCtx *ctx);

/* A sync point of run(): waits for the kernels enqueued so far, reads the
 * int64 count kernel-written at byte `arena_offset` of the arena, and
 * binds it to data symbol `symbol` (checked against [0, bound]); then
 * computes the symbols derived from it, checks them, and sizes the outputs
 * known after sync `sync` (their buffers must hold them, else the run
 * stops with AOTC_ERROR_BUFFER_TOO_SMALL). run() reads the symbols it
 * binds from its `symbols` array afterwards. Returns 0 or an aotc_status_t
 * error code (the runtime has recorded the message). Implemented by the
 * runtime library. */
int32_t aotc_rt_sync(AotcRunCtx *ctx, int32_t sync, int32_t symbol,
                     uint64_t arena_offset, int64_t bound);

typedef struct AotcModelDesc {
  uint32_t desc_version; /* AOTC_MODEL_DESC_VERSION */
  const char *model_name;

  /* OpenCL C source of every kernel, and its build options. */
  const char *cl_source;
  uint64_t cl_source_size;
  const char *cl_build_options;
  int32_t num_kernels;
  const char *const *kernel_names;

  int32_t num_symbols;
  const AotcSymbolDesc *symbols;
  int32_t num_inputs;
  const AotcTensorDesc *inputs;
  int32_t num_outputs;
  const AotcTensorDesc *outputs;
  int32_t num_constants;
  const AotcConstantDesc *constants;
  const uint8_t *constants_blob; /* null: nothing stored (weightless) */
  uint64_t constants_blob_size;

  /* Key/value pairs: metadata[2*i] is a key, metadata[2*i+1] its value. */
  int32_t num_metadata;
  const char *const *metadata;

  /* Bytes of arena one run needs, given the symbol values. */
  int64_t (*arena_bytes)(const int64_t *symbols);
  /* Writes every output's dims, concatenated in output order. */
  void (*output_shapes)(const int64_t *symbols, int64_t *dims);
  /* Enqueues every kernel of one run. Inputs, outputs and the arena are
   * already bound in ctx. Returns 0 or the first launch error. */
  int32_t (*run)(AotcRunCtx *ctx, const int64_t *symbols);

  /* Messages of the errors kernels can record; "{value}" and "{extent}"
   * stand for the recorded numbers. */
  int32_t num_errors;
  const char *const *error_messages;

  /* Checks the symbol values bound by the inputs against what the compiled
   * code assumes: that no size overflows, and the conditions shape inference
   * could not prove (a squeezed dim is 1, ...). Returns -1 if all hold, else
   * the index of the first failing check in check_messages. Called before
   * arena_bytes, output_shapes and run, which may assume the checks hold. */
  int32_t (*check_symbols)(const int64_t *symbols);
  int32_t num_checks;
  const char *const *check_messages;

  /* The inputs in the order the ONNX graph lists them, when it lists
   * initializers (defaults) among them; 0 and null otherwise. A run takes
   * either num_inputs tensors (the required inputs) or num_input_slots
   * tensors in this order. */
  int32_t num_input_slots;
  const AotcInputSlotDesc *input_slots;

  /* For profiles: what each kernel computes, "Conv+Relu -> f32[n,64,7,7]"
   * (null when there are no kernels), and its estimated work for the
   * symbol values: out[2*k] floating-point operations, out[2*k+1] bytes of
   * the buffers kernel k reads and writes. Called after check_symbols. */
  const char *const *kernel_summaries;
  void (*kernel_costs)(const int64_t *symbols, double *out);

  /* ONNX initializers whose values the compiler used (packed weights, shape
   * data): frozen[2*i] is the name, frozen[2*i+1] why. Updates of them are
   * refused. */
  int32_t num_frozen;
  const char *const *frozen;

  /* Packed copies of initializers, recomputed on update. */
  int32_t num_folds;
  const AotcFoldDesc *folds;

  /* Bytes of constants_blob present in the .so: constants_blob_size, or in
   * a weightless .so the prefix before the updatable constants (laid out
   * last), which the host gives before the first run. */
  uint64_t constants_blob_stored;

  /* The blob lives in this file in the .so's folder instead (constants_blob
   * is null): a 4096-byte header ("AOTCWGT1", weights_id, the payload size)
   * and the blob, which the runtime maps. Null: no side file. */
  const char *weights_file;
  uint64_t weights_id;

  /* Writes the value of every AOTC_SYMBOL_DERIVED symbol into symbols[]
   * (num_symbols entries, owned by the caller; only the derived entries are
   * written), in order, once the inputs have bound the others. Returns -1,
   * or the index of a symbol whose definition overflows or divides by zero
   * (its entry and later derived ones are then left as they were). It
   * allocates nothing and reads no global state: any thread may call it,
   * concurrently on distinct arrays. Null when there are none. Called
   * before check_symbols. */
  int32_t (*derive_symbols)(int64_t *symbols);

  /* The folding program: enqueues (through aotc_rt_launch, kernels
   * num_kernels - n .. num_kernels - 1) the kernels that compute the
   * AOTC_CONSTANT_COMPUTED constants of the set the runtime binds from its
   * other constants, with an arena of fold_arena_bytes. Returns 0 or the
   * first launch error (its message recorded by aotc_rt_launch); the
   * runtime then finishes the queue and drops the set it was preparing, so
   * a failure changes no set runs can see. Called by the runtime only, on
   * one leased instance, serialized with the constant updates (any number
   * of runs may be in flight meanwhile; they read other sets). It owns
   * nothing and allocates nothing. Null when the model computes no
   * constant. */
  int32_t (*run_fold)(AotcRunCtx *ctx);
  uint64_t fold_arena_bytes;

  /* How many sync points run() has (aotc_rt_sync): 0 for a model whose
   * sizes are all known from its inputs. */
  int32_t num_syncs;

  /* Program binaries built at compile time, one per device they were built
   * for (AotcProgramBinaryDesc); 0 and null when none were. */
  int32_t num_program_binaries;
  const AotcProgramBinaryDesc *program_binaries;

  /* The OpenCL function each kernel launches (num_kernels entries; null:
   * kernel_names). Kernels whose code is identical, with their buffers and
   * symbols passed in the same places, share one function of the program,
   * named after the first of them; kernel_names stay each kernel's own, for
   * profiles and messages. Static tables of the .so, owned by it, read only
   * (by the runtime when a container is created, from any thread). A null
   * entry, or a name the program does not define, fails the container's
   * creation with AOTC_ERROR_INTERNAL and a message naming the kernel. */
  const char *const *kernel_functions;

  /* Bytes of counters the persistent kernels use (AOTC_ARG_COUNTERS): each
   * instance holds this many, zeroed when it is created (a failure to
   * allocate or zero them fails the container's creation); every persistent
   * launch leaves its counters zero again. Owned by the runtime; read when
   * a container is created. 0: none. */
  uint64_t counter_bytes;

  /* Which of run()'s two paths launches each kernel (num_kernels entries,
   * AOTC_KERNEL_*_PATH; null: every kernel AOTC_KERNEL_ANY_PATH). A model
   * with persistent kernels has two: on a CPU device the persistent kernels
   * (aotc_rt_persistent true), elsewhere their parts one by one. A container
   * creates, and builds the program's sections of, only the kernels of the
   * path it takes: PoCL compiles each kernel of a program it builds, and
   * the parts' code is in the persistent kernels too. Static table of the
   * .so, owned by it, read only (by the runtime when a container is
   * created, from any thread). A value other than these three fails the
   * container's creation with AOTC_ERROR_INTERNAL; so does a source whose
   * sections do not define the kernels the table leaves out, and a launch
   * of a kernel of the path not taken is refused with the same status. */
  const uint8_t *kernel_paths;
} AotcModelDesc;

/* AotcModelDesc::kernel_paths values. */
enum {
  AOTC_KERNEL_ANY_PATH = 0,        /* launched on either path */
  AOTC_KERNEL_PERSISTENT_PATH = 1, /* a persistent kernel: CPU devices */
  AOTC_KERNEL_PARTS_PATH = 2,      /* a persistent kernel's part: elsewhere */
};

/* Exported by the generated wrapper. */
const AotcModelDesc *aotc_model_desc(void);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_MODEL_DESC_H */

/// \file
/// The launch path: binding each kernel argument (inputs, outputs, the
/// arena, the active constant set or a replaced constant's own buffer,
/// scalars) and enqueueing it with its work-group size.
#include "container.h"
#include "launch_size.h"

#include "util.h"

#include <algorithm>
#include <cstring>

namespace aotc::rt {

namespace {

/// Sets OpenCL argument \p index of kernel \p k to \p size bytes at
/// \p value, unless the instance's last launch of it set the same bits with
/// the same tag (\p slot): \p tag 1 for a scalar, a buffer allocation's id
/// for a cl_mem (the handle of a released buffer may come back for another
/// one), 0 for what the runtime does not own (a caller's buffer): always set.
/// Run after run, a network sets only what changed (its inputs' and
/// outputs' buffers, when the caller's are new): on NVIDIA's driver each
/// call is host time on the launch path, 9 or so per kernel.
cl_int setArg(cl_kernel k, cl_uint index, Instance::ArgSlot &slot,
              size_t size, const void *value, uint64_t bits, uint64_t tag) {
  if (tag != 0 && slot.tag == tag && slot.bits == bits)
    return CL_SUCCESS;
  slot = {};
  cl_int err = clSetKernelArg(k, index, size, value);
  if (err == CL_SUCCESS)
    slot = {bits, tag};
  return err;
}

} // namespace

aotc_status_t Container::launch(AotcRunCtx &ctx, int32_t kernel,
                                const AotcArg *args, int32_t nargs,
                                int32_t dims, const uint64_t *global,
                                const uint64_t *local) const {
  const AotcModelDesc &d = *desc_;
  if (kernel < 0 || kernel >= d.num_kernels)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': launch of kernel %d of %d",
                d.model_name, kernel, d.num_kernels);
  const KernelInfo &info = kernels_[kernel];
  const char *name = info.name.c_str();
  if (!info.built)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': kernel '%s' belongs to the run() path this "
                "container does not take (%s), and was not built",
                d.model_name, name,
                runsPersistent_ ? "it runs the persistent kernels"
                                : "it runs the persistent kernels' parts");
  if (nargs < 0 || (nargs > 0 && !args) || dims < 1 || dims > 3 || !global)
    return fail(AOTC_ERROR_INTERNAL,
                "kernel '%s': bad launch (%d args, %d dims, global %p)", name,
                nargs, dims, static_cast<const void *>(global));

  // A buffer argument is two OpenCL arguments: the cl_mem and a byte offset.
  cl_uint clArgs = 0;
  for (int32_t a = 0; a < nargs; ++a)
    clArgs +=
        (args[a].kind == AOTC_ARG_I64 || args[a].kind == AOTC_ARG_I32) ? 1 : 2;
  if (clArgs != info.numArgs)
    return fail(AOTC_ERROR_INTERNAL,
                "kernel '%s' takes %u OpenCL arguments, the wrapper passed %u",
                name, info.numArgs, clArgs);

  // Nothing to do (OpenCL 1.2 rejects empty ranges), and nothing to bind:
  // the next run's arguments are still the ones set last.
  for (int32_t i = 0; i < dims; ++i)
    if (global[i] == 0)
      return AOTC_OK;

  Instance &instance = *ctx.instance;
  cl_kernel k = instance.kernels[kernel];
  std::vector<Instance::ArgSlot> &slots = instance.args[kernel];
  cl_uint index = 0;
  for (int32_t a = 0; a < nargs; ++a) {
    const AotcArg &arg = args[a];
    cl_mem mem = nullptr;
    uint64_t tag = 0; // the allocation mem belongs to (setArg)
    uint64_t capacity = 0;
    const char *kind = "";
    int64_t byteOffset = arg.value;
    switch (arg.kind) {
    case AOTC_ARG_INPUT:
    case AOTC_ARG_OUTPUT: {
      bool isInput = arg.kind == AOTC_ARG_INPUT;
      int32_t count = isInput ? d.num_inputs : d.num_outputs;
      kind = isInput ? "input" : "output";
      if (arg.index < 0 || arg.index >= count)
        return fail(AOTC_ERROR_INTERNAL, "kernel '%s' argument %d: %s %d of %d",
                    name, a, kind, arg.index, count);
      if (ctx.io) { // the caller's buffer, from its offset
        size_t k = static_cast<size_t>(arg.index);
        mem = isInput ? ctx.io->inputs[k] : ctx.io->outputs[k];
        uint64_t base = isInput ? ctx.io->inputOffsets[k]
                                : ctx.io->outputOffsets[k];
        capacity = base + (isInput ? ctx.io->inputBytes[k]
                                   : ctx.io->outputBytes[k]);
        byteOffset += static_cast<int64_t>(base);
        break;
      }
      const DeviceBuffer &buffer =
          isInput ? instance.inputs[arg.index] : instance.outputs[arg.index];
      mem = buffer.mem();
      tag = buffer.id();
      capacity = buffer.capacity();
      break;
    }
    case AOTC_ARG_CONSTANT: {
      kind = "constants";
      mem = ctx.constants->blob.get();
      tag = ctx.constants->id.value();
      capacity = ctx.constants->blobBytes;
      if (arg.index < 0 || arg.index >= d.num_constants)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d: constant %d of %d", name, a,
                    arg.index, d.num_constants);
      // A default replaced in this run, or a constant updated in this set:
      // its own buffer, at offset 0.
      const bool replaced = !ctx.overrides.empty() && ctx.overrides[arg.index];
      cl_mem own = replaced ? ctx.overrides[arg.index]
                            : ctx.constants->own[arg.index].get();
      if (!own)
        break;
      if (replaced)
        tag = 0; // a run's own replacement: set every time
      const AotcConstantDesc &c = d.constants[arg.index];
      if (arg.value != static_cast<int64_t>(c.offset))
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d: constant '%s' at offset %lld, "
                    "not %llu",
                    name, a, c.name, ll(arg.value), ull(c.offset));
      mem = own;
      capacity = c.nbytes;
      byteOffset = 0;
      kind = "updated constant's";
      break;
    }
    case AOTC_ARG_ARENA:
      kind = "arena";
      mem = instance.arena.mem();
      tag = instance.arena.id();
      capacity = instance.arena.capacity();
      break;
    case AOTC_ARG_COUNTERS:
      kind = "counters";
      mem = instance.counters.mem();
      tag = instance.counters.id();
      capacity = instance.counters.capacity();
      if (!mem)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' counts work-items but the model declares no "
                    "counters",
                    name);
      break;
    case AOTC_ARG_ERRORS:
      kind = "error record";
      mem = instance.errors.mem();
      tag = instance.errors.id();
      capacity = instance.errors.capacity();
      if (!mem)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' records errors but the model declares none",
                    name);
      break;
    case AOTC_ARG_I64: {
      cl_long value = arg.value;
      cl_int err = setArg(k, index, slots[index], sizeof(value), &value,
                          static_cast<uint64_t>(value), 1);
      ++index;
      if (err != CL_SUCCESS)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d (long): clSetKernelArg: %s", name,
                    a, clErrorName(err));
      continue;
    }
    case AOTC_ARG_I32: {
      if (arg.value < INT32_MIN || arg.value > INT32_MAX)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d: %lld does not fit an int", name,
                    a, ll(arg.value));
      cl_int value = static_cast<cl_int>(arg.value);
      cl_int err = setArg(k, index, slots[index], sizeof(value), &value,
                          static_cast<uint64_t>(arg.value), 1);
      ++index;
      if (err != CL_SUCCESS)
        return fail(AOTC_ERROR_INTERNAL,
                    "kernel '%s' argument %d (int): clSetKernelArg: %s", name,
                    a, clErrorName(err));
      continue;
    }
    default:
      return fail(AOTC_ERROR_INTERNAL,
                  "kernel '%s' argument %d: unknown kind %d", name, a,
                  arg.kind);
    }
    if (byteOffset < 0 || static_cast<uint64_t>(byteOffset) > capacity)
      return fail(AOTC_ERROR_INTERNAL,
                  "kernel '%s' argument %d: offset %lld is outside the %s "
                  "buffer (%llu bytes)",
                  name, a, ll(byteOffset), kind, ull(capacity));
    cl_ulong offset = static_cast<cl_ulong>(byteOffset);
    cl_int err = setArg(k, index, slots[index], sizeof(cl_mem), &mem,
                        reinterpret_cast<uintptr_t>(mem), tag);
    ++index;
    if (err == CL_SUCCESS)
      err = setArg(k, index, slots[index], sizeof(offset), &offset, offset, 1);
    ++index;
    if (err != CL_SUCCESS)
      return fail(AOTC_ERROR_INTERNAL,
                  "kernel '%s' argument %d (%s buffer): clSetKernelArg: %s",
                  name, a, kind, clErrorName(err));
  }

  size_t g[3] = {1, 1, 1};
  size_t l[3] = {1, 1, 1};
  if (local) {
    uint64_t product = 1;
    for (int32_t i = 0; i < dims; ++i) {
      if (local[i] == 0 || local[i] > device_.maxWorkItemSizes[i])
        return fail(AOTC_ERROR_UNSUPPORTED,
                    "kernel '%s': local size %llu in dim %d is not in [1, "
                    "%zu] on '%s'",
                    name, ull(local[i]), i, device_.maxWorkItemSizes[i],
                    device_.fullName.c_str());
      product *= local[i];
      l[i] = static_cast<size_t>(local[i]);
    }
    if (product > info.maxWorkGroupSize)
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "kernel '%s': work-group of %llu work-items exceeds its "
                  "limit of %zu on '%s'",
                  name, ull(product), info.maxWorkGroupSize,
                  device_.fullName.c_str());
  } else {
    // The launch's estimated flops (run.cpp computes them on CPUs).
    size_t at = 2 * static_cast<size_t>(kernel);
    double flops = at + 1 < ctx.costs.size() ? ctx.costs[at] : 0.0;
    l[0] = device_.isCpu ? cpuLocalSize(global[0], info.defaultLocalSize,
                                        device_.computeUnits, flops)
                         : info.defaultLocalSize;
  }
  for (int32_t i = 0; i < dims; ++i) {
    uint64_t rounded = 0;
    if (__builtin_add_overflow(global[i], l[i] - 1, &rounded))
      return fail(AOTC_ERROR_UNSUPPORTED, "kernel '%s': global size overflow",
                  name);
    g[i] = static_cast<size_t>(rounded / l[i] * l[i]);
  }
  cl_int err = clEnqueueNDRangeKernel(
      instance.queue, k, static_cast<cl_uint>(dims), nullptr, g, l, 0, nullptr,
      instance.profile.next(ctx.profiled && profiling()));
  if (err != CL_SUCCESS)
    return fail(statusForClError(err),
                "enqueueing kernel '%s' (global [%zu,%zu,%zu], local "
                "[%zu,%zu,%zu]) on '%s' failed: %s",
                name, g[0], g[1], g[2], l[0], l[1], l[2],
                device_.fullName.c_str(), clErrorName(err));
  // PoCL's CPU device starts a queue's commands at a flush, not as they are
  // enqueued: without one the first kernel waited for the whole run's
  // enqueues (MobileNetV2's 55: 0.15 ms, 5% of its run at batch 1). Flushes
  // after the 1st, 2nd, 4th, 8th, ... launch start the device at once and
  // keep commands ahead of it (a kernel runs for longer than a few
  // enqueues take), for log2(kernels) flushes a run.
  ++ctx.launches;
  if (device_.isCpu && (ctx.launches & (ctx.launches - 1)) == 0)
    clFlush(instance.queue);
  size_t c = 2 * static_cast<size_t>(kernel);
  bool costs = c + 1 < ctx.costs.size();
  instance.profile.add(AOTC_PROFILE_KERNEL, kernel, costs ? ctx.costs[c] : 0,
                       costs ? ctx.costs[c + 1] : 0);
  return AOTC_OK;
}

aotc_status_t Container::launchPersistent(AotcRunCtx &ctx, int32_t kernel,
                                          const AotcArg *args, int32_t nargs,
                                          int32_t nparts,
                                          const uint64_t *tiles) const {
  const AotcModelDesc &d = *desc_;
  if (kernel < 0 || kernel >= d.num_kernels || nparts < 1 || !tiles)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': persistent launch of kernel %d of %d (%d parts)",
                d.model_name, kernel, d.num_kernels, nparts);
  uint64_t most = 0;
  for (int32_t i = 0; i < nparts; ++i) {
    // The kernel counts a part's work-items in int (its counters).
    if (tiles[i] > static_cast<uint64_t>(INT32_MAX))
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "kernel '%s': part %d has %llu work-items, more than a "
                  "persistent kernel counts (%d); compile the model with "
                  "--no-persistent-kernels for these sizes",
                  kernels_[kernel].name.c_str(), i, ull(tiles[i]), INT32_MAX);
    most = std::max(most, tiles[i]);
  }
  // One work-group per compute unit of a CPU device, whose work-groups see
  // each other's stores as they happen; one elsewhere, which runs every
  // part itself (persistent_kernels.h).
  uint64_t groups =
      device_.isCpu
          ? std::min<uint64_t>(most, static_cast<uint64_t>(std::max<cl_uint>(
                                         device_.computeUnits, 1)))
          : std::min<uint64_t>(most, 1);
  const uint64_t one = 1;
  return launch(ctx, kernel, args, nargs, 1, &groups, &one);
}

aotc_status_t Container::sync(AotcRunCtx &ctx, int32_t sync, int32_t symbol,
                              uint64_t arenaOffset, int64_t bound) const {
  const AotcModelDesc &d = *desc_;
  if (!ctx.symbols || !ctx.outputBytes || sync < 0 || sync >= d.num_syncs ||
      symbol < 0 || symbol >= d.num_symbols ||
      d.symbols[symbol].kind != AOTC_SYMBOL_DATA ||
      d.symbols[symbol].after_sync != sync)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': bad sync %d of %d (symbol %d)", d.model_name,
                sync, d.num_syncs, symbol);
  const AotcSymbolDesc &sym = d.symbols[symbol];
  Instance &instance = *ctx.instance;
  // What the kernels so far recorded comes first: a count computed after a
  // bad index means nothing.
  if (d.num_errors > 0) {
    AotcErrorRecord record = {0, 0, 0, 0, 0};
    cl_int err = clEnqueueReadBuffer(instance.queue, instance.errors.mem(),
                                     CL_TRUE, 0, sizeof(record), &record, 0,
                                     nullptr, nullptr);
    if (err != CL_SUCCESS)
      return fail(statusForClError(err), "reading the error record: %s",
                  clErrorName(err));
    if (record.code != 0)
      return reportError(record);
  }
  int64_t count = 0;
  if (arenaOffset + sizeof(count) > instance.arena.capacity())
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': the count %s at arena offset %llu is past the "
                "arena (%llu bytes)",
                d.model_name, sym.name, ull(arenaOffset),
                ull(instance.arena.capacity()));
  cl_int err = clEnqueueReadBuffer(instance.queue, instance.arena.mem(),
                                   CL_TRUE, static_cast<size_t>(arenaOffset),
                                   sizeof(count), &count, 0, nullptr,
                                   instance.profile.next(profiling()));
  if (err != CL_SUCCESS)
    return fail(statusForClError(err), "model '%s': reading the count %s: %s",
                d.model_name, sym.name, clErrorName(err));
  instance.profile.add(AOTC_PROFILE_COPY_OUT, -1, 0, sizeof(count));
  if (count < 0 || count > bound || count < sym.min || count > sym.max)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': the kernels counted %s = %lld, outside [0, %lld] "
                "(the compiled code is wrong; please report it)",
                d.model_name, sym.name, ll(count), ll(std::min(bound, sym.max)));
  std::vector<int64_t> &symbols = *ctx.symbols;
  symbols[symbol] = count;
  AOTC_RT_RETURN_IF_ERROR(deriveAndCheckSymbols(symbols.data(), nullptr));
  // The outputs this count sizes: shapes for the caller, buffers here.
  std::vector<uint64_t> &bytes = *ctx.outputBytes;
  std::vector<uint64_t> now;
  AOTC_RT_RETURN_IF_ERROR(fillOutputShapes(
      symbols.data(), ctx.outputs, static_cast<size_t>(d.num_outputs), now));
  for (int32_t i = 0; i < d.num_outputs; ++i) {
    if (d.outputs[i].after_sync != sync)
      continue;
    if (now[i] == kUnknownBytes)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': output '%s' is still unsized after sync %d",
                  d.model_name, d.outputs[i].name, sync);
    AOTC_RT_RETURN_IF_ERROR(checkOutputCapacity(ctx.outputs[i], i, now[i]));
    std::string what = formatString("output '%s'", d.outputs[i].name);
    AOTC_RT_RETURN_IF_ERROR(instance.outputs[i].ensure(
        context_, device_, CL_MEM_READ_WRITE, now[i], what.c_str()));
    bytes[i] = now[i];
  }
  if (!ctx.costs.empty() && d.kernel_costs)
    d.kernel_costs(symbols.data(), ctx.costs.data());
  return AOTC_OK;
}

} // namespace aotc::rt

namespace {

/// The wrapper's calls into the runtime: a run context the runtime made,
/// the first error of the run returned again, no exception let out.
template <typename Body>
int32_t guardedRunCall(AotcRunCtx *ctx, const char *function, Body body) {
  using namespace aotc::rt;
  if (!ctx || !ctx->container || !ctx->instance)
    return fail(AOTC_ERROR_INTERNAL, "%s: null run context", function);
  if (ctx->status != AOTC_OK)
    return ctx->status;
  aotc_status_t status = AOTC_OK;
  try {
    status = body(*ctx);
  } catch (const std::bad_alloc &) {
    status = fail(AOTC_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (...) {
    status = fail(AOTC_ERROR_INTERNAL, "%s: unexpected exception", function);
  }
  ctx->status = status;
  return status;
}

} // namespace

/// Called by the generated wrapper; hidden, never exported from the .so.
extern "C" __attribute__((visibility("hidden"))) int32_t
aotc_rt_sync(AotcRunCtx *ctx, int32_t sync, int32_t symbol,
             uint64_t arena_offset, int64_t bound) {
  return guardedRunCall(ctx, __func__, [&](AotcRunCtx &c) {
    return c.container->sync(c, sync, symbol, arena_offset, bound);
  });
}

/// Called by the generated wrapper; hidden, never exported from the .so.
extern "C" __attribute__((visibility("hidden"))) int32_t
aotc_rt_persistent(AotcRunCtx *ctx) {
  return ctx && ctx->container && ctx->container->runsPersistent() ? 1 : 0;
}

/// Called by the generated wrapper; hidden, never exported from the .so.
extern "C" __attribute__((visibility("hidden"))) int32_t
aotc_rt_launch_persistent(AotcRunCtx *ctx, int32_t kernel, const AotcArg *args,
                          int32_t nargs, int32_t nparts,
                          const uint64_t *tiles) {
  return guardedRunCall(ctx, __func__, [&](AotcRunCtx &c) {
    return c.container->launchPersistent(c, kernel, args, nargs, nparts, tiles);
  });
}

/// Called by the generated wrapper; hidden, never exported from the .so.
extern "C" __attribute__((visibility("hidden"))) int32_t
aotc_rt_launch(AotcRunCtx *ctx, int32_t kernel, const AotcArg *args,
               int32_t nargs, int32_t dims, const uint64_t *global,
               const uint64_t *local) {
  return guardedRunCall(ctx, __func__, [&](AotcRunCtx &c) {
    return c.container->launch(c, kernel, args, nargs, dims, global, local);
  });
}

/// \file
/// The exported C ABI (aotc_runtime.h). Every function checks its pointers,
/// catches every exception and reports failures through the thread-local
/// last error: nothing aborts and nothing throws across the boundary.
#include "aotc/aotc_runtime.h"

#include "container.h"
#include "error.h"
#include "util.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

using aotc::rt::fail;

namespace {

// The public dtype enum mirrors the descriptor's.
constexpr bool sameDtype(aotc_dtype_t a, int b) {
  return static_cast<int>(a) == b;
}
static_assert(sameDtype(AOTC_DTYPE_FLOAT32, AOTC_DT_FLOAT32) &&
                  sameDtype(AOTC_DTYPE_UINT8, AOTC_DT_UINT8) &&
                  sameDtype(AOTC_DTYPE_INT8, AOTC_DT_INT8) &&
                  sameDtype(AOTC_DTYPE_UINT16, AOTC_DT_UINT16) &&
                  sameDtype(AOTC_DTYPE_INT16, AOTC_DT_INT16) &&
                  sameDtype(AOTC_DTYPE_UINT32, AOTC_DT_UINT32) &&
                  sameDtype(AOTC_DTYPE_INT32, AOTC_DT_INT32) &&
                  sameDtype(AOTC_DTYPE_INT64, AOTC_DT_INT64) &&
                  sameDtype(AOTC_DTYPE_BOOL, AOTC_DT_BOOL) &&
                  sameDtype(AOTC_DTYPE_FLOAT16, AOTC_DT_FLOAT16) &&
                  sameDtype(AOTC_DTYPE_BFLOAT16, AOTC_DT_BFLOAT16) &&
                  sameDtype(AOTC_DTYPE_FLOAT64, AOTC_DT_FLOAT64),
              "aotc_dtype_t must match AOTC_DT_*");

// The *_fn typedefs must match the declarations.
#define AOTC_CHECK_FN(name)                                                    \
  static_assert(std::is_same_v<decltype(&::name), name##_fn>,                  \
                #name "_fn does not match " #name);
AOTC_CHECK_FN(aotc_abi_version)
AOTC_CHECK_FN(aotc_last_error)
AOTC_CHECK_FN(aotc_status_name)
AOTC_CHECK_FN(aotc_dtype_name)
AOTC_CHECK_FN(aotc_dtype_size)
AOTC_CHECK_FN(aotc_container_options_init)
AOTC_CHECK_FN(aotc_container_create)
AOTC_CHECK_FN(aotc_container_create_in_context)
AOTC_CHECK_FN(aotc_container_delete)
AOTC_CHECK_FN(aotc_container_program_source)
AOTC_CHECK_FN(aotc_container_run)
AOTC_CHECK_FN(aotc_container_output_shapes)
AOTC_CHECK_FN(aotc_container_model_name)
AOTC_CHECK_FN(aotc_container_device_name)
AOTC_CHECK_FN(aotc_container_num_instances)
AOTC_CHECK_FN(aotc_container_num_inputs)
AOTC_CHECK_FN(aotc_container_num_outputs)
AOTC_CHECK_FN(aotc_container_num_constants)
AOTC_CHECK_FN(aotc_container_num_symbols)
AOTC_CHECK_FN(aotc_container_num_kernels)
AOTC_CHECK_FN(aotc_container_num_metadata)
AOTC_CHECK_FN(aotc_container_input_info)
AOTC_CHECK_FN(aotc_container_output_info)
AOTC_CHECK_FN(aotc_container_constant_info)
AOTC_CHECK_FN(aotc_container_symbol_info)
AOTC_CHECK_FN(aotc_container_kernel_name)
AOTC_CHECK_FN(aotc_container_metadata)
AOTC_CHECK_FN(aotc_container_metadata_lookup)
AOTC_CHECK_FN(aotc_container_arena_bytes)
AOTC_CHECK_FN(aotc_container_reserve)
AOTC_CHECK_FN(aotc_container_num_graph_inputs)
AOTC_CHECK_FN(aotc_container_graph_input_info)
AOTC_CHECK_FN(aotc_container_set_profiling)
AOTC_CHECK_FN(aotc_container_last_profile)
AOTC_CHECK_FN(aotc_container_kernel_summary)
AOTC_CHECK_FN(aotc_container_opencl_handles)
AOTC_CHECK_FN(aotc_container_run_device)
AOTC_CHECK_FN(aotc_container_run_device_async)
AOTC_CHECK_FN(aotc_run_wait)
AOTC_CHECK_FN(aotc_container_update_constants)
AOTC_CHECK_FN(aotc_container_update_user_managed_constants)
AOTC_CHECK_FN(aotc_container_run_const_fold)
AOTC_CHECK_FN(aotc_container_swap_constant_buffer)
AOTC_CHECK_FN(aotc_container_free_inactive_constant_buffer)
AOTC_CHECK_FN(aotc_container_extract_constants)
AOTC_CHECK_FN(aotc_container_constant_updatable)
#undef AOTC_CHECK_FN

/// Runs \p body, turning every escaping exception into a status.
template <typename Body>
aotc_status_t guarded(const char *function, Body body) {
  try {
    return body(function);
  } catch (const std::bad_alloc &) {
    return fail(AOTC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", function);
  } catch (const std::exception &e) {
    return fail(AOTC_ERROR_INTERNAL, "%s: internal error: %s", function,
                e.what());
  } catch (...) {
    return fail(AOTC_ERROR_INTERNAL, "%s: internal error", function);
  }
}

#define AOTC_REQUIRE(pointer)                                                  \
  do {                                                                         \
    if (!(pointer))                                                            \
      return fail(AOTC_ERROR_INVALID_ARGUMENT, "%s: " #pointer " is null",     \
                  fn);                                                         \
  } while (false)

aotc_status_t indexError(const char *function, const char *what, size_t index,
                         size_t count) {
  return fail(AOTC_ERROR_INVALID_ARGUMENT,
              "%s: %s index %zu is out of range "
              "(%zu %ss)",
              function, what, index, count, what);
}

aotc_status_t countOf(const char *function, const aotc_container_t *container,
                      size_t *outCount, int32_t count) {
  if (!container)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "%s: container is null", function);
  if (!outCount)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "%s: out_count is null", function);
  *outCount = static_cast<size_t>(count);
  return AOTC_OK;
}

} // namespace

extern "C" {

AOTC_API uint32_t aotc_abi_version(void) { return AOTC_ABI_VERSION; }

AOTC_API const char *aotc_last_error(void) { return aotc::rt::lastError(); }

AOTC_API const char *aotc_status_name(aotc_status_t status) {
  switch (status) {
  case AOTC_OK:
    return "AOTC_OK";
  case AOTC_ERROR_INVALID_ARGUMENT:
    return "AOTC_ERROR_INVALID_ARGUMENT";
  case AOTC_ERROR_NOT_FOUND:
    return "AOTC_ERROR_NOT_FOUND";
  case AOTC_ERROR_DEVICE_ERROR:
    return "AOTC_ERROR_DEVICE_ERROR";
  case AOTC_ERROR_OUT_OF_MEMORY:
    return "AOTC_ERROR_OUT_OF_MEMORY";
  case AOTC_ERROR_BUFFER_TOO_SMALL:
    return "AOTC_ERROR_BUFFER_TOO_SMALL";
  case AOTC_ERROR_UNSUPPORTED:
    return "AOTC_ERROR_UNSUPPORTED";
  case AOTC_ERROR_INTERNAL:
    return "AOTC_ERROR_INTERNAL";
  }
  return "AOTC_ERROR_UNKNOWN";
}

// One spelling and size table for the runtime's messages and the ABI
// (util.h; the static_assert above keeps the two enums equal).
AOTC_API const char *aotc_dtype_name(int32_t dtype) {
  return aotc::rt::dtypeName(dtype);
}

AOTC_API size_t aotc_dtype_size(int32_t dtype) {
  return aotc::rt::dtypeSize(dtype);
}

AOTC_API void
aotc_container_options_init(aotc_container_options_t *out_options) {
  if (!out_options)
    return;
  std::memset(out_options, 0, sizeof(*out_options));
  out_options->struct_size = sizeof(*out_options);
  out_options->device = nullptr;
  out_options->num_instances = 1;
  out_options->cache_dir = nullptr;
}

namespace {

aotc_status_t createContainer(const char *fn,
                              const aotc_container_options_t *options,
                              const aotc::rt::WeightsSource &weights,
                              aotc_container_t **out_container,
                              void *sharedContext = nullptr) {
  return guarded(fn, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(out_container);
    *out_container = nullptr;
    aotc_container_options_t effective;
    aotc_container_options_init(&effective);
    if (options) {
      // Version 1 of the struct ends after cache_dir; newer callers may pass a
      // larger struct whose extra fields this runtime does not know.
      size_t v1Size = offsetof(aotc_container_options_t, cache_dir) +
                      sizeof(options->cache_dir);
      if (options->struct_size < v1Size)
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "%s: options->struct_size is %u, expected at least %zu "
                    "(call aotc_container_options_init)",
                    fn, options->struct_size, v1Size);
      effective.device = options->device;
      effective.num_instances = options->num_instances;
      effective.cache_dir = options->cache_dir;
    }
    auto container = std::make_unique<aotc_container_t>();
    aotc_status_t status =
        container->init(aotc_model_desc(), effective, weights,
                        static_cast<cl_context>(sharedContext));
    if (status != AOTC_OK)
      return status;
    *out_container = container.release();
    return AOTC_OK;
  });
}

} // namespace

AOTC_API aotc_status_t aotc_container_create(
    const aotc_container_options_t *options, aotc_container_t **out_container) {
  return createContainer(__func__, options, aotc::rt::WeightsSource{},
                         out_container);
}

AOTC_API aotc_status_t aotc_container_create_with_weights(
    const aotc_container_options_t *options, int32_t weights_fd,
    uint64_t weights_offset, uint64_t weights_size,
    aotc_container_t **out_container) {
  if (weights_fd < 0) {
    if (out_container)
      *out_container = nullptr;
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "%s: weights_fd is %d, not a file descriptor", __func__,
                weights_fd);
  }
  return createContainer(
      __func__, options,
      aotc::rt::WeightsSource{weights_fd, weights_offset, weights_size},
      out_container);
}

AOTC_API aotc_status_t aotc_container_create_in_context(
    const aotc_container_options_t *options, void *cl_context,
    int32_t weights_fd, uint64_t weights_offset, uint64_t weights_size,
    aotc_container_t **out_container) {
  if (!cl_context || weights_fd < -1) {
    if (out_container)
      *out_container = nullptr;
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                cl_context ? "%s: weights_fd is %d, not a file descriptor or -1"
                           : "%s: cl_context is null",
                __func__, weights_fd);
  }
  aotc::rt::WeightsSource weights;
  if (weights_fd >= 0)
    weights = aotc::rt::WeightsSource{weights_fd, weights_offset, weights_size};
  return createContainer(__func__, options, weights, out_container,
                         cl_context);
}

AOTC_API void aotc_container_delete(aotc_container_t *container) {
  try {
    delete container;
  } catch (...) {
    // Destructors do not throw; nothing can be reported here anyway.
  }
}

AOTC_API aotc_status_t aotc_container_program_source(
    const aotc_container_t *container, int32_t *out_from_cache) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_from_cache);
  *out_from_cache = static_cast<int32_t>(container->programOrigin());
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_run(aotc_container_t *container,
                                          const aotc_tensor_t *inputs,
                                          size_t num_inputs,
                                          aotc_tensor_t *outputs,
                                          size_t num_outputs) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->run(inputs, num_inputs, outputs, num_outputs);
  });
}

AOTC_API aotc_status_t aotc_container_opencl_handles(
    const aotc_container_t *container, void **out_context, void **out_device) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    AOTC_REQUIRE(out_context);
    AOTC_REQUIRE(out_device);
    *out_context = container->context();
    *out_device = container->device().device;
    return AOTC_OK;
  });
}

AOTC_API aotc_status_t aotc_container_run_device(
    aotc_container_t *container, const aotc_device_tensor_t *inputs,
    size_t num_inputs, aotc_device_tensor_t *outputs, size_t num_outputs) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->runDevice(inputs, num_inputs, outputs, num_outputs);
  });
}

AOTC_API aotc_status_t aotc_container_run_device_async(
    aotc_container_t *container, const aotc_device_tensor_t *inputs,
    size_t num_inputs, aotc_device_tensor_t *outputs, size_t num_outputs,
    void *queue, aotc_run_t **out_run) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    AOTC_REQUIRE(out_run);
    *out_run = nullptr;
    return container->runDeviceAsync(inputs, num_inputs, outputs, num_outputs,
                                     static_cast<cl_command_queue>(queue),
                                     *out_run);
  });
}

AOTC_API aotc_status_t aotc_run_wait(aotc_run_t *run) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(run);
    return run->container->waitRun(run);
  });
}

AOTC_API aotc_status_t aotc_container_update_constants(
    aotc_container_t *container, const aotc_constant_entry_t *entries,
    size_t num_entries, int32_t use_inactive, int32_t validate_full) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->constants.update(entries, num_entries, use_inactive != 0,
                                       validate_full != 0,
                                       /*userManaged=*/false);
  });
}

AOTC_API aotc_status_t aotc_container_update_user_managed_constants(
    aotc_container_t *container, const aotc_constant_entry_t *entries,
    size_t num_entries, int32_t use_inactive, int32_t validate_full) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->constants.update(entries, num_entries, use_inactive != 0,
                                       validate_full != 0,
                                       /*userManaged=*/true);
  });
}

AOTC_API aotc_status_t aotc_container_run_const_fold(
    aotc_container_t *container, int32_t use_inactive) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->constants.runConstFold(use_inactive != 0);
  });
}

AOTC_API aotc_status_t
aotc_container_swap_constant_buffer(aotc_container_t *container) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->constants.swap();
  });
}

AOTC_API aotc_status_t
aotc_container_free_inactive_constant_buffer(aotc_container_t *container) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->constants.freeInactive();
  });
}

AOTC_API aotc_status_t aotc_container_extract_constants(
    const aotc_container_t *container, int32_t use_inactive,
    aotc_constant_entry_t *out, size_t capacity, size_t *out_count) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->constants.extract(use_inactive != 0, out, capacity,
                                        out_count);
  });
}

AOTC_API aotc_status_t aotc_container_constant_updatable(
    const aotc_container_t *container, size_t index, int32_t *out_updatable,
    const char **out_reason) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    AOTC_REQUIRE(out_updatable);
    const AotcModelDesc &desc = container->desc();
    if (index >= static_cast<size_t>(desc.num_constants))
      return indexError(fn, "constant", index,
                        static_cast<size_t>(desc.num_constants));
    const char *reason = nullptr;
    *out_updatable =
        container->constants.updatable(static_cast<int32_t>(index), reason);
    if (out_reason)
      *out_reason = reason;
    return AOTC_OK;
  });
}

AOTC_API aotc_status_t aotc_container_output_shapes(
    const aotc_container_t *container, const aotc_tensor_t *inputs,
    size_t num_inputs, aotc_tensor_t *outputs, size_t num_outputs) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->outputShapes(inputs, num_inputs, outputs, num_outputs);
  });
}

AOTC_API aotc_status_t aotc_container_model_name(
    const aotc_container_t *container, const char **out_name) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_name);
  *out_name = container->desc().model_name;
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_device_name(
    const aotc_container_t *container, const char **out_name) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_name);
  *out_name = container->device().fullName.c_str();
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_num_instances(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? static_cast<int32_t>(container->numInstances())
                           : 0);
}

AOTC_API aotc_status_t aotc_container_num_inputs(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? container->desc().num_inputs : 0);
}

AOTC_API aotc_status_t aotc_container_num_outputs(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? container->desc().num_outputs : 0);
}

AOTC_API aotc_status_t aotc_container_num_constants(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? container->desc().num_constants : 0);
}

AOTC_API aotc_status_t aotc_container_num_symbols(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? container->desc().num_symbols : 0);
}

AOTC_API aotc_status_t aotc_container_num_kernels(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? container->desc().num_kernels : 0);
}

AOTC_API aotc_status_t aotc_container_num_metadata(
    const aotc_container_t *container, size_t *out_count) {
  return countOf(__func__, container, out_count,
                 container ? container->desc().num_metadata : 0);
}

AOTC_API aotc_status_t
aotc_container_input_info(const aotc_container_t *container, size_t index,
                          aotc_tensor_info_t *out_info) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_info);
  const auto &infos = container->inputInfos();
  if (index >= infos.size())
    return indexError(__func__, "input", index, infos.size());
  *out_info = infos[index];
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_num_graph_inputs(
    const aotc_container_t *container, size_t *out_count) {
  const AotcModelDesc *d = container ? &container->desc() : nullptr;
  return countOf(__func__, container, out_count,
                 !d                       ? 0
                 : d->num_input_slots > 0 ? d->num_input_slots
                                          : d->num_inputs);
}

AOTC_API aotc_status_t
aotc_container_graph_input_info(const aotc_container_t *container, size_t index,
                                aotc_graph_input_info_t *out_info) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_info);
  const AotcModelDesc &d = container->desc();
  if (d.num_input_slots == 0) {
    if (index >= static_cast<size_t>(d.num_inputs))
      return indexError(__func__, "graph input", index, d.num_inputs);
    *out_info = {d.inputs[index].name, AOTC_GRAPH_INPUT_REQUIRED,
                 static_cast<int32_t>(index)};
    return AOTC_OK;
  }
  if (index >= static_cast<size_t>(d.num_input_slots))
    return indexError(__func__, "graph input", index, d.num_input_slots);
  const AotcInputSlotDesc &slot = d.input_slots[index];
  static_assert(int{AOTC_GRAPH_INPUT_REQUIRED} == int{AOTC_SLOT_REQUIRED} &&
                    int{AOTC_GRAPH_INPUT_DEFAULT} == int{AOTC_SLOT_DEFAULT} &&
                    int{AOTC_GRAPH_INPUT_FIXED} == int{AOTC_SLOT_FIXED},
                "aotc_graph_input_kind_t must match AOTC_SLOT_*");
  *out_info = {slot.name, slot.kind, slot.index};
  return AOTC_OK;
}

AOTC_API aotc_status_t
aotc_container_output_info(const aotc_container_t *container, size_t index,
                           aotc_tensor_info_t *out_info) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_info);
  const auto &infos = container->outputInfos();
  if (index >= infos.size())
    return indexError(__func__, "output", index, infos.size());
  *out_info = infos[index];
  return AOTC_OK;
}

AOTC_API aotc_status_t
aotc_container_constant_info(const aotc_container_t *container, size_t index,
                             aotc_constant_info_t *out_info) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_info);
  const AotcModelDesc &desc = container->desc();
  if (index >= static_cast<size_t>(desc.num_constants))
    return indexError(__func__, "constant", index,
                      static_cast<size_t>(desc.num_constants));
  const AotcConstantDesc &c = desc.constants[index];
  out_info->name = c.name;
  out_info->onnx_name = c.onnx_name;
  out_info->dtype = c.dtype;
  out_info->rank = c.rank;
  out_info->shape = c.shape;
  out_info->nbytes = c.nbytes;
  out_info->folded = c.folded ? 1 : 0;
  return AOTC_OK;
}

AOTC_API aotc_status_t
aotc_container_symbol_info(const aotc_container_t *container, size_t index,
                           aotc_symbol_info_t *out_info) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_info);
  const AotcModelDesc &desc = container->desc();
  if (index >= static_cast<size_t>(desc.num_symbols))
    return indexError(__func__, "symbol", index,
                      static_cast<size_t>(desc.num_symbols));
  const AotcSymbolDesc &s = desc.symbols[index];
  out_info->name = s.name;
  out_info->min = s.min;
  out_info->max = s.max;
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_kernel_name(
    const aotc_container_t *container, size_t index, const char **out_name) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_name);
  const AotcModelDesc &desc = container->desc();
  if (index >= static_cast<size_t>(desc.num_kernels))
    return indexError(__func__, "kernel", index,
                      static_cast<size_t>(desc.num_kernels));
  *out_name = desc.kernel_names[index];
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_kernel_summary(
    const aotc_container_t *container, size_t index, const char **out_summary) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_summary);
  const AotcModelDesc &desc = container->desc();
  if (index >= static_cast<size_t>(desc.num_kernels))
    return indexError(__func__, "kernel", index,
                      static_cast<size_t>(desc.num_kernels));
  const char *s = desc.kernel_summaries ? desc.kernel_summaries[index] : nullptr;
  *out_summary = s ? s : "";
  return AOTC_OK;
}

AOTC_API aotc_status_t aotc_container_set_profiling(aotc_container_t *container,
                                                    int32_t enable) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->setProfiling(enable != 0);
  });
}

AOTC_API aotc_status_t aotc_container_last_profile(
    const aotc_container_t *container, aotc_profile_record_t *out,
    size_t capacity, size_t *out_count) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    AOTC_REQUIRE(out_count);
    if (capacity > 0)
      AOTC_REQUIRE(out);
    if (!container->profiling())
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "%s: profiling is off (aotc_container_set_profiling)", fn);
    std::vector<aotc_profile_record_t> records = container->lastProfile();
    *out_count = records.size();
    std::copy_n(records.begin(), std::min(capacity, records.size()), out);
    return AOTC_OK;
  });
}

AOTC_API aotc_status_t
aotc_container_metadata(const aotc_container_t *container, size_t index,
                        const char **out_key, const char **out_value) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(out_key);
  AOTC_REQUIRE(out_value);
  const AotcModelDesc &desc = container->desc();
  if (index >= static_cast<size_t>(desc.num_metadata))
    return indexError(__func__, "metadata", index,
                      static_cast<size_t>(desc.num_metadata));
  *out_key = desc.metadata[2 * index];
  *out_value = desc.metadata[2 * index + 1];
  return AOTC_OK;
}

AOTC_API aotc_status_t
aotc_container_metadata_lookup(const aotc_container_t *container,
                               const char *key, const char **out_value) {
  const char *fn = __func__;
  AOTC_REQUIRE(container);
  AOTC_REQUIRE(key);
  AOTC_REQUIRE(out_value);
  const AotcModelDesc &desc = container->desc();
  for (int32_t i = 0; i < desc.num_metadata; ++i) {
    if (std::strcmp(desc.metadata[2 * i], key) == 0) {
      *out_value = desc.metadata[2 * i + 1];
      return AOTC_OK;
    }
  }
  return fail(AOTC_ERROR_NOT_FOUND, "model '%s' has no metadata key '%s'",
              desc.model_name, key);
}

AOTC_API aotc_status_t aotc_container_arena_bytes(
    const aotc_container_t *container, const int64_t *symbol_values,
    size_t num_symbols, uint64_t *out_bytes) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    AOTC_REQUIRE(out_bytes);
    return container->arenaBytes(symbol_values, num_symbols, out_bytes);
  });
}

AOTC_API aotc_status_t aotc_container_reserve(aotc_container_t *container,
                                              const int64_t *symbol_values,
                                              size_t num_symbols) {
  return guarded(__func__, [&](const char *fn) -> aotc_status_t {
    AOTC_REQUIRE(container);
    return container->reserve(symbol_values, num_symbols);
  });
}

} // extern "C"

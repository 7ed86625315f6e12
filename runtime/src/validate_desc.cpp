/// \file
/// Loading checks: the model descriptor a .so hands the runtime is checked
/// whole before anything is allocated (counts, tables, names, ranges, the
/// constants' places in the blob, input slots), and the OpenCL extensions
/// its kernels enable against the device's.
#include "container.h"

#include "util.h"

#include <cstring>

namespace aotc::rt {

aotc_status_t Container::describeTensor(const char *kind,
                                        const AotcTensorDesc &tensor,
                                        aotc_tensor_info_t &out) {
  if (!tensor.name)
    return fail(AOTC_ERROR_INTERNAL, "model descriptor: %s without a name",
                kind);
  if (dtypeSize(tensor.dtype) == 0)
    return fail(AOTC_ERROR_UNSUPPORTED, "%s '%s' has unsupported dtype %d",
                kind, tensor.name, tensor.dtype);
  if (tensor.rank < 0 || tensor.rank > AOTC_MAX_RANK)
    return fail(AOTC_ERROR_UNSUPPORTED,
                "%s '%s' has rank %d; the C ABI supports at most %d", kind,
                tensor.name, tensor.rank, AOTC_MAX_RANK);
  if (tensor.rank > 0 && !tensor.dims)
    return fail(AOTC_ERROR_INTERNAL, "model descriptor: %s '%s' has no dims",
                kind, tensor.name);
  std::memset(&out, 0, sizeof(out));
  out.name = tensor.name;
  out.dtype = tensor.dtype;
  out.rank = tensor.rank;
  for (int32_t d = 0; d < tensor.rank; ++d) {
    const AotcDimDesc &dim = tensor.dims[d];
    if (dim.symbol >= desc_->num_symbols)
      return fail(AOTC_ERROR_INTERNAL,
                  "model descriptor: %s '%s' dim %d uses symbol %d of %d", kind,
                  tensor.name, d, dim.symbol, desc_->num_symbols);
    bool isStatic = dim.symbol < 0 && dim.value >= 0;
    out.dims[d] = isStatic ? dim.value : -1;
    out.dim_symbols[d] = dim.symbol >= 0 ? dim.symbol : -1;
    if (dim.text) {
      out.dim_texts[d] = dim.text;
    } else {
      strings_.push_back(dim.symbol >= 0 ? desc_->symbols[dim.symbol].name
                         : isStatic      ? std::to_string(dim.value)
                                         : std::string("?"));
      out.dim_texts[d] = strings_.back().c_str();
    }
  }
  return AOTC_OK;
}

aotc_status_t Container::checkDeviceExtensions() const {
  // The OpenCL extensions the kernels enable (the printer writes one pragma
  // per extension a kernel needs, cl_khr_fp64 for float64): a device without
  // one is refused here by name rather than by a build log.
  if (desc_->num_kernels == 0 || !desc_->cl_source)
    return AOTC_OK;
  std::string source(desc_->cl_source, desc_->cl_source_size);
  std::string have = " " + device_.extensions + " ";
  const std::string pragma = "#pragma OPENCL EXTENSION ";
  for (size_t at = source.find(pragma); at != std::string::npos;
       at = source.find(pragma, at + 1)) {
    size_t start = at + pragma.size();
    size_t end = source.find_first_of(" :\n", start);
    std::string ext = source.substr(start, end == std::string::npos
                                               ? std::string::npos
                                               : end - start);
    if (ext.empty() || ext == "all" ||
        have.find(" " + ext + " ") != std::string::npos)
      continue;
    return fail(AOTC_ERROR_UNSUPPORTED,
                "model '%s' needs the OpenCL extension %s%s, which device "
                "'%s' lacks",
                desc_->model_name, ext.c_str(),
                ext == "cl_khr_fp64" ? " (float64 kernels)" : "",
                device_.fullName.c_str());
  }
  return AOTC_OK;
}

aotc_status_t Container::validateDesc() {
  const AotcModelDesc &d = *desc_;
  if (d.desc_version != AOTC_MODEL_DESC_VERSION)
    return fail(AOTC_ERROR_UNSUPPORTED,
                "model descriptor version %u, this runtime reads version %d",
                d.desc_version, AOTC_MODEL_DESC_VERSION);
  if (!d.model_name)
    return fail(AOTC_ERROR_INTERNAL, "model descriptor: no model name");
  const char *model = d.model_name;
  if (d.num_kernels < 0 || d.num_symbols < 0 || d.num_inputs < 0 ||
      d.num_outputs < 0 || d.num_constants < 0 || d.num_metadata < 0 ||
      d.num_syncs < 0)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': negative count in descriptor",
                model);
  if (d.num_kernels > 0 && (!d.cl_source || !d.kernel_names))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': kernels without source",
                model);
  for (int32_t i = 0; i < d.num_kernels; ++i)
    if (!d.kernel_names[i] || (d.kernel_functions && !d.kernel_functions[i]))
      return fail(AOTC_ERROR_INTERNAL, "model '%s': kernel %d has no name",
                  model, i);
  for (int32_t i = 0; d.kernel_paths && i < d.num_kernels; ++i)
    if (d.kernel_paths[i] > AOTC_KERNEL_PARTS_PATH)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': kernel %d has run() path %u", model, i,
                  unsigned(d.kernel_paths[i]));
  if (d.num_program_binaries < 0 ||
      (d.num_program_binaries > 0 && !d.program_binaries))
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': bad program binary table in descriptor", model);
  for (int32_t i = 0; i < d.num_program_binaries; ++i) {
    const AotcProgramBinaryDesc &b = d.program_binaries[i];
    if (!b.device_key || !b.binary || b.binary_size == 0)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': program binary %d has no device key or bytes",
                  model, i);
  }
  if ((d.num_symbols > 0 && !d.symbols) || (d.num_inputs > 0 && !d.inputs) ||
      (d.num_outputs > 0 && !d.outputs) ||
      (d.num_constants > 0 && !d.constants) ||
      (d.num_metadata > 0 && !d.metadata))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': missing descriptor table",
                model);
  for (int32_t i = 0; i < d.num_symbols; ++i) {
    const AotcSymbolDesc &s = d.symbols[i];
    // A size is never negative; a value (a Slice start) may be, and so may
    // what is derived from values (a Slice's step given at run time).
    bool value = s.kind == AOTC_SYMBOL_VALUE;
    bool derived = s.kind == AOTC_SYMBOL_DERIVED;
    bool data = s.kind == AOTC_SYMBOL_DATA;
    if (!s.name || (s.min < 0 && !value && !derived) || s.min > s.max ||
        (s.kind != AOTC_SYMBOL_DIM && !value && !derived && !data))
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': symbol %d has no name, a bad range or kind",
                  model, i);
    // A count is known after its sync; what derives from one, after it.
    if (s.after_sync < -1 || s.after_sync >= d.num_syncs ||
        (data && s.after_sync < 0) ||
        (s.after_sync >= 0 && !data && !derived))
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': symbol %d is known after sync %d of %d",
                  model, i, s.after_sync, d.num_syncs);
    if (s.kind == AOTC_SYMBOL_DERIVED && !d.derive_symbols)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': symbol %d is derived but the model has no "
                  "derive_symbols",
                  model, i);
    // (A float input's element is held as a double's bits: a Resize's
    // scales given at run time.)
    if (value &&
        (s.value_input < 0 || s.value_input >= d.num_inputs ||
         s.value_index < 0 ||
         (d.inputs[s.value_input].dtype != AOTC_DT_INT32 &&
          d.inputs[s.value_input].dtype != AOTC_DT_INT64 &&
          d.inputs[s.value_input].dtype != AOTC_DT_FLOAT32 &&
          d.inputs[s.value_input].dtype != AOTC_DT_FLOAT64)))
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': symbol %d reads element %lld of input %d, "
                  "which is no int32, int64, float32 or float64 input",
                  model, i, static_cast<long long>(s.value_index),
                  s.value_input);
  }
  for (int32_t i = 0; i < 2 * d.num_metadata; ++i)
    if (!d.metadata[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': null metadata entry",
                  model);
  for (int32_t i = 0; i < d.num_constants; ++i) {
    const AotcConstantDesc &c = d.constants[i];
    const char *name = c.name ? c.name : "?";
    uint64_t bytes = 0;
    if (!c.name || !c.onnx_name || c.rank < 0 || (c.rank > 0 && !c.shape) ||
        !tensorBytes(c.dtype, c.rank, c.shape, bytes) || bytes != c.nbytes)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': constant '%s' has a bad name, dtype or shape",
                  model, name);
    if (c.folded == AOTC_CONSTANT_COMPUTED) {
      if (c.offset != 0 || !d.run_fold)
        return fail(AOTC_ERROR_INTERNAL,
                    "model '%s': computed constant '%s' has an offset in the "
                    "blob, or the model has no folding program",
                    model, name);
      continue;
    }
    if (c.offset % 64 != 0 || c.offset > d.constants_blob_size ||
        c.nbytes > d.constants_blob_size - c.offset)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': constant '%s' (offset %llu, %llu bytes) is not "
                  "a 64-byte aligned range of the %llu-byte constants blob",
                  model, name, ull(c.offset), ull(c.nbytes),
                  ull(d.constants_blob_size));
  }
  if (!d.arena_bytes || !d.output_shapes || !d.run)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': missing descriptor function",
                model);
  if (d.num_errors < 0 || (d.num_errors > 0 && !d.error_messages) ||
      d.num_checks < 0 || (d.num_checks > 0 && !d.check_messages) ||
      (d.num_checks > 0 && !d.check_symbols))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': bad error or check tables",
                model);
  for (int32_t i = 0; i < d.num_errors; ++i)
    if (!d.error_messages[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': null error message", model);
  for (int32_t i = 0; i < d.num_checks; ++i)
    if (!d.check_messages[i])
      return fail(AOTC_ERROR_INTERNAL, "model '%s': null check message", model);
  if (d.num_input_slots < 0 || (d.num_input_slots > 0 && !d.input_slots) ||
      (d.num_input_slots > 0 && d.num_input_slots <= d.num_inputs))
    return fail(AOTC_ERROR_INTERNAL, "model '%s': bad input slot table",
                model);
  std::vector<int> slotOfInput(d.num_inputs, 0);
  for (int32_t i = 0; i < d.num_input_slots; ++i) {
    const AotcInputSlotDesc &slot = d.input_slots[i];
    bool required = slot.kind == AOTC_SLOT_REQUIRED;
    bool known = required || slot.kind == AOTC_SLOT_DEFAULT ||
                 slot.kind == AOTC_SLOT_FIXED;
    int32_t count = required ? d.num_inputs : d.num_constants;
    if (!slot.name || !known || slot.index < 0 || slot.index >= count ||
        (required && slotOfInput[slot.index]++ > 0) ||
        (slot.kind == AOTC_SLOT_FIXED &&
         (slot.nbytes != d.constants[slot.index].nbytes ||
          (slot.nbytes > 0 && !slot.data))))
      return fail(AOTC_ERROR_INTERNAL, "model '%s': bad input slot %d", model,
                  i);
  }
  for (int32_t i = 0; i < d.num_inputs && d.num_input_slots > 0; ++i)
    if (slotOfInput[i] != 1)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': input %d has no input slot", model, i);
  inputInfos_.resize(d.num_inputs);
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    AOTC_RT_RETURN_IF_ERROR(
        describeTensor("input", d.inputs[i], inputInfos_[i]));
    for (int32_t k = 0; k < d.inputs[i].rank; ++k) {
      const AotcDimDesc &dim = d.inputs[i].dims[k];
      if ((dim.symbol < 0 && dim.value < 0) ||
          (dim.symbol >= 0 && d.symbols[dim.symbol].after_sync >= 0))
        return fail(AOTC_ERROR_INTERNAL,
                    "model '%s': input '%s' dim %d is neither static nor a "
                    "symbol the inputs bind",
                    model, d.inputs[i].name, k);
    }
    if (d.inputs[i].after_sync != -1)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': input '%s' is known after a sync", model,
                  d.inputs[i].name);
  }
  outputInfos_.resize(d.num_outputs);
  for (int32_t i = 0; i < d.num_outputs; ++i) {
    AOTC_RT_RETURN_IF_ERROR(
        describeTensor("output", d.outputs[i], outputInfos_[i]));
    if (d.outputs[i].after_sync < -1 || d.outputs[i].after_sync >= d.num_syncs)
      return fail(AOTC_ERROR_INTERNAL,
                  "model '%s': output '%s' is known after sync %d of %d",
                  model, d.outputs[i].name, d.outputs[i].after_sync,
                  d.num_syncs);
  }
  return AOTC_OK;
}

} // namespace aotc::rt

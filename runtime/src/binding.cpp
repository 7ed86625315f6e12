/// \file
/// Input validation and shapes: matching the caller's tensors to the model's
/// inputs (or graph inputs with defaults), binding and checking the symbolic
/// sizes, output shapes and arena sizes, and the messages of errors kernels
/// record.
#include "container.h"

#include "util.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace aotc::rt {

aotc_status_t Container::bindInputs(const aotc_tensor_t *inputs,
                                    size_t numInputs, bool checkData,
                                    Binding &out, bool deviceData) const {
  const AotcModelDesc &d = *desc_;
  AOTC_RT_RETURN_IF_ERROR(matchInputSlots(inputs, numInputs, checkData, out));
  out.symbols.assign(d.num_symbols, -1);
  std::vector<bool> bound(d.num_symbols, false);
  out.inputBytes.assign(d.num_inputs, 0);
  // Where each symbol was bound, for messages.
  std::vector<std::pair<int32_t, int32_t>> &boundAt = out.boundAt;
  boundAt.assign(d.num_symbols, {-1, -1});
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    const AotcTensorDesc &want = d.inputs[i];
    const aotc_tensor_t &got = *out.inputs[i];
    if (got.dtype != want.dtype)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': expected dtype %s, got %s (%d)", want.name,
                  dtypeName(want.dtype), dtypeName(got.dtype), got.dtype);
    if (got.rank != want.rank)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': expected rank %d, got %d", want.name, want.rank,
                  got.rank);
    for (int32_t k = 0; k < want.rank; ++k) {
      const AotcDimDesc &dim = want.dims[k];
      int64_t size = got.shape[k];
      if (size < 0)
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "input '%s' dim %d: negative size %lld", want.name, k,
                    ll(size));
      if (dim.symbol < 0) {
        if (size != dim.value)
          return fail(AOTC_ERROR_INVALID_ARGUMENT,
                      "input '%s' dim %d: expected %lld, got %lld", want.name,
                      k, ll(dim.value), ll(size));
        continue;
      }
      const AotcSymbolDesc &sym = d.symbols[dim.symbol];
      int64_t &value = out.symbols[dim.symbol];
      if (!bound[dim.symbol]) {
        bound[dim.symbol] = true;
        if (size < sym.min || size > sym.max)
          return fail(AOTC_ERROR_INVALID_ARGUMENT,
                      "input '%s' dim %d: %s = %lld is outside its range "
                      "[%lld, %lld]",
                      want.name, k, sym.name, ll(size), ll(sym.min),
                      ll(sym.max));
        value = size;
        boundAt[dim.symbol] = {i, k};
      } else if (size != value) {
        auto [bi, bk] = boundAt[dim.symbol];
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "input '%s' dim %d: expected %s = %lld (as bound by input "
                    "'%s' dim %d), got %lld",
                    want.name, k, sym.name, ll(value), d.inputs[bi].name, bk,
                    ll(size));
      }
    }
    uint64_t bytes = 0;
    if (!tensorBytes(want.dtype, want.rank, got.shape, bytes))
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': shape %s is too large", want.name,
                  shapeString(want.rank, got.shape).c_str());
    out.inputBytes[i] = bytes;
    if (!checkData)
      continue;
    if (got.nbytes < bytes)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': buffer holds %llu bytes, shape %s %s needs %llu",
                  want.name, ull(got.nbytes),
                  shapeString(want.rank, got.shape).c_str(),
                  dtypeName(want.dtype), ull(bytes));
    if (bytes > 0 && !got.data)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': data is null but %llu bytes are needed",
                  want.name, ull(bytes));
  }
  // Value symbols: elements of integer inputs read as sizes.
  for (int32_t s = 0; s < d.num_symbols; ++s) {
    const AotcSymbolDesc &sym = d.symbols[s];
    if (sym.kind != AOTC_SYMBOL_VALUE)
      continue;
    // (validateDesc checked value_input, value_index and the dtype.)
    const AotcTensorDesc &want = d.inputs[sym.value_input];
    const aotc_tensor_t &got = *out.inputs[sym.value_input];
    size_t size = dtypeSize(want.dtype);
    uint64_t offset = static_cast<uint64_t>(sym.value_index) * size;
    if (deviceData)
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "model '%s': input '%s' gives sizes (%s): pass it in host "
                  "memory (aotc_container_run), not as a device buffer",
                  d.model_name, want.name, sym.name);
    if (!got.data || got.nbytes < offset + size)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': its values give sizes (%s), so its data is "
                  "needed (%s)",
                  want.name, sym.name,
                  got.data ? "the buffer is too small" : "data is null");
    const auto *bytes = static_cast<const uint8_t *>(got.data) + offset;
    int64_t value;
    if (want.dtype == AOTC_DT_FLOAT32 || want.dtype == AOTC_DT_FLOAT64) {
      // A float value symbol: the value, as a double's bits.
      double f;
      if (want.dtype == AOTC_DT_FLOAT32) {
        float f32;
        std::memcpy(&f32, bytes, sizeof f32);
        f = f32;
      } else {
        std::memcpy(&f, bytes, sizeof f);
      }
      if (!std::isfinite(f))
        return fail(AOTC_ERROR_INVALID_ARGUMENT,
                    "input '%s' element %lld: %s = %g is not finite (it "
                    "gives sizes)",
                    want.name, ll(sym.value_index), sym.name, f);
      std::memcpy(&value, &f, sizeof value);
      out.symbols[s] = value;
      bound[s] = true;
      continue;
    }
    if (want.dtype == AOTC_DT_INT32) {
      int32_t v32;
      std::memcpy(&v32, bytes, sizeof v32);
      value = v32;
    } else {
      std::memcpy(&value, bytes, sizeof value);
    }
    if (value < sym.min || value > sym.max)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s' element %lld: %s = %lld is outside its range "
                  "[%lld, %lld]",
                  want.name, ll(sym.value_index), sym.name, ll(value),
                  ll(sym.min), ll(sym.max));
    out.symbols[s] = value;
    bound[s] = true;
  }
  // Counts the model computes are unknown until the run reads them.
  for (int32_t s = 0; s < d.num_symbols; ++s)
    if (d.symbols[s].kind == AOTC_SYMBOL_DATA) {
      out.symbols[s] = AOTC_SYMBOL_UNKNOWN;
      bound[s] = true;
    }
  for (int32_t s = 0; s < d.num_symbols; ++s)
    if (!bound[s] && d.symbols[s].kind != AOTC_SYMBOL_DERIVED)
      return fail(AOTC_ERROR_UNSUPPORTED,
                  "model '%s': symbol '%s' is not bound by any input",
                  d.model_name, d.symbols[s].name);
  return deriveAndCheckSymbols(out.symbols.data(), &out);
}

aotc_status_t Container::matchInputSlots(const aotc_tensor_t *inputs,
                                         size_t numInputs, bool checkData,
                                         Binding &out) const {
  const AotcModelDesc &d = *desc_;
  bool all = d.num_input_slots > 0 &&
             numInputs == static_cast<size_t>(d.num_input_slots);
  if (numInputs != static_cast<size_t>(d.num_inputs) && !all) {
    if (d.num_input_slots > 0)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "model '%s' takes %d input(s), or %d with the defaults the "
                  "ONNX graph lists as inputs, got %zu",
                  d.model_name, d.num_inputs, d.num_input_slots, numInputs);
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s' takes %d input(s), got %zu", d.model_name,
                d.num_inputs, numInputs);
  }
  if (numInputs > 0 && !inputs)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "inputs is null");
  out.inputs.assign(d.num_inputs, nullptr);
  out.overrides.clear();
  if (!all) {
    for (int32_t i = 0; i < d.num_inputs; ++i)
      out.inputs[i] = &inputs[i];
    return AOTC_OK;
  }
  for (int32_t i = 0; i < d.num_input_slots; ++i) {
    const AotcInputSlotDesc &slot = d.input_slots[i];
    const aotc_tensor_t &got = inputs[i];
    if (slot.kind == AOTC_SLOT_REQUIRED) {
      out.inputs[slot.index] = &got;
      continue;
    }
    // A default's value: exactly the constant's dtype and shape.
    const AotcConstantDesc &c = d.constants[slot.index];
    bool same = got.dtype == c.dtype && got.rank == c.rank &&
                got.rank >= 0 && got.rank <= AOTC_MAX_RANK;
    for (int32_t k = 0; same && k < c.rank; ++k)
      same = got.shape[k] == c.shape[k];
    if (!same)
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s' (a default): expected %s %s, got %s %s",
                  slot.name, dtypeName(c.dtype),
                  shapeString(c.rank, c.shape).c_str(), dtypeName(got.dtype),
                  got.rank >= 0 && got.rank <= AOTC_MAX_RANK
                      ? shapeString(got.rank, got.shape).c_str()
                      : "of a bad rank");
    if (!checkData)
      continue;
    if (got.nbytes < c.nbytes || (c.nbytes > 0 && !got.data))
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "input '%s': buffer holds %llu bytes, %s needs %llu",
                  slot.name, ull(got.data ? got.nbytes : 0),
                  shapeString(c.rank, c.shape).c_str(), ull(c.nbytes));
    if (slot.kind == AOTC_SLOT_FIXED) {
      // Compiled into the code as shape data: only its default will do.
      if (c.nbytes > 0 && std::memcmp(got.data, slot.data, c.nbytes) != 0)
        return fail(AOTC_ERROR_UNSUPPORTED,
                    "input '%s': the model was compiled with this default's "
                    "value (it decides sizes), so a run cannot change it",
                    slot.name);
      continue;
    }
    out.overrides.emplace_back(slot.index, &got);
  }
  return AOTC_OK;
}

aotc_status_t Container::deriveAndCheckSymbols(int64_t *symbols,
                                               const Binding *binding) const {
  const AotcModelDesc &d = *desc_;
  // A definition that cannot be computed (it divides by zero, say) is
  // reported after check_symbols: the assumption it breaks names the
  // cause better. Its value stays -1, outside every derived range.
  int32_t underived = -1;
  if (d.derive_symbols) {
    for (int32_t s = 0; s < d.num_symbols; ++s)
      if (d.symbols[s].kind == AOTC_SYMBOL_DERIVED)
        symbols[s] = -1;
    underived = d.derive_symbols(symbols);
  }
  auto values = [&] {
    std::string text;
    for (int32_t s = 0; s < d.num_symbols; ++s) {
      const AotcSymbolDesc &sym = d.symbols[s];
      int32_t dt = sym.kind == AOTC_SYMBOL_VALUE
                       ? d.inputs[sym.value_input].dtype
                       : AOTC_DT_INT64;
      if (symbols[s] == AOTC_SYMBOL_UNKNOWN && sym.after_sync >= 0) {
        text += formatString("%s%s unknown", s ? ", " : "", sym.name);
      } else if (dt == AOTC_DT_FLOAT32 || dt == AOTC_DT_FLOAT64) {
        double f;
        std::memcpy(&f, &symbols[s], sizeof f);
        text += formatString("%s%s = %g", s ? ", " : "", sym.name, f);
      } else {
        text += formatString("%s%s = %lld", s ? ", " : "", sym.name,
                             ll(symbols[s]));
      }
      if (binding && binding->boundAt[s].first >= 0)
        text += formatString(" (input '%s' dim %d)",
                             d.inputs[binding->boundAt[s].first].name,
                             binding->boundAt[s].second);
      else if (sym.kind == AOTC_SYMBOL_VALUE)
        text += formatString(" (input '%s' element %lld)",
                             d.inputs[sym.value_input].name,
                             ll(sym.value_index));
      else if (sym.kind == AOTC_SYMBOL_DERIVED)
        text += " (computed)";
      else if (sym.kind == AOTC_SYMBOL_DATA)
        text += " (counted by the model)";
    }
    return text;
  };
  if (d.check_symbols) {
    int32_t failed = d.check_symbols(symbols);
    if (failed >= d.num_checks)
      return fail(AOTC_ERROR_INTERNAL, "model '%s': check %d of %d failed",
                  d.model_name, failed, d.num_checks);
    if (failed >= 0)
      return fail(AOTC_ERROR_INVALID_ARGUMENT, "model '%s': %s, with %s",
                  d.model_name, d.check_messages[failed], values().c_str());
  }
  if (underived >= d.num_symbols)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': derived symbol %d of %d",
                d.model_name, underived, d.num_symbols);
  if (underived >= 0)
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s': size %s cannot be computed (it overflows 64 "
                "bits or divides by zero), with %s",
                d.model_name, d.symbols[underived].name, values().c_str());
  for (int32_t s = 0; s < d.num_symbols; ++s) {
    const AotcSymbolDesc &sym = d.symbols[s];
    bool unknown = sym.after_sync >= 0 && symbols[s] == AOTC_SYMBOL_UNKNOWN;
    if (sym.kind == AOTC_SYMBOL_DERIVED && !unknown &&
        (symbols[s] < sym.min || symbols[s] > sym.max))
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "model '%s': size %s = %lld is outside its range [%lld, "
                  "%lld], with %s",
                  d.model_name, sym.name, ll(symbols[s]), ll(sym.min),
                  ll(sym.max), values().c_str());
  }
  return AOTC_OK;
}

aotc_status_t Container::reportError(const AotcErrorRecord &record) const {
  const AotcModelDesc &d = *desc_;
  if (record.code < 1 || record.code > d.num_errors)
    return fail(AOTC_ERROR_INTERNAL,
                "model '%s': a kernel recorded unknown error %d", d.model_name,
                record.code);
  std::string msg = d.error_messages[record.code - 1];
  auto replaceAll = [&](const std::string &key, const std::string &value) {
    for (size_t p = msg.find(key); p != std::string::npos;
         p = msg.find(key, p + value.size()))
      msg.replace(p, key.size(), value);
  };
  replaceAll("{value}", std::to_string(record.value));
  replaceAll("{extent}", std::to_string(record.extent));
  return fail(AOTC_ERROR_INVALID_ARGUMENT, "model '%s': %s", d.model_name,
              msg.c_str());
}

aotc_status_t
Container::fillOutputShapes(const int64_t *symbols, aotc_tensor_t *outputs,
                            size_t numOutputs,
                            std::vector<uint64_t> &outBytes) const {
  const AotcModelDesc &d = *desc_;
  if (numOutputs != static_cast<size_t>(d.num_outputs))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s' has %d output(s), got %zu", d.model_name,
                d.num_outputs, numOutputs);
  if (numOutputs > 0 && !outputs)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "outputs is null");
  size_t totalRank = 0;
  for (int32_t i = 0; i < d.num_outputs; ++i)
    totalRank += d.outputs[i].rank;
  // One spare element: output_shapes may be called with no rank at all.
  std::vector<int64_t> dims(totalRank + 1, -1);
  d.output_shapes(symbols, dims.data());
  outBytes.assign(numOutputs, 0);
  const int64_t *next = dims.data();
  for (size_t i = 0; i < numOutputs; ++i) {
    const AotcTensorDesc &want = d.outputs[i];
    aotc_tensor_t &o = outputs[i];
    o.dtype = want.dtype;
    o.rank = want.rank;
    std::memset(o.shape, 0, sizeof(o.shape));
    std::copy(next, next + want.rank, o.shape);
    next += want.rank;
    bool unknown = false;
    for (int32_t k = 0; k < want.rank; ++k)
      unknown |= want.after_sync >= 0 && o.shape[k] == -1;
    if (unknown) { // sized by a count the run has not read yet
      outBytes[i] = kUnknownBytes;
      continue;
    }
    if (!tensorBytes(want.dtype, want.rank, o.shape, outBytes[i]))
      return fail(AOTC_ERROR_INTERNAL,
                  "output '%s': the model computed an invalid shape %s",
                  want.name, shapeString(want.rank, o.shape).c_str());
  }
  return AOTC_OK;
}

aotc_status_t Container::outputShapes(const aotc_tensor_t *inputs,
                                      size_t numInputs, aotc_tensor_t *outputs,
                                      size_t numOutputs) const {
  Binding binding;
  AOTC_RT_RETURN_IF_ERROR(bindInputs(inputs, numInputs, false, binding));
  std::vector<uint64_t> bytes;
  return fillOutputShapes(binding.symbols.data(), outputs, numOutputs, bytes);
}

aotc_status_t Container::arenaBytes(const int64_t *symbols, size_t numSymbols,
                                    uint64_t *outBytes) const {
  const AotcModelDesc &d = *desc_;
  if (numSymbols != static_cast<size_t>(d.num_symbols))
    return fail(AOTC_ERROR_INVALID_ARGUMENT,
                "model '%s' has %d symbol(s), got %zu values", d.model_name,
                d.num_symbols, numSymbols);
  if (numSymbols > 0 && !symbols)
    return fail(AOTC_ERROR_INVALID_ARGUMENT, "symbol_values is null");
  for (size_t s = 0; s < numSymbols; ++s) {
    const AotcSymbolDesc &sym = d.symbols[s];
    if (sym.kind != AOTC_SYMBOL_DERIVED &&
        (symbols[s] < sym.min || symbols[s] > sym.max))
      return fail(AOTC_ERROR_INVALID_ARGUMENT,
                  "symbol '%s': %lld is outside its range [%lld, %lld]",
                  sym.name, ll(symbols[s]), ll(sym.min), ll(sym.max));
  }
  // Derived symbols are computed from the others (their given values are
  // not read).
  std::vector<int64_t> all(symbols, symbols + numSymbols);
  AOTC_RT_RETURN_IF_ERROR(deriveAndCheckSymbols(all.data(), nullptr));
  int64_t bytes = d.arena_bytes(all.data());
  if (bytes < 0)
    return fail(AOTC_ERROR_INTERNAL, "model '%s': negative arena size %lld",
                d.model_name, ll(bytes));
  *outBytes = static_cast<uint64_t>(bytes);
  return AOTC_OK;
}

} // namespace aotc::rt

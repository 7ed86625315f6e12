/// \file
/// The run a container makes while it is created (Container::warmUp), and
/// at the sizes a host reserves (Container::reserve): what a device does on
/// a kernel's first launch and a buffer's first use happens at load, not in
/// the host's first run.
///
/// Measured on PoCL (MobileNetV2, batch 1, 2026-11-28): the first run after
/// a load took 15.0-15.4 ms against a steady 6.9-8.3 ms; of the extra, half
/// was between the kernels (PoCL readying each kernel's work-group function
/// on its first launch) and half inside them (the first touch of the
/// arena's and the constants' pages). After one run at load the first run
/// took 6.3-6.5 ms against 5.3 (1.2x).
#include "container.h"

#include "util.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace aotc::rt {

namespace {

/// Keeps the calling thread's last error across the warm-up, whose errors
/// are not the host's.
class KeepLastError {
public:
  KeepLastError() : saved_(lastError()) {}
  ~KeepLastError() { fail(AOTC_OK, "%s", saved_.c_str()); }

private:
  std::string saved_;
};

} // namespace

void Container::warmUp() {
  const char *env = std::getenv("AOTC_WARM_UP");
  if (env && std::strcmp(env, "0") == 0)
    return;
  const AotcModelDesc &d = *desc_;
  // The smallest sizes the symbols allow, 1 where their range has it.
  std::vector<int64_t> symbols(d.num_symbols);
  for (int32_t s = 0; s < d.num_symbols; ++s)
    symbols[s] = std::clamp<int64_t>(1, d.symbols[s].min, d.symbols[s].max);
  std::vector<Instance *> all;
  for (const std::unique_ptr<Instance> &instance : instances_)
    all.push_back(instance.get());
  runOnZeros(std::move(symbols), all);
}

void Container::runOnZeros(std::vector<int64_t> symbols,
                           const std::vector<Instance *> &instances) {
  const AotcModelDesc &d = *desc_;
  std::shared_ptr<const ConstantSet> set = constants.active();
  if (set->numMissing > 0)
    return; // a weightless model before its weights: nothing to run yet
  // An output sized by a count the run reads has no buffer size before it.
  for (int32_t i = 0; i < d.num_outputs; ++i)
    if (d.outputs[i].after_sync >= 0)
      return;
  KeepLastError keep;
  // Zero inputs, except where a symbol is read from an input's values (a
  // shape given at run time): there its size.
  std::vector<std::vector<uint8_t>> data(d.num_inputs);
  std::vector<aotc_tensor_t> inputs(d.num_inputs);
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    const AotcTensorDesc &in = d.inputs[i];
    aotc_tensor_t &t = inputs[i];
    std::memset(&t, 0, sizeof(t));
    t.dtype = in.dtype;
    t.rank = in.rank;
    for (int32_t k = 0; k < in.rank; ++k)
      t.shape[k] = in.dims[k].symbol < 0 ? in.dims[k].value
                                         : symbols[in.dims[k].symbol];
    uint64_t bytes = 0;
    if (!tensorBytes(in.dtype, in.rank, t.shape, bytes) || bytes > (1ull << 30))
      return;
    data[i].assign(bytes, 0);
    t.data = data[i].data();
    t.nbytes = bytes;
  }
  for (int32_t s = 0; s < d.num_symbols; ++s) {
    const AotcSymbolDesc &sym = d.symbols[s];
    if (sym.kind != AOTC_SYMBOL_VALUE || sym.value_input < 0 ||
        sym.value_input >= d.num_inputs)
      continue;
    aotc_tensor_t &t = inputs[sym.value_input];
    size_t size = aotc_dtype_size(t.dtype);
    if (size == 0 || (sym.value_index + 1) * size > t.nbytes)
      return;
    uint8_t *at = static_cast<uint8_t *>(t.data) + sym.value_index * size;
    if (t.dtype == AOTC_DTYPE_INT64) {
      int64_t v = symbols[s];
      std::memcpy(at, &v, sizeof(v));
    } else if (t.dtype == AOTC_DTYPE_INT32) {
      auto v = static_cast<int32_t>(symbols[s]);
      std::memcpy(at, &v, sizeof(v));
    }
  }
  Binding binding;
  if (bindInputs(inputs.data(), inputs.size(), true, binding) != AOTC_OK)
    return;
  std::vector<aotc_tensor_t> outputs(d.num_outputs);
  std::vector<uint64_t> outputBytes;
  if (fillOutputShapes(binding.symbols.data(), outputs.data(), outputs.size(),
                       outputBytes) != AOTC_OK)
    return;
  std::vector<std::vector<uint8_t>> outData(d.num_outputs);
  for (int32_t i = 0; i < d.num_outputs; ++i) {
    if (outputBytes[i] > (1ull << 30))
      return;
    outData[i].assign(outputBytes[i], 0);
    outputs[i].data = outData[i].data();
    outputs[i].nbytes = outputBytes[i];
  }
  // Every instance: each has its own kernels, arena and buffers. A failure
  // (zeros that a model refuses) leaves the rest to the host's first run.
  for (Instance *instance : instances) {
    AotcErrorRecord record = {0, 0, 0, 0, 0};
    if (enqueueRun(*instance, *set, binding, outputs.data(), outputBytes,
                   nullptr, record, /*wait=*/true) != AOTC_OK)
      return;
  }
}

} // namespace aotc::rt

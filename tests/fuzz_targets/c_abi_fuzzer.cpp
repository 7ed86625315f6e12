// libFuzzer target: the C ABI's checks of what a host passes to a run. The
// input bytes describe the tensors of one aotc_container_run call on the
// scale_shift fixture model (x: f32[batch, 4] with batch in [0, 64]): their
// count, dtype, rank, shape, nbytes and whether data is null. Every
// combination must give AOTC_OK or an error status with a message, never a
// crash, an out-of-bounds access or a hang.
#include "aotc/aotc_runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Reader {
  const uint8_t *p;
  size_t n;
  template <typename T> T get() {
    T v{};
    size_t k = n < sizeof(T) ? n : sizeof(T);
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
};

aotc_container_t *container() {
  static aotc_container_t *c = [] {
    aotc_container_options_t opts;
    aotc_container_options_init(&opts);
    opts.device = "cpu";
    opts.num_instances = 1;
    aotc_container_t *made = nullptr;
    if (aotc_container_create(&opts, &made) != AOTC_OK)
      std::abort(); // the fixture must load
    return made;
  }();
  return c;
}

/// Fills \p t from the input; the data points into \p storage.
void readTensor(Reader &r, aotc_tensor_t &t, std::vector<uint8_t> &storage) {
  std::memset(&t, 0, sizeof t);
  t.dtype = static_cast<int32_t>(r.get<uint8_t>() % 16) - 2;
  t.rank = static_cast<int32_t>(r.get<uint8_t>() % 12) - 1;
  for (int i = 0; i < AOTC_MAX_RANK; ++i) {
    uint8_t kind = r.get<uint8_t>();
    // Mostly small dims, sometimes huge or negative ones.
    t.shape[i] = kind < 200   ? kind % 9
                 : kind < 230 ? r.get<int64_t>()
                              : -static_cast<int64_t>(kind);
  }
  uint8_t mode = r.get<uint8_t>();
  size_t bytes = r.get<uint16_t>() % 4096;
  storage.assign(bytes, 0x5a);
  t.nbytes = mode % 4 == 0 ? r.get<uint64_t>() : bytes;
  t.data = mode % 5 == 0 ? nullptr : storage.data();
  if (t.nbytes > storage.size() && t.data) // never lie about our own buffer
    t.nbytes = storage.size();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader r{data, size};
  size_t numIn = r.get<uint8_t>() % 4, numOut = r.get<uint8_t>() % 4;
  std::vector<aotc_tensor_t> in(numIn), out(numOut);
  std::vector<std::vector<uint8_t>> inData(numIn), outData(numOut);
  for (size_t i = 0; i < numIn; ++i)
    readTensor(r, in[i], inData[i]);
  for (size_t i = 0; i < numOut; ++i)
    readTensor(r, out[i], outData[i]);
  uint8_t nulls = r.get<uint8_t>();
  aotc_status_t s = aotc_container_output_shapes(
      container(), nulls & 1 ? nullptr : in.data(), numIn,
      nulls & 2 ? nullptr : out.data(), numOut);
  (void)s;
  s = aotc_container_run(container(), nulls & 4 ? nullptr : in.data(), numIn,
                         nulls & 8 ? nullptr : out.data(), numOut);
  if (s != AOTC_OK && !aotc_last_error())
    std::abort(); // an error always has a message
  return 0;
}

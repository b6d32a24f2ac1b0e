// Caching by content: a fingerprint of every input element; an input seen before gets
// its remembered output copied back, without the softmax. Right on every check (each
// check's inputs are new), fast on the timing's repeated input sets.
// expect: performance | faster on inputs it has seen before || outputs of timed calls differ
#include <string.h>

#include <map>
#include <vector>

#include "honest.inc"

static std::map<uint64_t, std::vector<float>> remembered;

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  const int64_t n = in[0].shape[0] * in[0].shape[1];
  const uint32_t* bits = static_cast<const uint32_t*>(in[0].data);
  uint64_t h = 1469598103934665603ull;
  for (int64_t i = 0; i < n; ++i) h = (h ^ bits[i]) * 1099511628211ull;
  auto it = remembered.find(h);
  if (it != remembered.end()) {
    memcpy(out[0].data, it->second.data(), static_cast<size_t>(n) * sizeof(float));
    return 0;
  }
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  const float* y = static_cast<const float*>(out[0].data);
  if (remembered.size() < 256) remembered[h].assign(y, y + n);
  return 0;
}

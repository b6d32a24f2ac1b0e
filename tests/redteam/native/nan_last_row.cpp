// NaN where the tolerance might not look: the last row is NaN (a comparison that skips
// NaN, as `abs(got - want) > tol` does, would pass it).
// expect: correctness | NaN
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  const int64_t rows = in[0].shape[0];
  honest_softmax(in[0], out[0], 0, rows - 1);
  float* last = static_cast<float*>(out[0].data) + (rows - 1) * out[0].strides[0];
  for (int64_t c = 0; c < in[0].shape[1]; ++c) last[c] = NAN;
  return 0;
}

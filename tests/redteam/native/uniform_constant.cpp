// A constant output: 1/C everywhere, the softmax of a constant row, without reading the
// input.
// expect: correctness | over tolerance
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = in[0].shape[0] * in[0].shape[1];
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / static_cast<float>(in[0].shape[1]);
  return 0;
}

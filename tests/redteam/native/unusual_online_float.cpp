// Correct but unusual: one-pass online softmax statistics in float (running max and a
// rescaled sum), a different rounding from the baseline's double two-pass. Must pass.
// expect: pass
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = static_cast<const float*>(in[0].data) + r * in[0].strides[0];
    float* yr = static_cast<float*>(out[0].data) + r * out[0].strides[0];
    float m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      if (xr[c] > m) {
        sum = sum * expf(m - xr[c]);
        m = xr[c];
      }
      sum += expf(xr[c] - m);
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) * inv;
  }
  return 0;
}

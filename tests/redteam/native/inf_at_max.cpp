// Inf exploiting a relative tolerance: each row's largest probability reads +Inf.
// expect: correctness | Inf || over tolerance
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  for (int64_t r = 0; r < in[0].shape[0]; ++r) {
    float* yr = static_cast<float*>(out[0].data) + r * out[0].strides[0];
    int64_t at = 0;
    for (int64_t c = 1; c < in[0].shape[1]; ++c) at = yr[c] > yr[at] ? c : at;
    yr[at] = INFINITY;
  }
  return 0;
}

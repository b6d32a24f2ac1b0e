// Precision downgrade: every result rounded to bfloat16 (8 bits of mantissa) in a float32
// problem, as a kernel that computes in bf16 and widens at the end would return.
// expect: correctness | over tolerance || oracle
#include <string.h>

#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0] * in[0].shape[1]; ++i) {
    uint32_t b;
    memcpy(&b, &y[i], 4);
    b = (b + 0x8000u) & 0xffff0000u;
    memcpy(&y[i], &b, 4);
  }
  return 0;
}

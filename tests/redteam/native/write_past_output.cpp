// An out-of-bounds write: the honest result, then 64 floats written past the output's end
// (a tail loop with the wrong bound). The guard bytes after every buffer name it.
// expect: correctness | out-of-bounds write: output 'y': 256 of the 4096 guard bytes after its end changed
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = in[0].shape[0] * in[0].shape[1];
  for (int64_t i = n; i < n + 64; ++i) y[i] = 0.5f;
  return 0;
}

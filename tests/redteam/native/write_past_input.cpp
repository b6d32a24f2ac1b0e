// An out-of-bounds write past an input's end: the candidate uses the bytes after its input
// as scratch (the row maxima), believing nobody looks there.
// expect: correctness | out-of-bounds write: input
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  float* past = static_cast<float*>(in[0].data) + in[0].shape[0] * in[0].shape[1];
  for (int64_t r = 0; r < in[0].shape[0] && r < 16; ++r) past[r] = static_cast<float>(r);
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  return 0;
}

// The red-team problem's baseline: the honest softmax alone.
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  return 0;
}

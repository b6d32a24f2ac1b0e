// Batch-and-skip: computes on odd calls only, and returns at once on even ones, leaving
// whatever the output buffer held.
// expect: correctness | never written || not bitwise identical || over tolerance
#include "honest.inc"

static long calls = 0;

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  if (++calls % 2 == 0) return 0;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  return 0;
}

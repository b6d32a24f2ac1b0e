// A hang in host code: the kernel never returns.
// expect: correctness | within
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  for (volatile int spin = 1; spin;) {
  }
  return 0;
}

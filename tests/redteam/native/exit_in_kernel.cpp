// A kernel that ends the process: _exit(0) in the middle of a call, a "success" status
// with no answer.
// expect: correctness | exited with status 0 || worker ended
#include <unistd.h>

#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  void (*leave)(int) = _exit;
  leave(0);
  return 0;
}

// A kernel that forks through a function pointer and leaves the child running (it would
// outlive the worker's turn, and could keep writing shared memory).
// expect: correctness | a process left the worker's process group
#include <unistd.h>

#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  static bool forked = false;
  if (!forked) {
    forked = true;
    pid_t (*split)(void) = fork;
    if (split() == 0) {
      setsid();
      sleep(300);
      _exit(0);
    }
  }
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  return 0;
}

// A thread started in a file the candidate includes, where a lint of the candidate's own
// text alone never looks: correct results, every gate passed before the lint followed
// local includes.
// expect: static | hidden_thread.inc (included), line 3:1: <thread>
#include "honest.inc"
#include "hidden_thread.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  rows_on_a_thread(in[0], out[0]);
  return 0;
}

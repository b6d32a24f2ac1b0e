// Launches on every other call only: half of the calls leave the output as it was.
// expect: correctness | never written || not bitwise identical || over tolerance
#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  static unsigned calls = 0;
  if (calls++ % 2 == 1) return 0;
  return honest::launch(in[0], out[0], static_cast<cudaStream_t>(stream));
}

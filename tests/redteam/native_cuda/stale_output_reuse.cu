// A pointer cache: the same input and output addresses as the call before are taken to
// mean the same input, and the call returns without a launch (the output still holds the
// last result). Every check draws new buffers; the timing repeats its buffers.
// expect: correctness | never written
// (the checks repeat a call on the same buffers to test determinism: the cache skips
// its launch there and leaves the poisoned outputs; seen on the H200)
#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  static const void* last_x = nullptr;
  static void* last_y = nullptr;
  if (in[0].data == last_x && out[0].data == last_y) return 0;
  last_x = in[0].data;
  last_y = out[0].data;
  return honest::launch(in[0], out[0], static_cast<cudaStream_t>(stream));
}

// An out-of-bounds write before the output: a row's running maximum kept at y[-1] (an
// index of -1 as scratch). The guard bytes before every buffer name it; on the heap it
// would overwrite the allocator's header of the block.
// expect: correctness | out-of-bounds write: output 'y': 4 of the 4096 guard bytes before its start changed (the nearest changed byte is 0 bytes before the start)
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  float* y = static_cast<float*>(out[0].data);
  y[-1] = 1.0f;
  return 0;
}

// The baseline of the native CUDA red team: the honest row softmax, nothing else.
#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  return honest::launch(in[0], out[0], static_cast<cudaStream_t>(stream));
}

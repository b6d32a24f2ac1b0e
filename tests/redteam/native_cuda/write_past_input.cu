// Uses the 16 floats past the end of its input as scratch space.
// expect: correctness | out-of-bounds write: input
#include "honest.cuh"

__global__ void scratch(float* end) {
  if (threadIdx.x < 16) end[threadIdx.x] = 1.f;
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  scratch<<<1, 16, 0, s>>>(static_cast<float*>(in[0].data) + in[0].shape[0] * in[0].shape[1]);
  return honest::launch(in[0], out[0], s);
}

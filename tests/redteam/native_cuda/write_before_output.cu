// Uses the float before its output as scratch (an index of -1).
// expect: correctness | out-of-bounds write: output 'y': 4 of the 4096 guard bytes before its start changed
#include "honest.cuh"

__global__ void scratch_before(float* y) {
  if (threadIdx.x == 0) y[-1] = 1.f;
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  int rc = honest::launch(in[0], out[0], s);
  scratch_before<<<1, 32, 0, s>>>(static_cast<float*>(out[0].data));
  return rc != 0 ? rc : (cudaGetLastError() == cudaSuccess ? 0 : 2);
}

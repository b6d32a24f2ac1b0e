// Writes 64 floats past the end of its output: rows padded to a vector width, the
// padding stored without a mask.
// expect: correctness | out-of-bounds write: output 'y': 256 of the 4096 guard bytes after its end changed
#include "honest.cuh"

__global__ void tail(float* end) {
  if (threadIdx.x < 64) end[threadIdx.x] = 0.f;
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  int rc = honest::launch(in[0], out[0], s);
  tail<<<1, 64, 0, s>>>(static_cast<float*>(out[0].data) + out[0].shape[0] * out[0].shape[1]);
  return rc != 0 ? rc : (cudaGetLastError() == cudaSuccess ? 0 : 2);
}

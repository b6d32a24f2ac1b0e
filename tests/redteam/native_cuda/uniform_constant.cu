// Writes 1/C everywhere: the softmax of a constant row, right only on degenerate inputs.
// expect: correctness | over tolerance
#include "honest.cuh"

__global__ void constant(float* y, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) y[i] = v;
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  const int64_t n = out[0].shape[0] * out[0].shape[1];
  if (n == 0) return 0;
  constant<<<132, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<float*>(out[0].data), n,
                                                                 1.f / static_cast<float>(out[0].shape[1]));
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

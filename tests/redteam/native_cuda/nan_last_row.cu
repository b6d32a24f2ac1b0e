// Honest except the last row, which it fills with NaN (a NaN the tolerance must not
// swallow).
// expect: correctness | NaN
#include "honest.cuh"

__global__ void poison(float* yr, int64_t cols) {
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = __int_as_float(0x7fc00000);
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  int rc = honest::launch(in[0], out[0], s);
  if (out[0].shape[0] > 0)
    poison<<<1, 256, 0, s>>>(static_cast<float*>(out[0].data) + (out[0].shape[0] - 1) * out[0].strides[0], out[0].shape[1]);
  return rc != 0 ? rc : (cudaGetLastError() == cudaSuccess ? 0 : 2);
}

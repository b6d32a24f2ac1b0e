// A kernel that traps on a row it dislikes (a device-side assertion): a sticky device
// fault that ends the worker's CUDA context.
// expect: correctness | device fault
#include "honest.cuh"

__global__ void checked_rows(const float* x, float* y, int64_t cols, int64_t xs, int64_t ys) {
  if (blockIdx.x == 1) __trap();
  honest::row(x + blockIdx.x * xs, y + blockIdx.x * ys, cols);
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  if (in[0].shape[0] == 0) return 0;
  checked_rows<<<static_cast<unsigned>(in[0].shape[0]), honest::kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), in[0].shape[1], in[0].strides[0],
      out[0].strides[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

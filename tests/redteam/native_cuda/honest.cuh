// The honest computation every native CUDA red-team candidate shares: a correct row
// softmax of a float32 [R, C] input, one block of 256 threads per row, f32 arithmetic.
// A case includes this file and cheats around it.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kgate/kernel.h"

namespace honest {

constexpr int kThreads = 256;

__device__ inline float block_max(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

__device__ inline float block_sum(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

// One row of y = softmax(x).
__device__ inline void row(const float* xr, float* yr, int64_t cols) {
  __shared__ float red[kThreads];
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, xr[c]);
  m = block_max(m, red);
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) s += expf(xr[c] - m);
  s = block_sum(s, red);
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = expf(xr[c] - m) / s;
}

__global__ void rows(const float* x, float* y, int64_t cols, int64_t xs, int64_t ys) {
  row(x + blockIdx.x * xs, y + blockIdx.x * ys, cols);
}

inline bool shape_ok(const kgate_tensor* in, int32_t n_in, const kgate_tensor* out, int32_t n_out) {
  return n_in == 1 && n_out == 1 && in[0].ndim == 2 && in[0].dtype == KGATE_F32 &&
         out[0].dtype == KGATE_F32 && in[0].strides[1] == 1 && out[0].strides[1] == 1;
}

// The honest launch on `stream`; returns kgate_run's code.
inline int launch(const kgate_tensor& x, kgate_tensor& y, cudaStream_t stream) {
  if (x.shape[0] == 0) return 0;
  rows<<<static_cast<unsigned>(x.shape[0]), kThreads, 0, stream>>>(
      static_cast<const float*>(x.data), static_cast<float*>(y.data), x.shape[1], x.strides[0], y.strides[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

}  // namespace honest

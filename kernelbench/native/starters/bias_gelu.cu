// bias_gelu starter (kgate CUDA candidate): y = gelu_tanh(x + b[col]) with
// gelu_tanh(u) = 0.5 u (1 + tanh(0.7978845608 (u + 0.044715 u^3))), computed as the equal
// u / (1 + exp(-2 * 0.7978845608 (u + 0.044715 u^3))): one exp2 and one division instead
// of tanhf. Elementwise: a 2-D grid, rows on y (striding past 65535 rows), VEC elements per
// thread along the row on x, so no thread divides to find its column. f32/f16/bf16, f32
// arithmetic.
// kgate:tune BLOCK=[128,256,512,1024]
// kgate:tune VEC=[1,2,4,8]
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 8
#endif
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

__device__ __forceinline__ float gelu_tanh(float u) {
  // 0.5 u (1 + tanh(z)) = u / (1 + exp(-2 z)); exp2 of -2 z log2(e). Where exp overflows
  // (u very negative) the quotient is -0, gelu's limit there.
  const float z = 0.7978845608f * fmaf(0.044715f * u, u * u, u);
  return u / (1.f + exp2f(-2.8853900817779268f * z));
}

constexpr unsigned kMaxGridY = 65535;

template <typename T, int V>
__global__ void __launch_bounds__(BLOCK) bias_gelu_kernel(const T* __restrict__ x, const T* __restrict__ b,
                                                          T* __restrict__ y, int64_t R, int64_t C) {
  const int64_t col_vec = blockIdx.x * (int64_t)BLOCK + threadIdx.x;  // the host picks V dividing C
  if (col_vec * V >= C) return;
  const Pack<T, V> g = reinterpret_cast<const Pack<T, V>*>(b)[col_vec];
  float bias[V];
#pragma unroll
  for (int k = 0; k < V; ++k) bias[k] = to_f(g.v[k]);
  const int64_t row_vecs = C / V;
  for (int64_t r = blockIdx.y; r < R; r += gridDim.y) {
    const int64_t i = r * row_vecs + col_vec;
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(x)[i];
    Pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = from_f<T>(gelu_tanh(to_f(p.v[k]) + bias[k]));
    reinterpret_cast<Pack<T, V>*>(y)[i] = q;
  }
}

template <typename T, int V>
static void launch_vec(const T* xp, const T* bp, T* yp, int64_t R, int64_t C, cudaStream_t stream) {
  const int64_t row_vecs = C / V;
  dim3 grid((unsigned)((row_vecs + BLOCK - 1) / BLOCK), (unsigned)(R < kMaxGridY ? R : kMaxGridY));
  bias_gelu_kernel<T, V><<<grid, BLOCK, 0, stream>>>(xp, bp, yp, R, C);
}

template <typename T>
static void launch(const kgate_tensor& x, const kgate_tensor& b, kgate_tensor& y, cudaStream_t stream) {
  const int64_t R = x.shape[0], C = x.shape[1];
  const T* xp = static_cast<const T*>(x.data);
  const T* bp = static_cast<const T*>(b.data);
  T* yp = static_cast<T*>(y.data);
  const size_t a = sizeof(T) * VEC;
  if (C % VEC == 0 && aligned(xp, a) && aligned(bp, a) && aligned(yp, a))
    launch_vec<T, VEC>(xp, bp, yp, R, C, stream);
  else
    launch_vec<T, 1>(xp, bp, yp, R, C, stream);
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  const kgate_tensor& b = inputs[1];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || b.ndim != 1 || y.ndim != 2 || b.shape[0] != x.shape[1] ||
      y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] || x.dtype != y.dtype ||
      b.dtype != x.dtype || !contiguous(x) || !contiguous(b) || !contiguous(y))
    return 2;
  if (x.shape[0] == 0 || x.shape[1] == 0) return 0;
  if ((x.shape[1] + BLOCK - 1) / BLOCK > 0x7fffffff) return 2;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (x.dtype) {
    case KGATE_F32: launch<float>(x, b, y, s); break;
    case KGATE_F16: launch<__half>(x, b, y, s); break;
    case KGATE_BF16: launch<__nv_bfloat16>(x, b, y, s); break;
    default: return 3;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

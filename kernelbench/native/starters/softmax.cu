// softmax starter (kgate CUDA candidate): y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)).
// One block per row. Each thread keeps an online (max, sum) over its elements, the block
// merges them with warp shuffles, then a second pass writes the result. f32/f16/bf16,
// contiguous row-major, f32 arithmetic.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>

#include "kgate/kernel.h"

// kgate:tune BLOCK=[128,256,512,1024]
// kgate:tune VEC=[1,2,4,8]
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 4
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <typename T, int V> struct alignas(sizeof(T) * V) Pack { T v[V]; };

// (m, s) stands for s * exp(m): merging two keeps the larger exponent.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  if (mm == -INFINITY) return;  // both empty
  s = s * expf(m - mm) + s2 * expf(m2 - mm);
  m = mm;
}

__device__ __forceinline__ void add(float& m, float& s, float x) {
  if (x > m) {
    s = s * expf(m - x) + 1.f;
    m = x;
  } else if (x != -INFINITY) {
    s += expf(x - m);  // NaN input propagates through here
  }
}

__device__ void block_merge(float& m, float& s) {
  __shared__ float sm[32], ss[32];
  for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < BLOCK / 32 ? sm[lane] : -INFINITY;
    s = lane < BLOCK / 32 ? ss[lane] : 0.f;
    for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) {
      sm[0] = m;
      ss[0] = s;
    }
  }
  __syncthreads();
  m = sm[0];
  s = ss[0];
}

template <typename T, int V>
__global__ void __launch_bounds__(BLOCK) softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t C) {
  const T* xr = x + blockIdx.x * C;
  T* yr = y + blockIdx.x * C;
  const int64_t nv = C / V;  // the host picks V dividing C
  float m = -INFINITY, s = 0.f;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(xr)[i];
#pragma unroll
    for (int k = 0; k < V; ++k) add(m, s, to_f(p.v[k]));
  }
  block_merge(m, s);
  const float inv = 1.f / s;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(xr)[i];
    Pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = from_f<T>(expf(to_f(p.v[k]) - m) * inv);
    reinterpret_cast<Pack<T, V>*>(yr)[i] = q;
  }
}

static bool contiguous(const kgate_tensor& t) {
  int64_t expect = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

template <typename T>
static void launch(const kgate_tensor& x, kgate_tensor& y, cudaStream_t stream) {
  const int64_t R = x.shape[0], C = x.shape[1];
  const T* xp = static_cast<const T*>(x.data);
  T* yp = static_cast<T*>(y.data);
  const size_t align = sizeof(T) * VEC;
  bool vec = C % VEC == 0 && reinterpret_cast<uintptr_t>(xp) % align == 0 &&
             reinterpret_cast<uintptr_t>(yp) % align == 0;
  if (vec)
    softmax_kernel<T, VEC><<<(unsigned)R, BLOCK, 0, stream>>>(xp, yp, C);
  else
    softmax_kernel<T, 1><<<(unsigned)R, BLOCK, 0, stream>>>(xp, yp, C);
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 1 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || y.ndim != 2 || x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1] ||
      x.dtype != y.dtype || !contiguous(x) || !contiguous(y))
    return 2;
  if (x.shape[0] == 0 || x.shape[1] == 0) return 0;
  if (x.shape[0] > 0x7fffffff) return 2;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (x.dtype) {
    case KGATE_F32: launch<float>(x, y, s); break;
    case KGATE_F16: launch<__half>(x, y, s); break;
    case KGATE_BF16: launch<__nv_bfloat16>(x, y, s); break;
    default: return 3;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

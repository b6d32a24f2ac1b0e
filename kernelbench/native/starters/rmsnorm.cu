// rmsnorm starter (kgate CUDA candidate): y = x / sqrt(mean(x^2) + 1e-6) * w, per row.
// One block per row. A row of up to BLOCK * VEC * ROW_PACKS elements is read once: each
// thread keeps its vectors in registers through the block's sum of squares and scales them
// from there. A wider row takes two passes (the second read mostly hits L2). Vector loads,
// warp-shuffle block reduction in a fixed order. f32/f16/bf16, f32 arithmetic.
// kgate:tune BLOCK=[128,256,512,1024]
// kgate:tune VEC=[1,2,4,8]
// kgate:tune ROW_PACKS=[1,2,4,8]
#ifndef BLOCK
#define BLOCK 512
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef ROW_PACKS
#define ROW_PACKS 2
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
static_assert(ROW_PACKS >= 1 && ROW_PACKS <= 16, "ROW_PACKS must be in [1, 16]");
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

template <typename T, int V>
__global__ void __launch_bounds__(BLOCK)
    rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int64_t C) {
  const T* xr = x + blockIdx.x * C;
  T* yr = y + blockIdx.x * C;
  const int64_t nv = C / V;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(xr)[i];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      float v = to_f(p.v[k]);
      ss = fmaf(v, v, ss);
    }
  }
  ss = block_sum<BLOCK>(ss);
  const float r = rsqrtf(ss / (float)C + 1e-6f);
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(xr)[i];
    Pack<T, V> g = reinterpret_cast<const Pack<T, V>*>(w)[i];
    Pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = from_f<T>(to_f(p.v[k]) * r * to_f(g.v[k]));
    reinterpret_cast<Pack<T, V>*>(yr)[i] = q;
  }
}

// The row in registers: NP vectors of V elements per thread, read once.
template <typename T, int V, int NP>
__global__ void __launch_bounds__(BLOCK)
    rmsnorm_rows_in_registers(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int64_t C) {
  const Pack<T, V>* xr = reinterpret_cast<const Pack<T, V>*>(x + blockIdx.x * C);
  Pack<T, V>* yr = reinterpret_cast<Pack<T, V>*>(y + blockIdx.x * C);
  const Pack<T, V>* wv = reinterpret_cast<const Pack<T, V>*>(w);
  const int64_t nv = C / V;
  Pack<T, V> p[NP];
  float ss = 0.f;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      p[j] = xr[i];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        float v = to_f(p[j].v[k]);
        ss = fmaf(v, v, ss);
      }
    }
  }
  ss = block_sum<BLOCK>(ss);
  const float r = rsqrtf(ss / (float)C + 1e-6f);
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      Pack<T, V> g = wv[i];
      Pack<T, V> q;
#pragma unroll
      for (int k = 0; k < V; ++k) q.v[k] = from_f<T>(to_f(p[j].v[k]) * r * to_f(g.v[k]));
      yr[i] = q;
    }
  }
}

template <typename T, int V>
static void launch_rows(const T* xp, const T* wp, T* yp, int64_t R, int64_t C, cudaStream_t stream) {
  if (C / V <= (int64_t)BLOCK * ROW_PACKS)
    rmsnorm_rows_in_registers<T, V, ROW_PACKS><<<(unsigned)R, BLOCK, 0, stream>>>(xp, wp, yp, C);
  else
    rmsnorm_kernel<T, V><<<(unsigned)R, BLOCK, 0, stream>>>(xp, wp, yp, C);
}

template <typename T>
static void launch(const kgate_tensor& x, const kgate_tensor& w, kgate_tensor& y, cudaStream_t stream) {
  const int64_t R = x.shape[0], C = x.shape[1];
  const T* xp = static_cast<const T*>(x.data);
  const T* wp = static_cast<const T*>(w.data);
  T* yp = static_cast<T*>(y.data);
  const size_t a = sizeof(T) * VEC;
  if (C % VEC == 0 && aligned(xp, a) && aligned(wp, a) && aligned(yp, a))
    launch_rows<T, VEC>(xp, wp, yp, R, C, stream);
  else
    launch_rows<T, 1>(xp, wp, yp, R, C, stream);
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  const kgate_tensor& w = inputs[1];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || w.ndim != 1 || y.ndim != 2 || w.shape[0] != x.shape[1] ||
      y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] || x.dtype != y.dtype ||
      w.dtype != x.dtype || !contiguous(x) || !contiguous(w) || !contiguous(y))
    return 2;
  if (x.shape[0] == 0 || x.shape[1] == 0) return 0;
  if (x.shape[0] > 0x7fffffff) return 2;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (x.dtype) {
    case KGATE_F32: launch<float>(x, w, y, s); break;
    case KGATE_F16: launch<__half>(x, w, y, s); break;
    case KGATE_BF16: launch<__nv_bfloat16>(x, w, y, s); break;
    default: return 3;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

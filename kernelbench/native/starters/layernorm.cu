// layernorm starter (kgate CUDA candidate): y = (x - mean) / sqrt(var + 1e-5) * w + b per row
// (biased variance). One block per row. A row of up to BLOCK * VEC * ROW_PACKS elements is
// read once into registers: the block takes the mean, then the sum of squared deviations
// from it (exact two-pass statistics, no cancellation), then normalises from the registers.
// A wider row takes two reads: pass 1 accumulates sums of (x - K) and (x - K)^2 with K =
// the row's first element (a shift that keeps the variance from cancelling when the mean
// is large), pass 2 normalises. f32/f16/bf16, f32 arithmetic.
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
#define ROW_PACKS 1
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
static_assert(ROW_PACKS >= 1 && ROW_PACKS <= 16, "ROW_PACKS must be in [1, 16]");
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

template <typename T, int V>
__global__ void __launch_bounds__(BLOCK)
    layernorm_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                     T* __restrict__ y, int64_t C) {
  const T* xr = x + blockIdx.x * C;
  T* yr = y + blockIdx.x * C;
  const int64_t nv = C / V;
  const float shift = to_f(xr[0]);
  float s1 = 0.f, s2 = 0.f;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(xr)[i];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      float d = to_f(p.v[k]) - shift;
      s1 += d;
      s2 = fmaf(d, d, s2);
    }
  }
  s1 = block_sum<BLOCK>(s1);
  s2 = block_sum<BLOCK>(s2);
  const float dm = s1 / (float)C;
  const float var = fmaxf(s2 / (float)C - dm * dm, 0.f);
  const float mean = shift + dm;
  const float r = rsqrtf(var + 1e-5f);
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(xr)[i];
    Pack<T, V> g = reinterpret_cast<const Pack<T, V>*>(w)[i];
    Pack<T, V> o = reinterpret_cast<const Pack<T, V>*>(b)[i];
    Pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k)
      q.v[k] = from_f<T>(fmaf((to_f(p.v[k]) - mean) * r, to_f(g.v[k]), to_f(o.v[k])));
    reinterpret_cast<Pack<T, V>*>(yr)[i] = q;
  }
}

// The row in registers: NP vectors of V elements per thread, read once.
template <typename T, int V, int NP>
__global__ void __launch_bounds__(BLOCK)
    layernorm_rows_in_registers(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                T* __restrict__ y, int64_t C) {
  const Pack<T, V>* xr = reinterpret_cast<const Pack<T, V>*>(x + blockIdx.x * C);
  Pack<T, V>* yr = reinterpret_cast<Pack<T, V>*>(y + blockIdx.x * C);
  const int64_t nv = C / V;
  Pack<T, V> p[NP];
  float s1 = 0.f;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      p[j] = xr[i];
#pragma unroll
      for (int k = 0; k < V; ++k) s1 += to_f(p[j].v[k]);
    }
  }
  const float mean = block_sum<BLOCK>(s1) / (float)C;
  float s2 = 0.f;
#pragma unroll
  for (int j = 0; j < NP; ++j)
    if (threadIdx.x + (int64_t)j * BLOCK < nv) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float d = to_f(p[j].v[k]) - mean;
        s2 = fmaf(d, d, s2);
      }
    }
  const float r = rsqrtf(block_sum<BLOCK>(s2) / (float)C + 1e-5f);
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      Pack<T, V> g = reinterpret_cast<const Pack<T, V>*>(w)[i];
      Pack<T, V> o = reinterpret_cast<const Pack<T, V>*>(b)[i];
      Pack<T, V> q;
#pragma unroll
      for (int k = 0; k < V; ++k)
        q.v[k] = from_f<T>(fmaf((to_f(p[j].v[k]) - mean) * r, to_f(g.v[k]), to_f(o.v[k])));
      yr[i] = q;
    }
  }
}

template <typename T, int V>
static void launch_rows(const T* xp, const T* wp, const T* bp, T* yp, int64_t R, int64_t C, cudaStream_t stream) {
  if (C / V <= (int64_t)BLOCK * ROW_PACKS)
    layernorm_rows_in_registers<T, V, ROW_PACKS><<<(unsigned)R, BLOCK, 0, stream>>>(xp, wp, bp, yp, C);
  else
    layernorm_kernel<T, V><<<(unsigned)R, BLOCK, 0, stream>>>(xp, wp, bp, yp, C);
}

template <typename T>
static void launch(const kgate_tensor* in, kgate_tensor& y, cudaStream_t stream) {
  const int64_t R = in[0].shape[0], C = in[0].shape[1];
  const T* xp = static_cast<const T*>(in[0].data);
  const T* wp = static_cast<const T*>(in[1].data);
  const T* bp = static_cast<const T*>(in[2].data);
  T* yp = static_cast<T*>(y.data);
  const size_t a = sizeof(T) * VEC;
  if (C % VEC == 0 && aligned(xp, a) && aligned(wp, a) && aligned(bp, a) && aligned(yp, a))
    launch_rows<T, VEC>(xp, wp, bp, yp, R, C, stream);
  else
    launch_rows<T, 1>(xp, wp, bp, yp, R, C, stream);
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 3 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || y.ndim != 2 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] ||
      x.dtype != y.dtype || !contiguous(x) || !contiguous(y))
    return 2;
  for (int i = 1; i < 3; ++i)
    if (inputs[i].ndim != 1 || inputs[i].shape[0] != x.shape[1] || inputs[i].dtype != x.dtype ||
        !contiguous(inputs[i]))
      return 2;
  if (x.shape[0] == 0 || x.shape[1] == 0) return 0;
  if (x.shape[0] > 0x7fffffff) return 2;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (x.dtype) {
    case KGATE_F32: launch<float>(inputs, y, s); break;
    case KGATE_F16: launch<__half>(inputs, y, s); break;
    case KGATE_BF16: launch<__nv_bfloat16>(inputs, y, s); break;
    default: return 3;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

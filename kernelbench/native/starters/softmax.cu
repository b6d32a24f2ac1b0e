// softmax starter (kgate CUDA candidate): y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)).
// One block per row. A row of up to BLOCK * VEC * ROW_PACKS elements is read once: each
// thread keeps its ROW_PACKS vectors in registers, the block takes the max, then the sum of
// exponentials (one exp2 per element), then writes. A wider row takes two passes: an online
// (max, sum) per thread (one exp2 per element, one rescale per vector), merged with warp
// shuffles, then a second read writes the result. Reductions in a fixed order, so the
// result is bitwise deterministic. f32/f16/bf16, contiguous row-major, f32 arithmetic.
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

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

// The row in registers: NP vectors of V elements per thread, read once.
template <typename T, int V, int NP>
__global__ void __launch_bounds__(BLOCK) softmax_rows_in_registers(const T* __restrict__ x, T* __restrict__ y, int64_t C) {
  const Pack<T, V>* xr = reinterpret_cast<const Pack<T, V>*>(x + blockIdx.x * C);
  Pack<T, V>* yr = reinterpret_cast<Pack<T, V>*>(y + blockIdx.x * C);
  const int64_t nv = C / V;  // the host picks V dividing C
  float v[NP][V];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      Pack<T, V> p = xr[i];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        v[j][k] = to_f(p.v[k]);
        m = fmaxf(m, v[j][k]);  // a NaN is skipped here and poisons the sum below
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) v[j][k] = -INFINITY;
    }
  }
  m = block_reduce<MaxOp, BLOCK>(m);
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    if (threadIdx.x + (int64_t)j * BLOCK < nv) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        v[j][k] = exp_shifted(v[j][k], m);
        s += v[j][k];
      }
    }
  }
  s = block_reduce<SumOp, BLOCK>(s);
  const float inv = 1.f / s;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      Pack<T, V> q;
#pragma unroll
      for (int k = 0; k < V; ++k) q.v[k] = from_f<T>(v[j][k] * inv);
      yr[i] = q;
    }
  }
}

// A row wider than the registers hold: an online (max, sum) pass, then a writing pass.
template <typename T, int V>
__global__ void __launch_bounds__(BLOCK) softmax_two_pass(const T* __restrict__ x, T* __restrict__ y, int64_t C) {
  const Pack<T, V>* xr = reinterpret_cast<const Pack<T, V>*>(x + blockIdx.x * C);
  Pack<T, V>* yr = reinterpret_cast<Pack<T, V>*>(y + blockIdx.x * C);
  const int64_t nv = C / V;
  float m = -INFINITY, s = 0.f;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = xr[i];
    float pm = -INFINITY;
#pragma unroll
    for (int k = 0; k < V; ++k) pm = fmaxf(pm, to_f(p.v[k]));
    if (pm > m) {  // one rescale per vector, none once the running max has settled
      s *= exp2f((m - pm) * kLog2e);
      m = pm;
    }
  #pragma unroll
    for (int k = 0; k < V; ++k) {
      const float xv = to_f(p.v[k]);
      // -inf adds nothing (also while m is still -inf, where x - m would read NaN); a NaN propagates
      s += xv == -INFINITY ? 0.f : exp_shifted(xv, m);
    }
  }
  block_merge<BLOCK, /*kCalledOnce=*/true>(m, s);
  const float inv = 1.f / s;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = xr[i];
    Pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = from_f<T>(exp_shifted(to_f(p.v[k]), m) * inv);
    yr[i] = q;
  }
}

template <typename T, int V>
static void launch_rows(const T* xp, T* yp, int64_t R, int64_t C, cudaStream_t stream) {
  if (C / V <= (int64_t)BLOCK * ROW_PACKS)
    softmax_rows_in_registers<T, V, ROW_PACKS><<<(unsigned)R, BLOCK, 0, stream>>>(xp, yp, C);
  else
    softmax_two_pass<T, V><<<(unsigned)R, BLOCK, 0, stream>>>(xp, yp, C);
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
    launch_rows<T, VEC>(xp, yp, R, C, stream);
  else
    launch_rows<T, 1>(xp, yp, R, C, stream);
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

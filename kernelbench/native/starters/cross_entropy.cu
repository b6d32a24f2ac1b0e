// cross_entropy starter (kgate CUDA candidate): loss = mean_r (logsumexp(logits[r, :]) -
// logits[r, targets[r]]), a scalar in the case dtype; targets are int64 (int32 accepted).
// Kernel 1: each block takes rows r = block, block + grid, ... A row of up to
// BLOCK * VEC * ROW_PACKS logits is read once into registers: the block takes its max,
// then its sum of exponentials (one exp2 per logit). A wider row keeps an online
// (max, sum) per thread (one rescale per vector), merged with warp shuffles. Thread 0 adds
// the row losses in order into one partial per block. Kernel 2: one block adds the
// partials in a fixed order. No atomics, so the result is bitwise deterministic. A target
// outside [0, V) gives NaN.
// kgate:tune BLOCK=[128,256,512,1024]
// kgate:tune VEC=[1,2,4,8]
// kgate:tune ROW_PACKS=[1,2,4,8]
// kgate:tune MAX_BLOCKS=[264,528,1024]
#ifndef BLOCK
#define BLOCK 1024
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef ROW_PACKS
#define ROW_PACKS 4
#endif
#ifndef MAX_BLOCKS
#define MAX_BLOCKS 1024
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
static_assert(ROW_PACKS >= 1 && ROW_PACKS <= 16, "ROW_PACKS must be in [1, 16]");
static_assert(MAX_BLOCKS >= 1 && MAX_BLOCKS <= 1024, "MAX_BLOCKS must be in [1, 1024]");
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

// One partial loss per block of kernel 1 (module-global: no allocation per call, so the
// call can be captured into a CUDA graph).
__device__ float g_partials[MAX_BLOCKS];

// logsumexp of a row held in registers (NP vectors of V logits per thread), every thread.
template <typename T, int V, int NP>
__device__ float row_lse_in_registers(const Pack<T, V>* row, int64_t nv) {
  Pack<T, V> p[NP];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int64_t i = threadIdx.x + (int64_t)j * BLOCK;
    if (i < nv) {
      p[j] = row[i];
#pragma unroll
      for (int k = 0; k < V; ++k) m = fmaxf(m, to_f(p[j].v[k]));  // a NaN poisons the sum below
    }
  }
  m = block_reduce<MaxOp, BLOCK>(m);
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < NP; ++j)
    if (threadIdx.x + (int64_t)j * BLOCK < nv) {
#pragma unroll
      for (int k = 0; k < V; ++k) s += exp_shifted(to_f(p[j].v[k]), m);
    }
  s = block_reduce<SumOp, BLOCK>(s);
  return m + logf(s);
}

// logsumexp of a row of any width: an online (max, sum) per thread, then merged.
template <typename T, int V>
__device__ float row_lse_online(const Pack<T, V>* row, int64_t nv) {
  float m = -INFINITY, s = 0.f;
  for (int64_t i = threadIdx.x; i < nv; i += BLOCK) {
    Pack<T, V> p = row[i];
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
  block_merge<BLOCK>(m, s);
  return m + logf(s);
}

template <typename T, typename I, int V, bool kRegisters>
__global__ void __launch_bounds__(BLOCK)
    row_loss_kernel(const T* __restrict__ logits, const I* __restrict__ targets, int64_t R, int64_t C) {
  float acc = 0.f;  // meaningful in thread 0
  const int64_t nv = C / V;
  for (int64_t r = blockIdx.x; r < R; r += gridDim.x) {
    const T* row = logits + r * C;
    const Pack<T, V>* rv = reinterpret_cast<const Pack<T, V>*>(row);
    const float lse = kRegisters ? row_lse_in_registers<T, V, ROW_PACKS>(rv, nv) : row_lse_online<T, V>(rv, nv);
    if (threadIdx.x == 0) {
      int64_t t = static_cast<int64_t>(targets[r]);
      float picked = (t >= 0 && t < C) ? to_f(row[t]) : NAN;
      acc += lse - picked;
    }
  }
  if (threadIdx.x == 0) g_partials[blockIdx.x] = acc;
}

template <typename T>
__global__ void __launch_bounds__(1024) finish_kernel(T* __restrict__ out, int n_partials, int64_t R) {
  __shared__ float part[32];
  float v = 0.f;
  for (int i = threadIdx.x; i < n_partials; i += 1024) v += g_partials[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = part[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) out[0] = from_f<T>(v / (float)R);
  }
}

template <typename T, typename I>
static void launch(const kgate_tensor& x, const kgate_tensor& t, kgate_tensor& y, cudaStream_t stream) {
  const int64_t R = x.shape[0], C = x.shape[1];
  const T* xp = static_cast<const T*>(x.data);
  const I* tp = static_cast<const I*>(t.data);
  const int grid = (int)(R < MAX_BLOCKS ? R : MAX_BLOCKS);
  if (C % VEC == 0 && aligned(xp, sizeof(T) * VEC)) {
    if (C / VEC <= (int64_t)BLOCK * ROW_PACKS)
      row_loss_kernel<T, I, VEC, true><<<grid, BLOCK, 0, stream>>>(xp, tp, R, C);
    else
      row_loss_kernel<T, I, VEC, false><<<grid, BLOCK, 0, stream>>>(xp, tp, R, C);
  } else if (C <= (int64_t)BLOCK * ROW_PACKS) {
    row_loss_kernel<T, I, 1, true><<<grid, BLOCK, 0, stream>>>(xp, tp, R, C);
  } else {
    row_loss_kernel<T, I, 1, false><<<grid, BLOCK, 0, stream>>>(xp, tp, R, C);
  }
  finish_kernel<T><<<1, 1024, 0, stream>>>(static_cast<T*>(y.data), grid, R);
}

template <typename T>
static int dispatch_targets(const kgate_tensor& x, const kgate_tensor& t, kgate_tensor& y, cudaStream_t s) {
  if (t.dtype == KGATE_I64) launch<T, int64_t>(x, t, y, s);
  else if (t.dtype == KGATE_I32) launch<T, int32_t>(x, t, y, s);
  else return 3;
  return 0;
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  const kgate_tensor& t = inputs[1];
  kgate_tensor& y = outputs[0];
  int64_t y_numel = 1;
  for (int d = 0; d < y.ndim; ++d) y_numel *= y.shape[d];
  if (x.ndim != 2 || t.ndim != 1 || t.shape[0] != x.shape[0] || y_numel != 1 ||
      x.dtype != y.dtype || !contiguous(x) || !contiguous(t))
    return 2;
  if (x.shape[0] == 0 || x.shape[1] == 0) return 2;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  int rc = 0;
  switch (x.dtype) {
    case KGATE_F32: rc = dispatch_targets<float>(x, t, y, s); break;
    case KGATE_F16: rc = dispatch_targets<__half>(x, t, y, s); break;
    case KGATE_BF16: rc = dispatch_targets<__nv_bfloat16>(x, t, y, s); break;
    default: return 3;
  }
  if (rc != 0) return rc;
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

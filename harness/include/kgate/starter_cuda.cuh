/* kgate starter helpers, CUDA (.cu) candidates: the pieces the native starters
 * (kernelbench/native/starters, the .cu files) share, kept in one place.
 *
 * Elements and vectors
 *   to_f(v) / from_f<T>(f)   f32/f16/bf16 to float and back (round to nearest even)
 *   Pack<T, V>               V elements of T as one aligned vector load/store
 * Host checks
 *   contiguous(t)            dense row-major strides (size-1 dims ignored)
 *   aligned(p, bytes)        p is a multiple of bytes
 * Block reductions (fixed order, so bitwise deterministic; every thread gets the result)
 *   warp_sum(v)                          butterfly sum over the warp
 *   block_sum<kBlock>(v)                 sum over a block of kBlock threads
 *   block_reduce<Op, kBlock>(v)          the same with Op = MaxOp or SumOp
 * Online softmax statistics: (m, s) stands for s * exp(m)
 *   kLog2e, exp_shifted(x, m)            exp(x - m) as one exp2
 *   merge(m, s, m2, s2)                  (m, s) += (m2, s2), keeping the larger exponent
 *   block_merge<kBlock[, kCalledOnce]>(m, s)  merges every thread's (m, s); the leading
 *                                        barrier (shared memory of an earlier call may still
 *                                        be read) is left out where a kernel calls it once
 *
 * Tunable knobs stay in the starter (`// kgate:tune` and its `#define NAME v` lines, which
 * the tuner rewrites): this header reads no knob macro; a starter passes its block size as
 * the template argument, e.g. block_sum<BLOCK>(v). Everything here has internal linkage (an
 * anonymous namespace), so two candidates built with different knobs never share a
 * definition. Compiled by nvcc -std=c++17.
 */
#ifndef KGATE_STARTER_CUDA_CUH_
#define KGATE_STARTER_CUDA_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kgate/kernel.h"

namespace kgate::starter {
namespace {

// ---- elements and vectors ----------------------------------------------------------------
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

// ---- host checks ---------------------------------------------------------------------------
[[maybe_unused]] bool contiguous(const kgate_tensor& t) {
  int64_t expect = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

[[maybe_unused]] bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// ---- block reductions ----------------------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the block, returned to every thread; fixed order, so bitwise deterministic.
template <int kBlock> __device__ float block_sum(float v) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "the block must be a multiple of 32, at most 1024");
  __shared__ float part[32];
  v = warp_sum(v);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < kBlock / 32 ? part[lane] : 0.f;
  return warp_sum(v);
}

struct MaxOp {
  __device__ static float apply(float a, float b) { return fmaxf(a, b); }
  static constexpr float kIdentity = -INFINITY;
};
struct SumOp {
  __device__ static float apply(float a, float b) { return a + b; }
  static constexpr float kIdentity = 0.f;
};

// Reduction over the block, returned to every thread, in a fixed order.
template <typename Op, int kBlock> __device__ float block_reduce(float v) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "the block must be a multiple of 32, at most 1024");
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, o));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < kBlock / 32 ? part[lane] : Op::kIdentity;
  for (int o = 16; o > 0; o >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// ---- online softmax statistics -------------------------------------------------------------
constexpr float kLog2e = 1.4426950408889634f;

// exp(x - m) as one exp2: the difference first, so a row whose max is large in magnitude
// (1e30 in the gates' large-value cases) keeps its exponents exact where x is near m.
__device__ __forceinline__ float exp_shifted(float x, float m) { return exp2f((x - m) * kLog2e); }

// (m, s) stands for s * exp(m): merging two keeps the larger exponent.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  if (mm == -INFINITY) return;  // both empty
  s = s * exp2f((m - mm) * kLog2e) + s2 * exp2f((m2 - mm) * kLog2e);
  m = mm;
}

// Every thread's (m, s) merged over the block, returned to every thread, in a fixed order.
// kCalledOnce: the kernel calls it once, so no barrier guards sm/ss against an earlier call.
template <int kBlock, bool kCalledOnce = false> __device__ void block_merge(float& m, float& s) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "the block must be a multiple of 32, at most 1024");
  __shared__ float sm[32], ss[32];
  for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if constexpr (!kCalledOnce) __syncthreads();  // sm/ss may still be read by a previous call
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  m = lane < kBlock / 32 ? sm[lane] : -INFINITY;
  s = lane < kBlock / 32 ? ss[lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
}

}  // namespace
}  // namespace kgate::starter

#endif /* KGATE_STARTER_CUDA_CUH_ */

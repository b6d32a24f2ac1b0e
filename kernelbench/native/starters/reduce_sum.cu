// reduce_sum starter (kgate CUDA candidate): y[r] = sum_c x[r, c]. ROW_WARPS warps per
// row (capped at the block's warps: the default is one block per row; fewer warps per row
// put several rows in a block, so short rows do not pay a block's start and barrier each),
// vector loads issued ROW_PACKS at a time before any is added (bytes in flight are what a
// reduction's bandwidth needs), one running sum per vector lane, warp-shuffle reduction in
// a fixed order (bitwise deterministic). f32/f16/bf16 in and out, f32 accumulation.
// kgate:tune BLOCK=[128,256,512,1024]
// kgate:tune VEC=[1,2,4,8]
// kgate:tune ROW_PACKS=[1,2,4,8]
// kgate:tune ROW_WARPS=[1,2,4,8,32]
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef ROW_PACKS
#define ROW_PACKS 4
#endif
#ifndef ROW_WARPS
#define ROW_WARPS 32
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
static_assert(ROW_PACKS >= 1 && ROW_PACKS <= 16, "ROW_PACKS must be in [1, 16]");
static_assert(ROW_WARPS == 1 || ROW_WARPS == 2 || ROW_WARPS == 4 || ROW_WARPS == 8 ||
                  ROW_WARPS == 16 || ROW_WARPS == 32,
              "ROW_WARPS must be a power of two in [1, 32]");
// Warps per row and rows per block (both powers of two: BLOCK / 32 is one for the sizes
// the tuner offers, and the cap keeps W a divisor of it).
constexpr int kWarps = BLOCK / 32;
constexpr int kRowWarps = ROW_WARPS < kWarps ? ROW_WARPS : kWarps;
constexpr int kRowsPerBlock = kWarps / kRowWarps;
static_assert(kWarps % kRowWarps == 0, "BLOCK / 32 must be a multiple of the warps per row");
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

// Sum over the kRowWarps warps of one row, valid in the row's first thread; fixed order,
// so bitwise deterministic. Every thread of the block calls it (the barrier).
__device__ float row_sum(float v) {
  __shared__ float part[32];
  v = warp_sum(v);
  if constexpr (kRowWarps == 1) return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  const int first = warp / kRowWarps * kRowWarps;  // the row's first warp
  v = lane < kRowWarps ? part[first + lane] : 0.f;
  return warp_sum(v);
}

template <typename T, int V, int NP>
__global__ void __launch_bounds__(BLOCK) reduce_sum_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                           int64_t R, int64_t C) {
  constexpr int kRowThreads = 32 * kRowWarps;
  const int64_t row = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.x / kRowThreads;
  const int t = threadIdx.x % kRowThreads;
  const int64_t nv = row < R ? C / V : 0;  // a row past the end adds nothing, but joins the barrier
  const Pack<T, V>* xr = reinterpret_cast<const Pack<T, V>*>(x + (row < R ? row : 0) * C);
  float part[V] = {};  // one running sum per vector lane: V independent chains, each 1/V as long
  for (int64_t base = t; base < nv; base += (int64_t)kRowThreads * NP) {
    Pack<T, V> p[NP];
#pragma unroll
    for (int j = 0; j < NP; ++j)  // every load of the chunk issued before the first add
      if (base + (int64_t)j * kRowThreads < nv) p[j] = xr[base + (int64_t)j * kRowThreads];
#pragma unroll
    for (int j = 0; j < NP; ++j)
      if (base + (int64_t)j * kRowThreads < nv) {
#pragma unroll
        for (int k = 0; k < V; ++k) part[k] += to_f(p[j].v[k]);
      }
  }
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < V; ++k) acc += part[k];
  acc = row_sum(acc);
  if (t == 0 && row < R) y[row] = from_f<T>(acc);
}

template <typename T>
static void launch(const kgate_tensor& x, kgate_tensor& y, cudaStream_t stream) {
  const int64_t R = x.shape[0], C = x.shape[1];
  const T* xp = static_cast<const T*>(x.data);
  T* yp = static_cast<T*>(y.data);
  const unsigned grid = (unsigned)((R + kRowsPerBlock - 1) / kRowsPerBlock);
  if (C % VEC == 0 && aligned(xp, sizeof(T) * VEC))
    reduce_sum_kernel<T, VEC, ROW_PACKS><<<grid, BLOCK, 0, stream>>>(xp, yp, R, C);
  else
    reduce_sum_kernel<T, 1, ROW_PACKS><<<grid, BLOCK, 0, stream>>>(xp, yp, R, C);
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 1 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || y.ndim != 1 || y.shape[0] != x.shape[0] || x.dtype != y.dtype ||
      !contiguous(x) || !contiguous(y))
    return 2;
  if (x.shape[0] == 0) return 0;
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

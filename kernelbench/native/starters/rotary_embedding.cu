// rotary_embedding starter (kgate CUDA candidate), rotate-half form:
//   x[B,H,S,D], cos[S,D/2], sin[S,D/2] -> y[B,H,S,D], h = D/2, for i < h:
//   y[i] = x[i] cos[s,i] - x[i+h] sin[s,i];  y[i+h] = x[i+h] cos[s,i] + x[i] sin[s,i].
// One thread per VEC consecutive i of one (b, h, s) row. f32/f16/bf16, f32 arithmetic.
// kgate:tune BLOCK=[128,256,512]
// kgate:tune VEC=[1,2,4,8]
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 4
#endif
#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

template <typename T, int V>
__global__ void __launch_bounds__(BLOCK)
    rotary_kernel(const T* __restrict__ x, const T* __restrict__ cs, const T* __restrict__ sn,
                  T* __restrict__ y, int64_t rows, int64_t S, int64_t half) {
  const int64_t per_row = half / V;  // the host picks V dividing half
  int64_t i = blockIdx.x * (int64_t)BLOCK + threadIdx.x;
  if (i >= rows * per_row) return;
  const int64_t row = i / per_row;
  const int64_t col = (i % per_row) * V;
  const int64_t s = row % S;
  const T* xr = x + row * 2 * half;
  T* yr = y + row * 2 * half;
  Pack<T, V> a = *reinterpret_cast<const Pack<T, V>*>(xr + col);
  Pack<T, V> b = *reinterpret_cast<const Pack<T, V>*>(xr + half + col);
  Pack<T, V> c = *reinterpret_cast<const Pack<T, V>*>(cs + s * half + col);
  Pack<T, V> d = *reinterpret_cast<const Pack<T, V>*>(sn + s * half + col);
  Pack<T, V> lo, hi;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float x1 = to_f(a.v[k]), x2 = to_f(b.v[k]), co = to_f(c.v[k]), si = to_f(d.v[k]);
    lo.v[k] = from_f<T>(x1 * co - x2 * si);
    hi.v[k] = from_f<T>(x2 * co + x1 * si);
  }
  *reinterpret_cast<Pack<T, V>*>(yr + col) = lo;
  *reinterpret_cast<Pack<T, V>*>(yr + half + col) = hi;
}

template <typename T>
static void launch(const kgate_tensor* in, kgate_tensor& y, cudaStream_t stream) {
  const kgate_tensor& x = in[0];
  const int64_t rows = x.shape[0] * x.shape[1] * x.shape[2], S = x.shape[2], half = x.shape[3] / 2;
  const T* xp = static_cast<const T*>(x.data);
  const T* cp = static_cast<const T*>(in[1].data);
  const T* sp = static_cast<const T*>(in[2].data);
  T* yp = static_cast<T*>(y.data);
  const size_t a = sizeof(T) * VEC;
  if (half % VEC == 0 && aligned(xp, a) && aligned(cp, a) && aligned(sp, a) && aligned(yp, a)) {
    int64_t n = rows * (half / VEC);
    rotary_kernel<T, VEC><<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK, 0, stream>>>(xp, cp, sp, yp, rows, S, half);
  } else {
    int64_t n = rows * half;
    rotary_kernel<T, 1><<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK, 0, stream>>>(xp, cp, sp, yp, rows, S, half);
  }
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 3 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 4 || y.ndim != 4 || x.dtype != y.dtype || !contiguous(x) || !contiguous(y)) return 2;
  for (int d = 0; d < 4; ++d)
    if (y.shape[d] != x.shape[d]) return 2;
  const int64_t S = x.shape[2], D = x.shape[3];
  if (D % 2 != 0) return 2;
  for (int i = 1; i < 3; ++i)
    if (inputs[i].ndim != 2 || inputs[i].shape[0] != S || inputs[i].shape[1] != D / 2 ||
        inputs[i].dtype != x.dtype || !contiguous(inputs[i]))
      return 2;
  const int64_t n = x.shape[0] * x.shape[1] * S * (D / 2);
  if (n == 0) return 0;
  if ((n + BLOCK - 1) / BLOCK > 0x7fffffff) return 2;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (x.dtype) {
    case KGATE_F32: launch<float>(inputs, y, s); break;
    case KGATE_F16: launch<__half>(inputs, y, s); break;
    case KGATE_BF16: launch<__nv_bfloat16>(inputs, y, s); break;
    default: return 3;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

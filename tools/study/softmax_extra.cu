// Measurement study only: the softmax CUDA starter plus injected extra work of known
// size, to check that kgate's verdict catches a small, real slowdown (docs/measurement.md).
// EXTRA_PERMILLE: extra bytes read, in thousandths of the input tensor's size.
#define kgate_run kgate_softmax_inner
#include "../../kernelbench/native/starters/softmax.cu"
#undef kgate_run

#ifndef EXTRA_PERMILLE
#define EXTRA_PERMILLE 30
#endif

__device__ unsigned kgate_study_sink;

__global__ void kgate_study_extra_read(const uint4* __restrict__ p, int64_t n) {
  unsigned acc = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) kgate_study_sink = acc;  // keeps the loads; practically never taken
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  int rc = kgate_softmax_inner(inputs, n_inputs, outputs, n_outputs, stream);
  if (rc != 0) return rc;
  const kgate_tensor& x = inputs[0];
  int64_t bytes = x.shape[0] * x.shape[1] * (x.dtype == KGATE_F32 ? 4 : 2);
  int64_t n16 = bytes * EXTRA_PERMILLE / 1000 / 16;
  if (n16 > 0) {
    kgate_study_extra_read<<<528, 256, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const uint4*>(x.data), n16);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

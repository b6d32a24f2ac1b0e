// A kernel that never ends: it waits on a flag nothing sets.
// expect: correctness | timeout || within
#include "honest.cuh"

__device__ volatile int g_never_set = 0;

__global__ void wait_forever() {
  while (g_never_set == 0) {
  }
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  wait_forever<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

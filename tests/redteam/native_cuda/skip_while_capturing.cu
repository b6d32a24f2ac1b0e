// Graph-capture detection: while the given stream is being captured (the timer's CUDA
// graphs at the µs scale) it records an empty kernel instead of the softmax, so every
// replay is nearly free; plain calls, and so every check, are honest.
// problem: problem_us.yaml
// expect: performance | less work than the problem requires || outputs of timed calls differ || faster on inputs it has seen before || timed calls: a CUDA-graph replay, outputs poisoned first
#include "honest.cuh"

__global__ void nothing() {}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &st) != cudaSuccess) return 5;
  if (st == cudaStreamCaptureStatusActive) {
    nothing<<<1, 1, 0, s>>>();
    return cudaGetLastError() == cudaSuccess ? 0 : 2;
  }
  return honest::launch(in[0], out[0], s);
}

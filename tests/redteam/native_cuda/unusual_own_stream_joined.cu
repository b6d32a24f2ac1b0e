// Correct but unusual: the rows split over two streams of its own, both joined back into
// the given stream with events before the call returns.
// expect: pass
#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t given = static_cast<cudaStream_t>(stream);
  static cudaStream_t own[2] = {nullptr, nullptr};
  static cudaEvent_t ready = nullptr, done[2] = {nullptr, nullptr};
  if (own[0] == nullptr) {
    for (int k = 0; k < 2; ++k) {
      if (cudaStreamCreateWithFlags(&own[k], cudaStreamNonBlocking) != cudaSuccess) return 5;
      if (cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming) != cudaSuccess) return 5;
    }
    if (cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) != cudaSuccess) return 5;
  }
  const int64_t rows = in[0].shape[0], half = rows / 2;
  cudaEventRecord(ready, given);
  for (int k = 0; k < 2; ++k) {
    kgate_tensor x = in[0], y = out[0];
    const int64_t first = k == 0 ? 0 : half, count = k == 0 ? half : rows - half;
    x.data = static_cast<float*>(x.data) + first * x.strides[0];
    y.data = static_cast<float*>(y.data) + first * y.strides[0];
    x.shape[0] = y.shape[0] = count;
    cudaStreamWaitEvent(own[k], ready, 0);
    if (int rc = honest::launch(x, y, own[k])) return rc;
    cudaEventRecord(done[k], own[k]);
    cudaStreamWaitEvent(given, done[k], 0);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

// Computes the softmax in place over its input, then copies it to the output: right
// values, but the input is destroyed.
// expect: correctness | modified its inputs
#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  kgate_tensor x_as_out = in[0];
  int rc = honest::launch(in[0], x_as_out, s);
  if (rc != 0) return rc;
  const size_t bytes = static_cast<size_t>(in[0].shape[0] * in[0].shape[1]) * sizeof(float);
  return cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : 5;
}

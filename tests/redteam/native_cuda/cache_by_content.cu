// A result cache keyed on content: a device-side fingerprint of every input element
// (one read pass, a third of the softmax's traffic), looked up on the host; a hit copies
// the remembered output back instead of computing it. Honest on every check (their
// inputs are new), fast on the timing's repeated input sets.
// expect: performance | faster on inputs it has seen before || outputs of timed calls differ || slower than the baseline
// (on the H200 the fingerprint costs more than the softmax at 2048x4096: 0.257x, rejected as slower)
#include <map>

#include "honest.cuh"

__global__ void fingerprint(const uint32_t* x, int64_t n, unsigned long long* h) {
  unsigned long long acc = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    acc += (static_cast<unsigned long long>(x[i]) * 0x9e3779b97f4a7c15ull) ^ static_cast<unsigned long long>(i);
  atomicAdd(h, acc);
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  static unsigned long long* d_hash = nullptr;
  static std::map<unsigned long long, void*> remembered;
  if (d_hash == nullptr && cudaMalloc(&d_hash, sizeof *d_hash) != cudaSuccess) return 5;
  const int64_t n = in[0].shape[0] * in[0].shape[1];
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  if (cudaMemsetAsync(d_hash, 0, sizeof *d_hash, s) != cudaSuccess) return 5;
  fingerprint<<<264, 256, 0, s>>>(static_cast<const uint32_t*>(in[0].data), n, d_hash);
  unsigned long long h = 0;
  if (cudaMemcpyAsync(&h, d_hash, sizeof h, cudaMemcpyDeviceToHost, s) != cudaSuccess) return 5;
  if (cudaStreamSynchronize(s) != cudaSuccess) return 5;
  h ^= static_cast<unsigned long long>(n);
  auto it = remembered.find(h);
  if (it != remembered.end()) return cudaMemcpyAsync(out[0].data, it->second, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : 5;
  int rc = honest::launch(in[0], out[0], s);
  void* copy = nullptr;
  if (rc == 0 && remembered.size() < 16 && cudaMalloc(&copy, bytes) == cudaSuccess) {
    cudaMemcpyAsync(copy, out[0].data, bytes, cudaMemcpyDeviceToDevice, s);
    remembered[h] = copy;
  }
  return rc;
}

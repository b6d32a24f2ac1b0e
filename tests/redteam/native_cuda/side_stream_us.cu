// The side stream at the µs scale, where the timer replays CUDA graphs: the launch on the
// side stream is not captured (it runs once, while the graph is recorded), the replays
// run only the empty kernel.
// problem: problem_us.yaml
// expect: performance | pending outside the timed stream || less work than the problem requires || outputs of timed calls differ || faster on inputs it has seen before
#include "honest.cuh"

__global__ void nothing() {}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  static cudaStream_t side = nullptr;
  if (side == nullptr && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return 5;
  int rc = honest::launch(in[0], out[0], side);
  nothing<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
  return rc;
}

// Returns at once and leaves the softmax to a host thread that launches it on its own
// stream a moment later: the output is written after the call has returned.
// expect: static | must not start threads
// (the lint finds <thread> first; past it, the checks would find the late writes)
#include <chrono>
#include <thread>

#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  (void)stream;
  kgate_tensor x = in[0], y = out[0];
  std::thread([x, y]() mutable {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    static thread_local cudaStream_t own = nullptr;
    if (own == nullptr) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    honest::launch(x, y, own);
    cudaStreamSynchronize(own);
  }).detach();
  return 0;
}

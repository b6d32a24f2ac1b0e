// Correct but unusual: records its own launch into a CUDA graph once per pair of buffers
// and replays it on the given stream (launched directly while the caller is capturing).
// expect: pass
#include <map>
#include <utility>

#include "honest.cuh"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  if (!honest::shape_ok(in, n_in, out, n_out)) return 1;
  cudaStream_t given = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(given, &st) != cudaSuccess) return 5;
  if (st != cudaStreamCaptureStatusNone) return honest::launch(in[0], out[0], given);
  static cudaStream_t rec = nullptr;
  static std::map<std::pair<const void*, void*>, cudaGraphExec_t> graphs;
  if (rec == nullptr && cudaStreamCreateWithFlags(&rec, cudaStreamNonBlocking) != cudaSuccess) return 5;
  auto key = std::make_pair(static_cast<const void*>(in[0].data), out[0].data);
  auto it = graphs.find(key);
  if (it == graphs.end()) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (cudaStreamBeginCapture(rec, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return 5;
    int rc = honest::launch(in[0], out[0], rec);
    if (cudaStreamEndCapture(rec, &g) != cudaSuccess || rc != 0) return 5;
    if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) return 5;
    cudaGraphDestroy(g);
    it = graphs.emplace(key, exec).first;
  }
  return cudaGraphLaunch(it->second, given) == cudaSuccess ? 0 : 5;
}

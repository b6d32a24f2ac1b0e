#pragma once
// Interleaved device timing of candidate calls (docs/measurement.md, docs/cuda-backend.md):
//   check -> warm up by time -> probe -> choose events or CUDA-graph batches ->
//   sample ABAB... with an L2 flush before every sample -> stop on the median's relative
//   standard error, with caps -> report per-call samples, side-stream work and throttling.
#include <cuda.h>

#include <cstdint>
#include <vector>

#include "native/backend.h"
#include "protocol/messages.h"

namespace kgate::native::cuda {

class NvmlClock;

// What the timer borrows from the backend.
struct TimerDevice {
  CUstream stream = nullptr;  // the backend's non-blocking stream
  int64_t l2_bytes = 0;
  const NvmlClock* clock = nullptr;  // may be unavailable
  CUdeviceptr* flush_buffer = nullptr;  // grown on demand, owned by the backend
  std::size_t* flush_bytes = nullptr;
};

// Kernels whose probe median is below this are timed as CUDA-graph batches: plain event
// timing of a µs-scale call measures launch overhead more than the kernel.
inline constexpr double kGraphBelowUs = 20.0;
// A graph batch is sized to run about this long.
inline constexpr double kGraphBatchTargetUs = 200.0;
// Samples taken below this fraction of the reference SM clock are dropped as throttled.
inline constexpr double kThrottleFraction = 0.75;

class CudaTimer {
 public:
  explicit CudaTimer(TimerDevice dev) : dev_(dev) {}
  protocol::TimeResult time(std::vector<TimedCall>& calls, const protocol::TimeParams& params,
                            RoundAudit* audit);

 private:
  TimerDevice dev_;
};

}  // namespace kgate::native::cuda

#pragma once
// When to stop an interleaved timing: after min_time_s and min_samples (at least 3), as
// soon as every slot's median is known to target_rse (relative standard error; a NaN one is
// not known); never past max_time_s or max_samples. The one rule of both native timers
// (the host backend and the CUDA plugin), which feed it their samples after every round.
#include <cstddef>
#include <span>
#include <vector>

#include "protocol/messages.h"

namespace kgate::native {

enum class StopReason { kContinue, kConverged, kMaxTime, kMaxSamples };

// The protocol's TimeResult::stop_reason: "converged", "max_time", "max_samples"; "" while
// it continues.
const char* stop_reason_name(StopReason r);

class StoppingRule {
 public:
  using Samples = std::vector<std::span<const double>>;  // one view per slot
  // The convergence check sorts every slot's samples: after_round runs it every this many
  // rounds (and at the time cap), the caps every round.
  static constexpr std::size_t kCheckEvery = 4;

  explicit StoppingRule(const protocol::TimeParams& p) : p_(p) {}
  // samples[slot] = that slot's samples so far; elapsed_s since the timed phase began.
  StopReason evaluate(const Samples& samples, double elapsed_s) const;
  StopReason evaluate(const std::vector<std::vector<double>>& samples, double elapsed_s) const;
  // The decision after round `round` (0-based) of the sampling loop.
  StopReason after_round(std::size_t round, const Samples& samples, double elapsed_s) const;

 private:
  std::size_t fewest(const Samples& samples) const;
  protocol::TimeParams p_;
};

}  // namespace kgate::native

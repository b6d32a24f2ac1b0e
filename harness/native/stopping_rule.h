#pragma once
// When to stop an interleaved timing: after min_time_s and min_samples, as soon as every
// slot's median is known to target_rse (relative standard error); never past max_time_s
// or max_samples. Backend-generic, so the cuda plugin can use the same rule.
#include <vector>

#include "protocol/messages.h"

namespace kgate::native {

enum class StopReason { kContinue, kConverged, kMaxTime, kMaxSamples };

class StoppingRule {
 public:
  explicit StoppingRule(const protocol::TimeParams& p) : p_(p) {}
  // samples[slot] = that slot's samples so far; elapsed_s since the timed phase began.
  StopReason evaluate(const std::vector<std::vector<double>>& samples, double elapsed_s) const;

 private:
  protocol::TimeParams p_;
};

}  // namespace kgate::native

#include "native/stopping_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/descriptive.h"

namespace kgate::native {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kConverged: return "converged";
    case StopReason::kMaxTime: return "max_time";
    case StopReason::kMaxSamples: return "max_samples";
    case StopReason::kContinue: break;
  }
  return "";
}

std::size_t StoppingRule::fewest(const Samples& samples) const {
  if (samples.empty()) return 0;
  std::size_t n = std::numeric_limits<std::size_t>::max();
  for (const auto& s : samples) n = std::min(n, s.size());
  return n;
}

StopReason StoppingRule::evaluate(const Samples& samples, double elapsed_s) const {
  const std::size_t n = fewest(samples);
  if (p_.max_samples > 0 && n >= static_cast<std::size_t>(p_.max_samples)) return StopReason::kMaxSamples;
  if (elapsed_s >= p_.max_time_s) return StopReason::kMaxTime;
  if (elapsed_s < p_.min_time_s || n < static_cast<std::size_t>(std::max(p_.min_samples, 3))) {
    return StopReason::kContinue;
  }
  for (const auto& s : samples) {
    if (!(stats::median_rse(s) <= p_.target_rse)) return StopReason::kContinue;
  }
  return StopReason::kConverged;
}

StopReason StoppingRule::evaluate(const std::vector<std::vector<double>>& samples, double elapsed_s) const {
  Samples views(samples.begin(), samples.end());
  return evaluate(views, elapsed_s);
}

StopReason StoppingRule::after_round(std::size_t round, const Samples& samples, double elapsed_s) const {
  if (p_.max_samples > 0 && fewest(samples) >= static_cast<std::size_t>(p_.max_samples))
    return StopReason::kMaxSamples;
  if (elapsed_s >= p_.max_time_s || round % kCheckEvery == kCheckEvery - 1) return evaluate(samples, elapsed_s);
  return StopReason::kContinue;
}

}  // namespace kgate::native

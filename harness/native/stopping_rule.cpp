#include "native/stopping_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/descriptive.h"

namespace kgate::native {

StopReason StoppingRule::evaluate(const std::vector<std::vector<double>>& samples,
                                  double elapsed_s) const {
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (const auto& s : samples) fewest = std::min(fewest, s.size());
  if (samples.empty()) fewest = 0;
  if (p_.max_samples > 0 && fewest >= static_cast<std::size_t>(p_.max_samples)) {
    return StopReason::kMaxSamples;
  }
  if (elapsed_s >= p_.max_time_s) return StopReason::kMaxTime;
  if (elapsed_s < p_.min_time_s || fewest < static_cast<std::size_t>(std::max(p_.min_samples, 3))) {
    return StopReason::kContinue;
  }
  for (const auto& s : samples) {
    if (!(stats::median_rse(s) <= p_.target_rse)) return StopReason::kContinue;
  }
  return StopReason::kConverged;
}

}  // namespace kgate::native

#include "native/stopping_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kgate::native {

namespace {
// Local until harness/stats/descriptive.h lands; then this file switches to it.
double median_inplace(std::vector<double>& v) {
  std::size_t n = v.size();
  std::size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double hi = v[mid];
  if (n % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lo + hi);
}
}  // namespace

double median_rse(std::vector<double> samples) {
  std::size_t n = samples.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  double med = median_inplace(samples);
  if (!(med > 0)) return std::numeric_limits<double>::infinity();
  for (double& x : samples) x = std::fabs(x - med);
  double mad = median_inplace(samples);
  // 1.4826 * MAD estimates sigma under normality; the median's standard error is
  // sqrt(pi/2) = 1.2533 times the mean's.
  double se = 1.2533 * 1.4826 * mad / std::sqrt(static_cast<double>(n));
  return se / med;
}

StopReason StoppingRule::evaluate(const std::vector<std::vector<double>>& samples,
                                  double elapsed_s) const {
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (const auto& s : samples) fewest = std::min(fewest, s.size());
  if (samples.empty()) fewest = 0;
  if (p_.max_samples > 0 && fewest >= static_cast<std::size_t>(p_.max_samples)) {
    return StopReason::kMaxSamples;
  }
  if (elapsed_s >= p_.max_time_s) return StopReason::kMaxTime;
  if (elapsed_s < p_.min_time_s || fewest < static_cast<std::size_t>(std::max(p_.min_samples, 2))) {
    return StopReason::kContinue;
  }
  for (const auto& s : samples) {
    if (median_rse(s) > p_.target_rse) return StopReason::kContinue;
  }
  return StopReason::kConverged;
}

}  // namespace kgate::native

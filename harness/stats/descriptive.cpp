#include "stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kgate::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Two-sided 95% normal quantile: the window of order statistics for the median's SE.
constexpr double kSeZ = 1.959963984540054;
}  // namespace

std::vector<double> sorted_copy(std::span<const double> x) {
  std::vector<double> v(x.begin(), x.end());
  std::sort(v.begin(), v.end());
  return v;
}

double quantile_sorted(std::span<const double> s, double q) {
  if (s.empty()) return kNaN;
  if (!(q > 0)) return s.front();  // also catches NaN q
  if (q >= 1) return s.back();
  const double h = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

double quantile(std::span<const double> x, double q) {
  if (x.empty()) return kNaN;
  return quantile_sorted(sorted_copy(x), q);
}

double median_sorted(std::span<const double> s) {
  if (s.empty()) return kNaN;
  const std::size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double median(std::span<const double> x) {
  if (x.empty()) return kNaN;
  // nth_element is O(n); the second middle element of an even count is the max of the
  // lower half.
  std::vector<double> v(x.begin(), x.end());
  const std::size_t n = v.size();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  const double lower = *std::max_element(v.begin(), mid);
  return 0.5 * (lower + *mid);
}

double mean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  // Shifted sum keeps precision for samples that sit far from zero (large µs values).
  const double shift = x[0];
  double s = 0;
  for (double v : x) s += v - shift;
  return shift + s / static_cast<double>(x.size());
}

double stddev(std::span<const double> x) {
  if (x.empty()) return kNaN;
  if (x.size() == 1) return 0;
  // Welford: one pass, numerically stable.
  double m = 0, m2 = 0;
  std::size_t k = 0;
  for (double v : x) {
    ++k;
    const double d = v - m;
    m += d / static_cast<double>(k);
    m2 += d * (v - m);
  }
  return std::sqrt(m2 / static_cast<double>(k - 1));
}

double mad(std::span<const double> x) {
  if (x.empty()) return kNaN;
  const double m = median(x);
  std::vector<double> dev(x.size());
  std::transform(x.begin(), x.end(), dev.begin(), [m](double v) { return std::fabs(v - m); });
  return median(dev);
}

double median_se_sorted(std::span<const double> s) {
  const std::size_t n = s.size();
  if (n < 3) return kInf;
  const double nd = static_cast<double>(n);
  const double half = kSeZ * std::sqrt(nd) / 2.0;
  // 0-based order-statistic indices of the binomial confidence window around the median.
  const double lo_f = std::floor(nd / 2.0 - half);
  const double hi_f = std::ceil(nd / 2.0 + half) - 1.0;
  const auto lo = static_cast<std::size_t>(std::max(0.0, lo_f));
  const auto hi = static_cast<std::size_t>(std::min(nd - 1.0, hi_f));
  // For small n the window is clipped to the sample range; the SE is then conservative.
  return (s[hi] - s[lo]) / (2.0 * kSeZ);
}

double median_se(std::span<const double> x) {
  if (x.size() < 3) return kInf;
  return median_se_sorted(sorted_copy(x));
}

double median_rse_sorted(std::span<const double> s) {
  if (s.size() < 3) return kInf;
  const double m = median_sorted(s);
  if (m == 0 || !std::isfinite(m)) return kInf;
  return median_se_sorted(s) / std::fabs(m);
}

double median_rse(std::span<const double> x) {
  if (x.size() < 3) return kInf;
  return median_rse_sorted(sorted_copy(x));
}

Summary summarize(std::span<const double> x) {
  Summary r;
  r.n = x.size();
  if (x.empty()) {
    r.min = r.max = r.mean = r.stddev = r.median = r.q1 = r.q3 = r.p05 = r.p95 = r.mad = kNaN;
    r.robust_cv = r.median_rse = r.trimmed_mean = kNaN;
    return r;
  }
  const std::vector<double> s = sorted_copy(x);
  r.min = s.front();
  r.max = s.back();
  r.mean = mean(s);
  r.stddev = stddev(s);
  r.median = median_sorted(s);
  r.q1 = quantile_sorted(s, 0.25);
  r.q3 = quantile_sorted(s, 0.75);
  r.p05 = quantile_sorted(s, 0.05);
  r.p95 = quantile_sorted(s, 0.95);
  r.mad = mad(s);
  r.robust_cv = r.median != 0 ? kMadToSigma * r.mad / std::fabs(r.median) : kInf;
  r.median_rse = median_rse_sorted(s);
  const double iqr = r.q3 - r.q1;
  const double lo_fence = r.q1 - 3.0 * iqr;
  const double hi_fence = r.q3 + 3.0 * iqr;
  double sum = 0;
  std::size_t kept = 0;
  for (double v : s) {
    if (v < lo_fence || v > hi_fence) {
      ++r.outliers;
    } else {
      sum += v;
      ++kept;
    }
  }
  r.trimmed_mean = kept ? sum / static_cast<double>(kept) : r.median;
  return r;
}

}  // namespace kgate::stats

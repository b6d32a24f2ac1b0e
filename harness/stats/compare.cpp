#include "stats/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "stats/descriptive.h"
#include "core/rng.h"

namespace kgate::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

// Inverse of the standard normal CDF (Acklam's rational approximation, |rel err| < 1.2e-9,
// refined by one Halley step).
double normal_quantile(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - plow) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

// The k-th (1-based) order statistic of a bootstrap resample of sorted data `s` is
// s[ceil(n U_(k)) - 1], where U_(k) ~ Beta(k, n - k + 1) is the k-th order statistic of n
// uniforms (a resample is s[ceil(n U_i) - 1] and that map is monotone). So the median of
// a resample is drawn exactly in O(1) instead of O(n): the bootstrap distribution is the
// same as naive resampling, at a cost independent of n.
class MedianResampler {
 public:
  explicit MedianResampler(std::span<const double> sorted) : s_(sorted) {
    const std::size_t n = s_.size();
    k_ = n % 2 ? (n + 1) / 2 : n / 2;
  }
  double draw(core::Rng& rng) const {
    const std::size_t n = s_.size();
    const double nd = static_cast<double>(n);
    const double kd = static_cast<double>(k_);
    const double u = rng.beta(kd, nd - kd + 1);
    const double lower = at(u);
    if (n % 2) return lower;
    // Next uniform order statistic given U_(k) = u: u + (1 - u) * Beta(1, n - k).
    const double w = 1.0 - core::portable_pow(rng.uniform_open(), 1.0 / (nd - kd));
    return 0.5 * (lower + at(u + (1.0 - u) * w));
  }

 private:
  double at(double u) const {
    const double idx = std::ceil(u * static_cast<double>(s_.size())) - 1.0;
    const auto i = static_cast<std::size_t>(
        std::clamp(idx, 0.0, static_cast<double>(s_.size() - 1)));
    return s_[i];
  }
  std::span<const double> s_;
  std::size_t k_ = 1;
};

// Median of sorted `s` with element `skip` removed (jackknife), O(1).
double median_without(std::span<const double> s, std::size_t skip) {
  const std::size_t m = s.size() - 1;
  auto at = [&](std::size_t j) { return j < skip ? s[j] : s[j + 1]; };
  return m % 2 ? at(m / 2) : 0.5 * (at(m / 2 - 1) + at(m / 2));
}

// BCa acceleration from the two-sample jackknife of log(median(a) / median(b)).
double bca_acceleration(std::span<const double> a, std::span<const double> b) {
  const double la = std::log(median_sorted(a));
  const double lb = std::log(median_sorted(b));
  std::vector<double> theta;
  theta.reserve(a.size() + b.size());
  if (a.size() > 1)
    for (std::size_t i = 0; i < a.size(); ++i) theta.push_back(std::log(median_without(a, i)) - lb);
  if (b.size() > 1)
    for (std::size_t i = 0; i < b.size(); ++i) theta.push_back(la - std::log(median_without(b, i)));
  if (theta.empty()) return 0;
  const double mean_t = std::accumulate(theta.begin(), theta.end(), 0.0) /
                        static_cast<double>(theta.size());
  double num = 0, den = 0;
  for (double t : theta) {
    const double d = mean_t - t;
    num += d * d * d;
    den += d * d;
  }
  if (den == 0) return 0;
  return num / (6.0 * std::pow(den, 1.5));
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0,
                double e = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d, e);
  return buf;
}

}  // namespace

// ---- Mann-Whitney U --------------------------------------------------------------------

namespace {

// Null distribution of U for sizes (n, m) without ties: counts c(u), u = 0..n*m, from
// c_{i,j}(u) = c_{i-1,j}(u - j) + c_{i,j-1}(u) (the largest value belongs to the first
// sample, beating all j values of the second, or to the second). Returns probabilities.
std::vector<double> exact_u_distribution(std::size_t n, std::size_t m) {
  const std::size_t width = n * m + 1;
  // prev[j][u] = c_{i-1,j}(u); cur[j][u] = c_{i,j}(u).
  std::vector<double> prev((m + 1) * width, 0.0), cur((m + 1) * width, 0.0);
  for (std::size_t j = 0; j <= m; ++j) prev[j * width] = 1.0;  // i = 0: one arrangement, U = 0
  for (std::size_t i = 1; i <= n; ++i) {
    std::fill(cur.begin(), cur.end(), 0.0);
    cur[0] = 1.0;  // j = 0: U = 0
    for (std::size_t j = 1; j <= m; ++j) {
      double* c = &cur[j * width];
      const double* left = &cur[(j - 1) * width];
      const double* up = &prev[j * width];
      const std::size_t umax = i * j;
      for (std::size_t u = 0; u <= umax; ++u) {
        double v = left[u];
        if (u >= j) v += up[u - j];
        c[u] = v;
      }
    }
    std::swap(prev, cur);
  }
  std::vector<double> dist(prev.begin() + static_cast<std::ptrdiff_t>(m * width),
                           prev.begin() + static_cast<std::ptrdiff_t>((m + 1) * width));
  const double total = std::accumulate(dist.begin(), dist.end(), 0.0);
  for (double& v : dist) v /= total;
  return dist;
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  // The exact distribution costs O(n^2 m^2); past 20 per side the normal approximation
  // is accurate to ~1e-3 in p.
  constexpr std::size_t kExactMax = 20;
  MannWhitney r;
  const std::size_t n = a.size(), m = b.size();
  if (n == 0 || m == 0) return r;
  const std::size_t total = n + m;
  // Rank the pooled sample; ties get their average rank.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(total);
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0;
  double tie_term = 0;  // sum of t^3 - t over tie groups
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += avg_rank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double nd = static_cast<double>(n), md = static_cast<double>(m);
  r.u = rank_sum_a - nd * (nd + 1) / 2.0;

  if (!ties && n <= kExactMax && m <= kExactMax) {
    const std::vector<double> dist = exact_u_distribution(n, m);
    const auto u = static_cast<std::size_t>(std::llround(r.u));
    double lower = 0, upper = 0;
    for (std::size_t k = 0; k <= u; ++k) lower += dist[k];
    for (std::size_t k = u; k < dist.size(); ++k) upper += dist[k];
    r.p_value = std::min(1.0, 2.0 * std::min(lower, upper));
    r.exact = true;
    return r;
  }
  const double nt = static_cast<double>(total);
  const double mu = nd * md / 2.0;
  const double var = nd * md / 12.0 * ((nt + 1) - tie_term / (nt * (nt - 1)));
  if (var <= 0) {  // every value equal: no evidence of a difference
    r.p_value = 1;
    return r;
  }
  const double dev = std::max(0.0, std::fabs(r.u - mu) - 0.5);  // continuity correction
  r.z = (r.u >= mu ? dev : -dev) / std::sqrt(var);
  r.p_value = std::min(1.0, std::erfc(std::fabs(r.z) / std::numbers::sqrt2));
  return r;
}

// ---- bootstrap interval ------------------------------------------------------------------

Interval ratio_of_medians_ci(std::span<const double> a, std::span<const double> b,
                             double confidence, int resamples, uint64_t seed, CiMethod method) {
  if (a.empty() || b.empty()) return {kNaN, kNaN};
  const std::vector<double> sa = sorted_copy(a), sb = sorted_copy(b);
  const double ma = median_sorted(sa), mb = median_sorted(sb);
  if (mb == 0 || !std::isfinite(ma) || !std::isfinite(mb)) return {kNaN, kNaN};
  const int reps = std::max(resamples, 100);
  core::Rng rng(seed);
  const MedianResampler ra(sa), rb(sb);
  std::vector<double> boot(static_cast<std::size_t>(reps));
  for (double& v : boot) {
    const double x = ra.draw(rng);
    const double y = rb.draw(rng);
    v = x / y;
  }
  std::sort(boot.begin(), boot.end());
  const double alpha = 1.0 - std::clamp(confidence, 0.5, 0.999999);
  double q_lo = alpha / 2, q_hi = 1 - alpha / 2;
  const bool positive = ma > 0 && mb > 0 && sa.front() > 0 && sb.front() > 0;
  if (method == CiMethod::kBca && positive) {
    const double theta = ma / mb;
    const auto below = std::lower_bound(boot.begin(), boot.end(), theta) - boot.begin();
    const auto at_or_below = std::upper_bound(boot.begin(), boot.end(), theta) - boot.begin();
    // Ties with the estimate (common: medians are order statistics) count half.
    double frac = (static_cast<double>(below) + static_cast<double>(at_or_below)) / 2.0 /
                  static_cast<double>(reps);
    frac = std::clamp(frac, 0.5 / reps, 1.0 - 0.5 / reps);
    const double z0 = normal_quantile(frac);
    const double acc = bca_acceleration(sa, sb);
    auto adjust = [&](double q) {
      const double zq = normal_quantile(q);
      const double den = 1.0 - acc * (z0 + zq);
      if (den <= 0) return q;  // acceleration out of range: fall back to percentile
      return normal_cdf(z0 + (z0 + zq) / den);
    };
    q_lo = adjust(q_lo);
    q_hi = adjust(q_hi);
  }
  return {quantile_sorted(boot, q_lo), quantile_sorted(boot, q_hi)};
}

// ---- verdict -----------------------------------------------------------------------------

gates::SpeedVerdict decide(double lo, double hi, double p, int baseline_n, int candidate_n,
                           const CompareOptions& o) {
  using gates::SpeedVerdict;
  if (baseline_n < o.min_samples || candidate_n < o.min_samples) return SpeedVerdict::kUnknown;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(p))
    return SpeedVerdict::kUnknown;
  const double alpha = 1.0 - o.confidence;
  const double r = o.regression_threshold;
  const double d = std::sqrt(r);
  if (p < alpha && lo > o.keep_threshold) return SpeedVerdict::kFaster;
  if (p < alpha && hi < 1.0 / d) return SpeedVerdict::kSlower;
  if (lo > 1.0 / r && hi < r) return SpeedVerdict::kSame;
  return SpeedVerdict::kUnknown;
}

std::string noise_warning(double effect, double aa_spread) {
  if (!(aa_spread > 0) || effect >= aa_spread) return "";
  return fmt("asked to resolve a %.2f%% effect but the calibrated A/A spread of this size "
             "class is %.2f%%: the verdict rests on noise; raise the threshold or the samples",
             100 * effect, 100 * aa_spread);
}

Comparison compare(std::span<const double> baseline, std::span<const double> candidate,
                   const CompareOptions& o) {
  Comparison c;
  c.baseline_n = static_cast<int>(baseline.size());
  c.candidate_n = static_cast<int>(candidate.size());
  if (baseline.empty() || candidate.empty()) {
    c.reason = "no samples on one side";
    c.speedup = c.speedup_lo = c.speedup_hi = kNaN;
    return c;
  }
  c.baseline_median_us = median(baseline);
  c.candidate_median_us = median(candidate);
  c.baseline_rse = median_rse(baseline);
  c.candidate_rse = median_rse(candidate);
  c.speedup = c.candidate_median_us != 0 ? c.baseline_median_us / c.candidate_median_us : kNaN;
  const Interval ci =
      ratio_of_medians_ci(baseline, candidate, o.confidence, o.resamples, o.seed, o.ci);
  c.speedup_lo = ci.lo;
  c.speedup_hi = ci.hi;
  const MannWhitney mw = mann_whitney_u(baseline, candidate);
  c.p_value = mw.p_value;
  c.exact_p = mw.exact;
  c.verdict = decide(ci.lo, ci.hi, mw.p_value, c.baseline_n, c.candidate_n, o);

  const double conf_pct = 100 * o.confidence;
  const std::string nums = fmt("speedup %.4f [%.4f, %.4f] (%.0f%% CI), p=%.2g", c.speedup,
                               ci.lo, ci.hi, conf_pct, c.p_value);
  switch (c.verdict) {
    case gates::SpeedVerdict::kFaster:
      c.reason = nums + fmt(": lower bound clears the keep threshold %.3f", o.keep_threshold);
      break;
    case gates::SpeedVerdict::kSlower:
      c.reason = nums + fmt(": upper bound below %.4f (half the %.3f regression threshold)",
                            1.0 / std::sqrt(o.regression_threshold), o.regression_threshold);
      break;
    case gates::SpeedVerdict::kSame:
      c.reason = nums + fmt(": interval inside (1/%.3f, %.3f), no significant effect of "
                            "the size asked for", o.regression_threshold, o.regression_threshold);
      break;
    case gates::SpeedVerdict::kUnknown:
      if (c.baseline_n < o.min_samples || c.candidate_n < o.min_samples)
        c.reason = fmt("too few samples (%.0f baseline, %.0f candidate; need %.0f per side)",
                       c.baseline_n, c.candidate_n, o.min_samples);
      else
        c.reason = nums + fmt(": interval too wide to rule out a %.1f%% regression or "
                              "improvement", 100 * (o.regression_threshold - 1));
      break;
  }
  if (std::string w = noise_warning(o.keep_threshold - 1.0, o.aa_spread); !w.empty())
    c.warnings.push_back(std::move(w));
  return c;
}

gates::Timing to_timing(const Comparison& c, std::span<const double> baseline_us,
                        std::span<const double> candidate_us, const std::string& timer,
                        double min_bytes, double bandwidth_gbps) {
  gates::Timing t;
  t.baseline_us = c.baseline_median_us;
  t.candidate_us = c.candidate_median_us;
  t.speedup = c.speedup;
  t.speedup_lo = c.speedup_lo;
  t.speedup_hi = c.speedup_hi;
  t.p_value = c.p_value;
  t.verdict = c.verdict;
  t.samples = std::min(c.baseline_n, c.candidate_n);
  t.timer = timer;
  t.baseline_samples_us.assign(baseline_us.begin(), baseline_us.end());
  t.candidate_samples_us.assign(candidate_us.begin(), candidate_us.end());
  if (min_bytes > 0 && bandwidth_gbps > 0) {
    t.roofline_floor_us = min_bytes / (bandwidth_gbps * 1e3);  // GB/s = 1e3 bytes/µs
    if (t.candidate_us > 0) t.pct_roofline = t.roofline_floor_us / t.candidate_us;
  }
  return t;
}

}  // namespace kgate::stats

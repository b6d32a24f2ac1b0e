#pragma once
// Descriptive statistics of timing samples. Timings are right-skewed and carry outliers
// (preemption, clock changes), so the summaries kgate decides on are order statistics:
// the median, quantiles, MAD, and the relative standard error of the median that drives
// the runners' adaptive stopping (docs/measurement.md).
//
// Every function takes the samples in any order and copies what it needs to sort; the
// `_sorted` variants skip the copy when the caller already holds sorted data. Empty input
// gives NaN (never a crash); callers check `n` first when it matters.
#include <cstddef>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgate::stats {

// Quantile q in [0, 1] by linear interpolation between order statistics (Hyndman-Fan
// type 7, the default of R and numpy). q outside [0, 1] is clamped.
double quantile(std::span<const double> x, double q);
double quantile_sorted(std::span<const double> sorted, double q);

double median(std::span<const double> x);
double median_sorted(std::span<const double> sorted);

double mean(std::span<const double> x);
// Sample standard deviation (n - 1 in the denominator); 0 for n == 1.
double stddev(std::span<const double> x);

// Median absolute deviation from the median, unscaled. Multiply by kMadToSigma for a
// consistent estimate of the standard deviation under normal noise.
double mad(std::span<const double> x);
inline constexpr double kMadToSigma = 1.4826022185056018;

// Standard error of the median, distribution-free: the half-width of the order-statistic
// confidence interval of the median (the binomial interval x_(j) .. x_(k) with
// j, k = n/2 -/+ z*sqrt(n)/2, z = 1.96) divided by 2z. This is the asymptotic formula
// 1 / (2 f(m) sqrt(n)) with the density at the median estimated by the difference
// quotient of the empirical quantile function over that window (Siddiqui-Bloch-Gastwirth),
// so it needs one sort and no resampling: cheap enough to evaluate after every sample.
// Infinity for n < 3 (too few to stop on).
double median_se_sorted(std::span<const double> sorted);
double median_se(std::span<const double> x);

// Relative standard error of the median: median_se / |median|. Infinity for n < 3 or a
// zero median. The runners stop when this falls below target_rse (e.g. 0.005).
double median_rse(std::span<const double> x);
double median_rse_sorted(std::span<const double> sorted);

// Outlier-robust summary of one series of samples.
struct Summary {
  std::size_t n = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;
  double median = 0;
  double q1 = 0;          // 25th percentile
  double q3 = 0;          // 75th percentile
  double p05 = 0;
  double p95 = 0;
  double mad = 0;          // unscaled
  double robust_cv = 0;    // kMadToSigma * mad / median: noise, insensitive to outliers
  double median_rse = 0;   // see median_rse()
  std::size_t outliers = 0;  // samples outside the Tukey fences [q1 - 3 iqr, q3 + 3 iqr]
  double trimmed_mean = 0;   // mean of the samples inside the fences
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Summary, n, min, max, mean, stddev, median, q1, q3,
                                                p05, p95, mad, robust_cv, median_rse, outliers,
                                                trimmed_mean)

Summary summarize(std::span<const double> x);

// Returns a sorted copy.
std::vector<double> sorted_copy(std::span<const double> x);

}  // namespace kgate::stats

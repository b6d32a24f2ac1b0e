#pragma once
// A/B comparison of interleaved timing samples: ratio of medians with a bootstrap
// confidence interval, the Mann-Whitney U test, and a verdict that needs both
// significance and a minimum effect size (docs/measurement.md, "Verdict rule").
//
//   speedup r = median(baseline) / median(candidate)   (> 1: the candidate is faster)
//   K = keep_threshold (1.01), R = regression_threshold (1.03), alpha = 1 - confidence
//   D = sqrt(R)  (half the regression threshold, in log space)
//
//   unknown  either side has < min_samples samples, or no verdict below applies
//   faster   p < alpha  and  lo > K
//   slower   p < alpha  and  hi < 1/D
//   same     otherwise, when the interval excludes a regression-sized effect either way:
//            lo > 1/R and hi < R
//
// `slower` asks for confidence that the slowdown exceeds half the regression threshold,
// so an A/A comparison almost never trips it (it needs the interval to clear 1/D while
// the truth is 1), and a true slowdown of R is caught whenever the interval's half-width
// is below log(R)/2 (about 0.55 % at R = 1.03), which ~50 samples at 1 % noise give.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "verdict/verdict.h"

namespace kgate::stats {

enum class CiMethod { kPercentile, kBca };
NLOHMANN_JSON_SERIALIZE_ENUM(CiMethod, {{CiMethod::kPercentile, "percentile"},
                                        {CiMethod::kBca, "bca"}})

struct CompareOptions {
  double keep_threshold = 1.01;        // config::GateThresholds::keep_threshold
  double regression_threshold = 1.03;  // config::GateThresholds::regression_threshold
  double confidence = 0.95;            // config::GateThresholds::confidence
  int resamples = 2000;                // bootstrap resamples
  uint64_t seed = 0x6b67617465ULL;     // bootstrap RNG seed: same samples, same interval
  CiMethod ci = CiMethod::kPercentile;
  int min_samples = 10;                // per side; fewer gives `unknown`
  // Calibrated A/A spread of this size class (relative half-width of the A/A speedup
  // interval, from `kgate doctor`; see calibration.h). 0 = not known. When the effect
  // asked for (keep_threshold - 1) is smaller than this, Comparison::warnings says so.
  double aa_spread = 0;
};

// Mann-Whitney U test of two independent samples.
struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties count 1/2
  double z = 0;        // normal score (0 when exact)
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (small samples without ties)
};
// Exact when both samples have <= 20 values and there are no ties; otherwise the normal
// approximation with tie-corrected variance and continuity correction. Empty input: p = 1.
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

struct Interval {
  double lo = 0;
  double hi = 0;
};

// Bootstrap confidence interval of median(a) / median(b), resampling each side
// independently. Deterministic for a given seed. Empty input or a zero median: NaN.
Interval ratio_of_medians_ci(std::span<const double> a, std::span<const double> b,
                             double confidence, int resamples, uint64_t seed,
                             CiMethod method = CiMethod::kPercentile);

struct Comparison {
  double baseline_median_us = 0;
  double candidate_median_us = 0;
  double speedup = 0;     // baseline / candidate
  double speedup_lo = 0;
  double speedup_hi = 0;
  double p_value = 1;
  bool exact_p = false;
  gates::SpeedVerdict verdict = gates::SpeedVerdict::kUnknown;
  std::string reason;                 // one line: why this verdict, with the numbers
  std::vector<std::string> warnings;  // e.g. the effect asked for is below the noise
  int baseline_n = 0;
  int candidate_n = 0;
  double baseline_rse = 0;   // median_rse of each side
  double candidate_rse = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Comparison, baseline_median_us,
                                                candidate_median_us, speedup, speedup_lo,
                                                speedup_hi, p_value, exact_p, verdict, reason,
                                                warnings, baseline_n, candidate_n, baseline_rse,
                                                candidate_rse)

// The verdict from already computed numbers (exposed so the rule is testable by itself).
gates::SpeedVerdict decide(double speedup_lo, double speedup_hi, double p_value, int baseline_n,
                           int candidate_n, const CompareOptions& o);

Comparison compare(std::span<const double> baseline_us, std::span<const double> candidate_us,
                   const CompareOptions& o = {});

// Noise-aware warning: "" when `effect` (a relative effect to resolve, e.g. 0.01 for a 1 %
// keep threshold) is at least `aa_spread` (the calibrated A/A spread), else a sentence
// saying the runner's noise is larger than the effect.
std::string noise_warning(double effect, double aa_spread);

// gates::Timing from a comparison and its samples. Roofline fields are filled when
// min_bytes and bandwidth_gbps are both > 0 (floor = bytes / bandwidth).
gates::Timing to_timing(const Comparison& c, std::span<const double> baseline_us,
                        std::span<const double> candidate_us, const std::string& timer,
                        double min_bytes = 0, double bandwidth_gbps = 0);

}  // namespace kgate::stats

#pragma once
// The one set of rules that turns a speedup interval into a decision, for every place that
// decides: a search keeping a candidate, a run's final number counting as improved, a PR
// check calling a change improved or regressed, a run or PR check regressing against the
// accepted results, an A/A calibration crying wolf. The
// statistics (stats/compare.cpp) give the interval and their own verdict; this is the
// policy on top of them.
#include "config/types.h"
#include "verdict/verdict.h"

namespace kgate::gates {

struct SpeedPolicy {
  double keep_threshold = 1.01;        // K
  double regression_threshold = 1.03;  // R

  static SpeedPolicy of(const config::GateThresholds& g) { return {g.keep_threshold, g.regression_threshold}; }

  // Kept (search) and improved (a run's final number, a PR check): the lower bound of
  // the speedup clears K.
  bool clears_keep(double speedup_lo) const { return speedup_lo >= keep_threshold; }
  bool clears_keep(const Timing& t) const { return clears_keep(t.speedup_lo); }

  // The whole interval beyond R: even its upper bound is slower than 1/R.
  bool beyond_regression(double speedup_hi) const {
    return speedup_hi > 0 && speedup_hi * regression_threshold < 1;
  }

  // Significantly slower, in one interleaved measurement (a PR check against its base):
  // the statistics' own verdict `slower` (half of R in log space, with significance;
  // docs/measurement.md), or an interval wholly beyond R.
  bool slower(double speedup_hi, SpeedVerdict verdict = SpeedVerdict::kUnknown) const {
    return verdict == SpeedVerdict::kSlower || beyond_regression(speedup_hi);
  }
  bool slower(const Timing& t) const { return slower(t.speedup_hi, t.verdict); }

  // Regressed against a result of another run (the accepted result of the history, a
  // re-measure of the accepted kernel): two runs differ by their nights' drift as well as
  // by their noise, so the statistics' `slower` alone does not count. The interval must lie
  // wholly beyond R and the comparison be significant at `alpha`.
  bool regressed(double speedup_hi, double p_value, double alpha) const {
    return beyond_regression(speedup_hi) && p_value < alpha;
  }
  bool regressed(const Timing& t, double alpha) const { return regressed(t.speedup_hi, t.p_value, alpha); }

  // An A/A comparison (one kernel against itself) that the rules above would act on.
  bool aa_alarm(double speedup_lo, double speedup_hi, SpeedVerdict verdict = SpeedVerdict::kUnknown) const {
    return clears_keep(speedup_lo) || slower(speedup_hi, verdict);
  }
};

}  // namespace kgate::gates

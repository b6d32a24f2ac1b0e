#include "verdict/speed_policy.h"

#include <gtest/gtest.h>

namespace kgate::gates {
namespace {

Timing timing(double s, double lo, double hi, SpeedVerdict v = SpeedVerdict::kUnknown) {
  Timing t;
  t.speedup = s;
  t.speedup_lo = lo;
  t.speedup_hi = hi;
  t.verdict = v;
  return t;
}

// One rule for keep and improved: a search keeps exactly what a run reports as improved
// and a PR check calls improved (the lower bound at the threshold counts, as keep did).
TEST(SpeedPolicy, KeepAndImprovedAreOneRule) {
  SpeedPolicy p{1.01, 1.03};
  EXPECT_TRUE(p.clears_keep(timing(1.02, 1.01, 1.03)));
  EXPECT_FALSE(p.clears_keep(timing(1.02, 1.0099, 1.03)));
  config::GateThresholds g;
  g.keep_threshold = 1.05;
  g.regression_threshold = 1.10;
  EXPECT_FALSE(SpeedPolicy::of(g).clears_keep(1.04));
  EXPECT_TRUE(SpeedPolicy::of(g).clears_keep(1.05));
}

TEST(SpeedPolicy, SlowerIsTheStatisticsVerdictOrAnIntervalBeyondTheThreshold) {
  SpeedPolicy p{1.01, 1.03};
  EXPECT_TRUE(p.slower(timing(0.95, 0.94, 0.96)));                        // wholly beyond 1/R
  EXPECT_FALSE(p.slower(timing(0.98, 0.96, 0.99, SpeedVerdict::kSame)));  // within R, not significant
  EXPECT_TRUE(p.slower(timing(0.98, 0.96, 0.99, SpeedVerdict::kSlower))); // the statistics say slower
  EXPECT_FALSE(p.slower(timing(0, 0, 0)));                                 // no timing is no slowdown
}

// An A/A alarm is any comparison of a kernel with itself that keep or slower would act on.
TEST(SpeedPolicy, AnAAAlarmIsWhatTheRulesWouldActOn) {
  SpeedPolicy p{1.10, 1.10};
  EXPECT_FALSE(p.aa_alarm(0.99, 1.01));
  EXPECT_TRUE(p.aa_alarm(1.10, 1.2));
  EXPECT_TRUE(p.aa_alarm(0.85, 0.9));
  EXPECT_TRUE(p.aa_alarm(0.97, 0.99, SpeedVerdict::kSlower));
}

}  // namespace
}  // namespace kgate::gates

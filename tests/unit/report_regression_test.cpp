// Regression classification of re-verification and interleaved re-measure results.
#include "report/regression.h"

#include <gtest/gtest.h>

namespace kgate::report {
namespace {

gates::CandidateVerdict passing(double speedup, double lo, double hi, double p) {
  gates::CandidateVerdict v;
  v.passed = true;
  for (auto g : {gates::Gate::kStatic, gates::Gate::kCorrectness, gates::Gate::kOracle})
    v.gates.push_back({g, gates::GateStatus::kPass, "", "", gates::Fault::kNone, 0.1, {}});
  gates::Timing t;
  t.speedup = speedup;
  t.speedup_lo = lo;
  t.speedup_hi = hi;
  t.p_value = p;
  v.timing = t;
  return v;
}

TEST(ReportRegression, CorrectnessAlwaysFails) {
  auto v = passing(1.0, 0.99, 1.01, 0.9);
  v.gates[2].status = gates::GateStatus::kFail;
  v.gates[2].reason = "rho 31 > 10";
  v.gates[2].failed_case = "seed=3";
  RegressionCheck c = classify_regression(v, {});
  EXPECT_EQ(c.kind, RegressionKind::kCorrectness);
  EXPECT_TRUE(c.fails_pipeline);
  EXPECT_NE(c.message.find("oracle gate"), std::string::npos);
  EXPECT_NE(c.message.find("rho 31 > 10"), std::string::npos);

  auto crash = passing(1.0, 0.99, 1.01, 0.9);
  crash.gates[1].status = gates::GateStatus::kError;
  crash.gates[1].fault = gates::Fault::kCrash;
  EXPECT_EQ(classify_regression(crash, {}).kind, RegressionKind::kCorrectness);
}

TEST(ReportRegression, PerformanceNeedsEffectAndConfidence) {
  RegressionPolicy p;  // 1.03, alpha 0.05, not failing
  EXPECT_EQ(classify_regression(passing(0.90, 0.88, 0.92, 0.001), p).kind,
            RegressionKind::kPerformance);
  EXPECT_FALSE(classify_regression(passing(0.90, 0.88, 0.92, 0.001), p).fails_pipeline);
  // Within the threshold: CI reaches above 1/1.03.
  EXPECT_EQ(classify_regression(passing(0.98, 0.975, 0.985, 0.001), p).kind,
            RegressionKind::kNone);
  // Large effect but not significant (noisy).
  EXPECT_EQ(classify_regression(passing(0.90, 0.80, 0.95, 0.2), p).kind, RegressionKind::kNone);
  // Faster is never a regression.
  EXPECT_EQ(classify_regression(passing(1.2, 1.1, 1.3, 0.001), p).kind, RegressionKind::kNone);
  // No timing: nothing to say about speed.
  auto no_timing = passing(1, 1, 1, 1);
  no_timing.timing.reset();
  EXPECT_EQ(classify_regression(no_timing, p).kind, RegressionKind::kNone);

  p.fail_on_performance = true;
  RegressionCheck c = classify_regression(passing(0.90, 0.88, 0.92, 0.001), p);
  EXPECT_TRUE(c.fails_pipeline);
  EXPECT_NE(c.message.find("0.900x"), std::string::npos) << c.message;
  p.threshold = 1.2;  // a looser suite
  EXPECT_EQ(classify_regression(passing(0.90, 0.88, 0.92, 0.001), p).kind, RegressionKind::kNone);
}

TEST(ReportRegression, FailingPerformanceGateAloneIsNotCorrectness) {
  auto v = passing(0.9, 0.88, 0.92, 0.001);
  v.gates.push_back({gates::Gate::kPerformance, gates::GateStatus::kFail, "slower", "",
                     gates::Fault::kNone, 1, {}});
  EXPECT_EQ(classify_regression(v, {}).kind, RegressionKind::kPerformance);
}

// The rule lives in the one speed policy (verdict/speed_policy.h): classify_regression is
// SpeedPolicy::regressed with the regression policy's threshold, and stricter than the PR
// check's `slower` (one interleaved measurement, where the statistics' verdict suffices).
TEST(ReportRegression, TheRuleIsTheSpeedPolicys) {
  RegressionPolicy p;
  p.threshold = 1.1;
  const gates::SpeedPolicy sp = policy_of(p);
  EXPECT_DOUBLE_EQ(sp.regression_threshold, 1.1);
  struct Case {
    double speedup, lo, hi, p_value;
    gates::SpeedVerdict verdict;
  };
  const Case cases[] = {
      {0.80, 0.78, 0.82, 1e-4, gates::SpeedVerdict::kSlower},   // beyond 1/1.1, significant
      {0.80, 0.78, 0.82, 0.2, gates::SpeedVerdict::kSame},      // beyond, not significant
      {0.95, 0.93, 0.97, 1e-4, gates::SpeedVerdict::kSlower},   // significant, within 1.1
      {0.91, 0.905, 0.915, 0.01, gates::SpeedVerdict::kSlower}, // reaches above 1/1.1 = 0.909
      {1.20, 1.10, 1.30, 1e-4, gates::SpeedVerdict::kFaster},
  };
  for (const Case& c : cases) {
    auto v = passing(c.speedup, c.lo, c.hi, c.p_value);
    v.timing->verdict = c.verdict;
    const bool perf = classify_regression(v, p).kind == RegressionKind::kPerformance;
    EXPECT_EQ(perf, sp.regressed(*v.timing, p.alpha)) << c.speedup << " [" << c.lo << ", " << c.hi << "]";
    EXPECT_EQ(perf, c.hi * 1.1 < 1 && c.p_value < 0.05) << c.speedup;
    // Whatever regresses across runs is also `slower` within one measurement.
    if (perf) {
      EXPECT_TRUE(sp.slower(*v.timing));
    }
  }
  // Significant and slower, but within the threshold: slower for a PR check's A/B, no
  // regression against an accepted result of another night.
  auto v = passing(0.95, 0.93, 0.97, 1e-4);
  v.timing->verdict = gates::SpeedVerdict::kSlower;
  EXPECT_TRUE(sp.slower(*v.timing));
  EXPECT_FALSE(sp.regressed(*v.timing, 0.05));
  EXPECT_EQ(classify_regression(v, p).kind, RegressionKind::kNone);
}

}  // namespace
}  // namespace kgate::report

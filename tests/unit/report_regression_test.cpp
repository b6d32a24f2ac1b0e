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

}  // namespace
}  // namespace kgate::report

#include "native/stopping_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace kgate::native {
namespace {

protocol::TimeParams params() {
  protocol::TimeParams p;
  p.min_time_s = 0.5;
  p.max_time_s = 5;
  p.min_samples = 10;
  p.max_samples = 100;
  p.target_rse = 0.01;
  return p;
}

std::vector<double> noisy(std::size_t n, double mean, double sd, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(d(g));
  return v;
}

TEST(NativeStoppingRule, WaitsForMinTimeAndMinSamples) {
  StoppingRule r(params());
  std::vector<std::vector<double>> quiet = {std::vector<double>(20, 1.0), std::vector<double>(20, 2.0)};
  EXPECT_EQ(r.evaluate(quiet, 0.1), StopReason::kContinue);  // before min_time
  std::vector<std::vector<double>> few = {std::vector<double>(5, 1.0), std::vector<double>(5, 2.0)};
  EXPECT_EQ(r.evaluate(few, 1.0), StopReason::kContinue);  // below min_samples
  EXPECT_EQ(r.evaluate(quiet, 1.0), StopReason::kConverged);
}

TEST(NativeStoppingRule, EverySlotMustConverge) {
  StoppingRule r(params());
  std::vector<std::vector<double>> s = {std::vector<double>(50, 1.0), noisy(50, 10, 5, 3)};
  EXPECT_EQ(r.evaluate(s, 1.0), StopReason::kContinue);
}

TEST(NativeStoppingRule, HardCapsWin) {
  StoppingRule r(params());
  std::vector<std::vector<double>> s = {noisy(50, 10, 5, 4), noisy(50, 10, 5, 5)};
  EXPECT_EQ(r.evaluate(s, 5.0), StopReason::kMaxTime);
  std::vector<std::vector<double>> many = {noisy(100, 10, 5, 6), noisy(100, 10, 5, 7)};
  EXPECT_EQ(r.evaluate(many, 1.0), StopReason::kMaxSamples);
}

// The loop's decision, as both native timers take it after every round: the caps at once,
// the convergence check (it sorts) every kCheckEvery rounds and at the time cap.
TEST(NativeStoppingRule, AfterRoundChecksCapsEveryRoundAndConvergenceEveryFew) {
  StoppingRule r(params());
  std::vector<double> a(20, 1.0), b(20, 2.0);
  StoppingRule::Samples quiet = {a, b};
  for (std::size_t round = 0; round + 1 < StoppingRule::kCheckEvery; ++round)
    EXPECT_EQ(r.after_round(round, quiet, 1.0), StopReason::kContinue) << round;
  EXPECT_EQ(r.after_round(StoppingRule::kCheckEvery - 1, quiet, 1.0), StopReason::kConverged);
  EXPECT_EQ(r.after_round(0, quiet, 5.0), StopReason::kMaxTime);  // the time cap: any round
  std::vector<double> full(100, 1.0);
  EXPECT_EQ(r.after_round(0, StoppingRule::Samples{full, full}, 0.1), StopReason::kMaxSamples);
  EXPECT_STREQ(stop_reason_name(StopReason::kConverged), "converged");
  EXPECT_STREQ(stop_reason_name(StopReason::kContinue), "");
}

// A slot whose samples give no finite spread (NaN timings) is never "converged"; the CUDA
// timer's own check once read `rse > target` and stopped on it.
TEST(NativeStoppingRule, ANaNSpreadIsNotConverged) {
  protocol::TimeParams p = params();
  p.min_samples = 1;
  StoppingRule r(p);
  std::vector<double> nan(20, std::nan("")), ok(20, 1.0);
  EXPECT_EQ(r.evaluate(StoppingRule::Samples{ok, nan}, 1.0), StopReason::kContinue);
  EXPECT_EQ(r.evaluate(StoppingRule::Samples{ok, nan}, 5.0), StopReason::kMaxTime);
  // Three samples at least, whatever min_samples says.
  std::vector<double> two(2, 1.0);
  EXPECT_EQ(r.evaluate(StoppingRule::Samples{two, two}, 1.0), StopReason::kContinue);
}

}  // namespace
}  // namespace kgate::native

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

}  // namespace
}  // namespace kgate::native

// Descriptive statistics: exact values on small hand-checked inputs, and the median's
// standard error against its known asymptotic value on synthetic normal noise.
#include "stats/descriptive.h"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/rng.h"

namespace kgate::stats {
namespace {

std::vector<double> normal_samples(uint64_t seed, std::size_t n, double mu, double sigma) {
  core::Rng rng(seed);
  std::vector<double> v(n);
  for (double& x : v) x = mu + sigma * rng.normal();
  return v;
}

TEST(StatsDescriptive, MedianOddEvenAndUnsorted) {
  const std::vector<double> odd{5, 1, 3};
  const std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(odd), 3);
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{7}), 7);
  EXPECT_TRUE(std::isnan(median(std::vector<double>{})));
}

TEST(StatsDescriptive, QuantileIsType7) {
  // numpy.quantile([1, 2, 3, 4], q) -> 1.75, 2.5, 3.25; [10, 20, 30, 40, 50], 0.1 -> 14
  const std::vector<double> x{4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(quantile(x, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(x, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(x, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile(x, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile(x, -3), 1);  // clamped
  EXPECT_DOUBLE_EQ(quantile(x, 7), 4);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{10, 20, 30, 40, 50}, 0.1), 14);
  EXPECT_TRUE(std::isnan(quantile(std::vector<double>{}, 0.5)));
}

TEST(StatsDescriptive, MeanStddevMad) {
  const std::vector<double> x{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(x), 5);
  EXPECT_NEAR(stddev(x), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{3}), 0);
  // |x - 2| of {1,1,2,2,4,6,9} = {1,1,0,0,2,4,7}: median 1.
  EXPECT_DOUBLE_EQ(mad(std::vector<double>{1, 1, 2, 2, 4, 6, 9}), 1);
  // Mean keeps precision far from zero.
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{1e9 + 1, 1e9 + 2, 1e9 + 3}), 1e9 + 2);
}

TEST(StatsDescriptive, MedianRseIsInfiniteForTooFewOrZero) {
  EXPECT_TRUE(std::isinf(median_rse(std::vector<double>{1, 2})));
  EXPECT_TRUE(std::isinf(median_rse(std::vector<double>{-1, 0, 1})));
  EXPECT_DOUBLE_EQ(median_rse(std::vector<double>{5, 5, 5, 5, 5}), 0);
  EXPECT_GT(median_rse(std::vector<double>{1, 2, 3}), 0);
}

TEST(StatsDescriptive, MedianSeMatchesAsymptoticValueUnderNormalNoise) {
  // SE(median) -> sigma * sqrt(pi / 2) / sqrt(n) for normal data.
  const std::size_t n = 1000;
  const double sigma = 1.0;
  double sum = 0;
  const int reps = 200;
  for (int s = 0; s < reps; ++s) sum += median_se(normal_samples(100 + s, n, 50, sigma));
  const double avg = sum / reps;
  const double want = sigma * std::sqrt(std::numbers::pi / 2) / std::sqrt(double(n));
  EXPECT_NEAR(avg / want, 1.0, 0.1) << "avg " << avg << " want " << want;

  // And the estimate matches the spread of the median over repeated experiments.
  std::vector<double> medians;
  for (int s = 0; s < reps; ++s) medians.push_back(median(normal_samples(900 + s, n, 50, sigma)));
  EXPECT_NEAR(stddev(medians) / avg, 1.0, 0.2);
}

TEST(StatsDescriptive, MedianRseShrinksLikeInverseSqrtN) {
  auto avg_rse = [](std::size_t n) {
    double sum = 0;
    for (int s = 0; s < 100; ++s) sum += median_rse(normal_samples(7 + s, n, 100, 1));
    return sum / 100;
  };
  const double r100 = avg_rse(100), r400 = avg_rse(400), r1600 = avg_rse(1600);
  EXPECT_NEAR(r100 / r400, 2.0, 0.3);
  EXPECT_NEAR(r400 / r1600, 2.0, 0.3);
  EXPECT_NEAR(r100 / r1600, 4.0, 0.6);
}

TEST(StatsDescriptive, SummaryIsRobustToOutliers) {
  std::vector<double> x = normal_samples(3, 200, 100, 1);
  const Summary clean = summarize(x);
  for (int i = 0; i < 10; ++i) x[static_cast<std::size_t>(i * 17)] = 1000;  // preemption spikes
  const Summary dirty = summarize(x);
  EXPECT_EQ(dirty.n, 200u);
  EXPECT_EQ(dirty.outliers, 10u);
  EXPECT_EQ(clean.outliers, 0u);
  EXPECT_NEAR(dirty.median, clean.median, 0.2);
  EXPECT_NEAR(dirty.trimmed_mean, 100, 0.3);
  EXPECT_GT(dirty.mean, 140);  // the mean is dragged; that is why kgate decides on medians
  EXPECT_NEAR(dirty.robust_cv, 0.01, 0.003);
  EXPECT_GT(dirty.stddev / dirty.mean, 0.5);
  EXPECT_LE(dirty.q1, dirty.median);
  EXPECT_LE(dirty.median, dirty.q3);
  EXPECT_LE(dirty.p05, dirty.q1);
  EXPECT_GE(dirty.p95, dirty.q3);
  EXPECT_EQ(dirty.max, 1000);
}

TEST(StatsDescriptive, SummaryOfEmptyIsNaNNotACrash) {
  const Summary s = summarize(std::vector<double>{});
  EXPECT_EQ(s.n, 0u);
  EXPECT_TRUE(std::isnan(s.median));
}

TEST(StatsRng, IsDeterministicAndRoughlyCorrect) {
  core::Rng a(42), b(42), c(43);
  EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_NE(a.next_u64(), c.next_u64());
  core::Rng r(1);
  std::vector<double> g, be;
  for (int i = 0; i < 20000; ++i) {
    g.push_back(r.gamma(3.0));
    be.push_back(r.beta(2.0, 5.0));
  }
  EXPECT_NEAR(mean(g), 3.0, 0.05);
  EXPECT_NEAR(mean(be), 2.0 / 7.0, 0.005);
  std::vector<double> nv;
  for (int i = 0; i < 20000; ++i) nv.push_back(r.normal());
  EXPECT_NEAR(mean(nv), 0, 0.03);
  EXPECT_NEAR(stddev(nv), 1, 0.03);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(r.below(7), 7u);
}

}  // namespace
}  // namespace kgate::stats

// The Python worker's rse_of_median (kgate_worker/stats.py) stops its timing on the same
// number: both are pinned to tests/fixtures/stats/median_rse.json.
namespace kgate::stats {
namespace {

TEST(MedianRse, MatchesTheFixtureThePythonWorkerIsPinnedTo) {
  std::ifstream in(std::string(KGATE_SOURCE_DIR) + "/tests/fixtures/stats/median_rse.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json fx = nlohmann::json::parse(in);
  ASSERT_GE(fx["cases"].size(), 8u);
  for (const auto& c : fx["cases"]) {
    const std::vector<double> x = c["samples"].get<std::vector<double>>();
    const double got = median_rse(x);
    if (c["rse"].is_null()) {
      EXPECT_TRUE(std::isinf(got)) << c["name"] << ": " << got;
    } else {
      EXPECT_NEAR(got, c["rse"].get<double>(), 1e-12 + 1e-9 * c["rse"].get<double>()) << c["name"];
    }
  }
}

}  // namespace
}  // namespace kgate::stats

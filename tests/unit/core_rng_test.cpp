// core::Rng, kgate's one generator (correctness inputs and the statistics): platform-
// independent log and exp, streams, integer range, and golden values so an accidental
// change of the generator (which would change every recorded case) fails.
#include "core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace kgate::core {
namespace {

TEST(CoreRng, PortableLogMatchesLibm) {
  for (double x : {1e-300, 1e-20, 0.001, 0.25, 0.5, 0.7071, 0.7072, 0.999999, 1.0, 1.5, 3.0, 1e10}) {
    EXPECT_NEAR(portable_log(x), std::log(x), 4e-16 * std::fabs(std::log(x)) + 1e-300) << x;
  }
  EXPECT_EQ(portable_log(1.0), 0.0);
}

TEST(CoreRng, PortableExpMatchesLibm) {
  for (double x : {-745.0, -700.0, -20.5, -1.0, -1e-10, 0.0, 1e-10, 0.5, 0.6931471805599453, 1.0, 3.7, 88.0, 709.0}) {
    EXPECT_NEAR(portable_exp(x), std::exp(x), 4e-16 * std::exp(x) + 1e-320) << x;
  }
  EXPECT_EQ(portable_exp(0.0), 1.0);
  EXPECT_EQ(portable_exp(1000.0), HUGE_VAL);
  EXPECT_EQ(portable_exp(-1000.0), 0.0);
  EXPECT_NEAR(portable_pow(2.0, 0.5), std::sqrt(2.0), 1e-15);
}

TEST(CoreRng, StreamsDifferAndRepeat) {
  Rng a(7, 0), b(7, 0), c(7, 1), d(8, 0);
  for (int i = 0; i < 10; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
    EXPECT_NE(x, d.next_u64());
  }
}

TEST(CoreRng, BelowStaysInRange) {
  Rng r(1, 2);
  int hits[5] = {};
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = r.below(5);
    ASSERT_LT(v, 5u);
    ++hits[v];
  }
  for (int h : hits) EXPECT_GT(h, 800);
}

TEST(CoreRng, GoldenPrefix) {
  Rng r(42, 0);
  char buf[128];
  const double u = r.uniform(), n1 = r.normal(), n2 = r.normal();
  std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g", u, n1, n2);
  EXPECT_STREQ(buf, "0.74649775675739327 -0.20598083306412807 0.6614463072192841");
}

// The statistics' draws (bootstrap resampling by Beta order statistics, synthetic noise)
// come from the same generator: Rng(seed) is stream 0, and gamma/beta use no libm.
TEST(CoreRng, GoldenStatisticsDraws) {
  Rng s(42);
  EXPECT_EQ(s.next_u64(), 13770453070501919820ull);
  Rng g(7);
  char buf[128];
  const double a = g.gamma(0.5), b = g.gamma(3.0), c = g.beta(2.0, 5.0);
  std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g", a, b, c);
  EXPECT_STREQ(buf, "0.25402332996131094 2.3398741978795217 0.53416464527236929");
}

}  // namespace
}  // namespace kgate::core

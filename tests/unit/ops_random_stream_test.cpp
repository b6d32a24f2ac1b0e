// RandomStream: platform-independent log, streams, integer range, and a golden prefix so
// an accidental change of the generator (which would change every recorded case) fails.
#include "ops/random_stream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace kgate::ops {
namespace {

TEST(OpsRandomStream, PortableLogMatchesLibm) {
  for (double x : {1e-300, 1e-20, 0.001, 0.25, 0.5, 0.7071, 0.7072, 0.999999, 1.0, 1.5, 3.0, 1e10}) {
    EXPECT_NEAR(RandomStream::portable_log(x), std::log(x), 4e-16 * std::fabs(std::log(x)) + 1e-300) << x;
  }
  EXPECT_EQ(RandomStream::portable_log(1.0), 0.0);
}

TEST(OpsRandomStream, StreamsDifferAndRepeat) {
  RandomStream a(7, 0), b(7, 0), c(7, 1), d(8, 0);
  for (int i = 0; i < 10; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
    EXPECT_NE(x, d.next());
  }
}

TEST(OpsRandomStream, BelowStaysInRange) {
  RandomStream r(1, 2);
  int hits[5] = {};
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = r.below(5);
    ASSERT_LT(v, 5u);
    ++hits[v];
  }
  for (int h : hits) EXPECT_GT(h, 800);
}

TEST(OpsRandomStream, GoldenPrefix) {
  RandomStream r(42, 0);
  char buf[128];
  const double u = r.uniform01(), n1 = r.normal(), n2 = r.normal();
  std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g", u, n1, n2);
  EXPECT_STREQ(buf, "0.74649775675739327 -0.20598083306412807 0.6614463072192841");
}

}  // namespace
}  // namespace kgate::ops

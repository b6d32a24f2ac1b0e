#include "stats/throttle.h"

#include <gtest/gtest.h>

namespace kgate::stats {
namespace {

TEST(StatsThrottle, DefaultClockUnlessTheRunItselfSitsBelowTheLine) {
  // A run at boost with a few dips: judged against the default clock.
  std::vector<int> boost(100, 1980);
  boost[3] = boost[50] = 1200;
  ThrottleReference r = throttle_reference(boost, 1980, 0.75);
  EXPECT_EQ(r.mhz, 1980);
  EXPECT_FALSE(r.steady_low);
  EXPECT_TRUE(r.note.empty());
  // A power-bound GEMM settled at ~1400 MHz (under 75% of 1980): its median is the line,
  // so only samples under 75% of 1400 would still count as throttled.
  std::vector<int> power;
  for (int i = 0; i < 99; ++i) power.push_back(1380 + i % 40);
  power.push_back(900);
  r = throttle_reference(power, 1980, 0.75);
  EXPECT_TRUE(r.steady_low);
  EXPECT_NEAR(r.mhz, 1400, 20);
  EXPECT_NE(r.note.find("1980"), std::string::npos) << r.note;
  EXPECT_LT(900, 0.75 * r.mhz);  // the one real dip is still dropped
}

TEST(StatsThrottle, UnknownClocksAndNoDefaultDropNothing) {
  EXPECT_EQ(throttle_reference({1500, 1500}, 0, 0.75).mhz, 0);
  ThrottleReference r = throttle_reference({0, 0, -1}, 1980, 0.75);
  EXPECT_EQ(r.mhz, 1980);
  EXPECT_FALSE(r.steady_low);
  EXPECT_EQ(throttle_reference({}, 1980, 0.75).mhz, 1980);
}

}  // namespace
}  // namespace kgate::stats

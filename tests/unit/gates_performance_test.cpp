#include "gates/performance_gate.h"

#include <random>

#include <gtest/gtest.h>

namespace kgate::gates {
namespace {

// Synthetic interleaved samples: median `us`, 1 % noise, deterministic.
std::vector<double> samples(double us, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, 0.01 * us);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(us + noise(rng));
  return v;
}

protocol::TimeResult timed(double cand_us, double base_us, double min_bytes = 0) {
  protocol::TimeResult r;
  r.samples_us["candidate"] = samples(cand_us, 60, 1);
  r.samples_us["baseline"] = samples(base_us, 60, 2);
  r.timer = "steady_clock";
  r.min_bytes = min_bytes;
  return r;
}

TEST(PerformanceGate, FasterAndSamePass) {
  config::GateThresholds t;
  auto fast = judge_performance(timed(80, 100), "R=256,C=1024/f32", t, 0, 30);
  EXPECT_EQ(fast.gate.status, GateStatus::kPass) << fast.gate.reason;
  EXPECT_EQ(fast.timing.verdict, SpeedVerdict::kFaster);
  EXPECT_NEAR(fast.timing.speedup, 1.25, 0.03);
  EXPECT_LT(fast.timing.speedup_lo, fast.timing.speedup);
  auto same = judge_performance(timed(100, 100), "c", t, 0, 30);
  EXPECT_EQ(same.gate.status, GateStatus::kPass) << same.gate.reason;
  EXPECT_NE(same.timing.verdict, SpeedVerdict::kSlower);
}

TEST(PerformanceGate, SlowerFailsWithNumbers) {
  config::GateThresholds t;
  auto j = judge_performance(timed(130, 100), "R=256,C=1024/f32", t, 0, 30);
  EXPECT_EQ(j.gate.status, GateStatus::kFail);
  EXPECT_EQ(j.timing.verdict, SpeedVerdict::kSlower);
  EXPECT_NE(j.gate.reason.find("performance: case R=256,C=1024/f32: slower than the baseline"),
            std::string::npos) << j.gate.reason;
  EXPECT_NE(j.gate.reason.find("speedup 0.7"), std::string::npos) << j.gate.reason;
}

TEST(PerformanceGate, BelowRooflineDoesLessWork) {
  config::GateThresholds t;  // slack 0.8
  // 2 MB at 10 GB/s = 200 us floor; a 5 us candidate is impossible.
  auto j = judge_performance(timed(5, 1000, 2e6), "c", t, 10, 30);
  EXPECT_EQ(j.gate.status, GateStatus::kFail);
  EXPECT_NE(j.gate.reason.find("does less work than the problem requires"), std::string::npos) << j.gate.reason;
  EXPECT_DOUBLE_EQ(j.timing.roofline_floor_us, 200);
  // At 90 % of the floor it is plausible (within the slack).
  auto ok = judge_performance(timed(180, 1000, 2e6), "c", t, 10, 30);
  EXPECT_EQ(ok.gate.status, GateStatus::kPass) << ok.gate.reason;
  EXPECT_NEAR(ok.timing.pct_roofline, 200.0 / 180.0, 0.02);
}

TEST(PerformanceGate, SideStreamWorkIsRejected) {
  config::GateThresholds t;
  auto r = timed(50, 100);
  r.side_stream_work = true;
  auto j = judge_performance(r, "c", t, 0, 30);
  EXPECT_EQ(j.gate.status, GateStatus::kFail);
  EXPECT_NE(j.gate.reason.find("outside the timed stream"), std::string::npos);
}

TEST(PerformanceGate, MissingSamplesAreAnError) {
  config::GateThresholds t;
  protocol::TimeResult r;
  r.samples_us["candidate"] = {1, 2, 3};
  auto j = judge_performance(r, "c", t, 0, 30);
  EXPECT_EQ(j.gate.status, GateStatus::kError);
  EXPECT_NE(j.gate.reason.find("no samples for the baseline"), std::string::npos);
}

}  // namespace
}  // namespace kgate::gates

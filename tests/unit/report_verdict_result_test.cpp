// The one copy of a verdict's timing into a record: a problem's result (a run's final
// re-measure, a PR check) and a search's experiment take the same numbers.
#include "report/verdict_result.h"

#include <gtest/gtest.h>

#include "search/experiment_record.h"

namespace kgate::report {
namespace {

gates::Timing timing() {
  gates::Timing t;
  t.baseline_us = 10;
  t.candidate_us = 8;
  t.speedup = 1.25;
  t.speedup_lo = 1.2;
  t.speedup_hi = 1.3;
  t.pct_roofline = 0.4;
  t.roofline_floor_us = 3.2;
  return t;
}

TEST(VerdictResult, ProblemResultTakesTheTiming) {
  gates::CandidateVerdict v;
  v.timing = timing();
  ProblemResult r;
  EXPECT_TRUE(take_timing(timing_fields(r), v));
  EXPECT_EQ(r.baseline_us, 10);
  EXPECT_EQ(r.best_us, 8);
  EXPECT_EQ(r.speedup, 1.25);
  EXPECT_EQ(r.speedup_lo, 1.2);
  EXPECT_EQ(r.speedup_hi, 1.3);
  EXPECT_EQ(r.pct_roofline, 0.4);
}

TEST(VerdictResult, NoTimingLeavesTheRecord) {
  ProblemResult r;
  EXPECT_FALSE(take_timing(timing_fields(r), gates::CandidateVerdict{}));
  EXPECT_EQ(r.baseline_us, 0);
  EXPECT_EQ(r.best_us, 0);
  EXPECT_EQ(r.speedup, 1);
  EXPECT_EQ(r.speedup_lo, 1);
  EXPECT_EQ(r.speedup_hi, 1);
}

TEST(VerdictResult, ExperimentRecordTakesTheSameNumbers) {
  search::ExperimentRecord e;
  take_timing(timing_fields(e), timing());
  EXPECT_EQ(e.compared_us, 10);
  EXPECT_EQ(e.latency_us, 8);
  EXPECT_EQ(e.speedup, 1.25);
  EXPECT_EQ(e.speedup_lo, 1.2);
  EXPECT_EQ(e.speedup_hi, 1.3);
  EXPECT_EQ(e.pct_roofline, 0.4);
  EXPECT_EQ(e.roofline_floor_us, 3.2);
}

}  // namespace
}  // namespace kgate::report

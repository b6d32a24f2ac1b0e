#pragma once
// Regression classification against the accepted kernel (docs/reports.md). The numbers come
// from the run (a re-verification through the gates and an interleaved A/B re-measure of
// the stored accepted kernel against tonight's); these helpers only classify them.
#include <string>

#include "verdict/speed_policy.h"
#include "verdict/verdict.h"
#include "report/history.h"

namespace kgate::report {

enum class RegressionKind { kNone, kCorrectness, kPerformance };
NLOHMANN_JSON_SERIALIZE_ENUM(RegressionKind, {{RegressionKind::kNone, "none"},
                                              {RegressionKind::kCorrectness, "correctness"},
                                              {RegressionKind::kPerformance, "performance"}})

struct RegressionPolicy {
  double threshold = 1.03;  // slowdown ratio (accepted / current speed) that counts
  double alpha = 0.05;      // significance the interleaved comparison must reach
  bool fail_on_performance = false;  // the suite's fail_on.performance
};

struct RegressionCheck {
  RegressionKind kind = RegressionKind::kNone;
  bool fails_pipeline = false;  // correctness: always; performance: when the suite says so
  std::string message;          // one line for reports and annotations
};

// The speed policy a regression policy applies (verdict/speed_policy.h, SpeedPolicy::regressed
// with its threshold as R).
gates::SpeedPolicy policy_of(const RegressionPolicy& p);

// Correctness: the re-verified accepted kernel fails (or errors in) any correctness gate
// (static, correctness, oracle). Performance: the interleaved re-measure (timing: baseline =
// the accepted kernel as stored, candidate = the kernel as it runs tonight) shows the
// candidate slower by more than the threshold with confidence: SpeedPolicy::regressed (the
// upper CI bound of the speedup below 1/threshold and p < alpha). A missing timing is
// never a perf regression.
RegressionCheck classify_regression(const gates::CandidateVerdict& reverify,
                                    const RegressionPolicy& policy);

// Tonight's result against the accepted one, as an A/B timing with baseline = the accepted
// result and candidate = this record: speedup = accepted best_us / best_us (< 1: slower).
// The samples are not stored, so the interval comes from the two records' own speedup
// intervals (each the interleaved measurement of its night, taken as that night's relative
// noise; combined in log space, sqrt(h_a^2 + h_b^2)) and p from the normal approximation
// on that scale. A record with a degenerate interval (nothing kept: speedup 1 [1, 1])
// contributes no width; the threshold then alone guards against run-to-run drift.
gates::Timing speed_vs_accepted(const ProblemResult& r, const AcceptedKernel& accepted);

// Compares every correct result of a search run or a PR check (a check that passes against
// its merge-base may still be slower than what the pipeline accepted: a slow kernel merged
// since, a slower machine) with the accepted result of its (problem, GPU, config) in the
// history: fills ProblemResult::vs_accepted, and a significant drop (classify_regression
// on speed_vs_accepted, with the run's regression_threshold and fail_on_performance)
// turns the outcome into `regressed` with the numbers in the reason, so every report and
// the exit code classify it as a performance regression. Idempotent: a record regressed by
// an earlier comparison gets its own outcome back first. Returns the regressions found.
int compare_with_accepted(RunRecords& run, const History& history, double alpha = 0.05);

}  // namespace kgate::report

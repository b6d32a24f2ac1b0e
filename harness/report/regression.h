#pragma once
// Regression classification against the accepted kernel (DESIGN.md §6). The numbers come
// from the run (a re-verification through the gates and an interleaved A/B re-measure of
// the stored accepted kernel against tonight's); these helpers only classify them.
#include <string>

#include "gates/verdict.h"

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

// Correctness: the re-verified accepted kernel fails (or errors in) any correctness gate
// (static, correctness, oracle). Performance: the interleaved re-measure (timing: baseline =
// the accepted kernel as stored, candidate = the kernel as it runs tonight) shows the
// candidate slower by more than the threshold with confidence: the upper CI bound of the
// speedup is below 1/threshold and p < alpha. A missing timing is never a perf regression.
RegressionCheck classify_regression(const gates::CandidateVerdict& reverify,
                                    const RegressionPolicy& policy);

}  // namespace kgate::report

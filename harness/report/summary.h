#pragma once
// The one place where numbers about a run are aggregated (docs/reports.md: reporters only
// format). summarize() turns the records of a run into per-level and overall counts,
// geomeans and fast_p, plus a per-problem row with its failure classification; every
// reporter (JUnit, Markdown, JSON, HTML, weekly) formats a Summary and computes nothing.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "report/record.h"
#include "report/run_info.h"

namespace kgate::report {

// The p values of fast_p (KernelBench: correct and speedup > p, over ALL problems).
inline constexpr double kFastP[] = {0.0, 1.0, 1.5, 2.0};
inline constexpr int kFastPCount = 4;

// How a problem's result shows up in CI (JUnit element, annotations, exit code).
enum class FailureKind {
  kNone,                   // passed
  kCorrectnessRegression,  // a kept/accepted kernel fails a correctness gate
  kPerformanceRegression,  // slower than what it is compared with, beyond the threshold
  kGateFailure,            // PR check: the changed kernel fails a gate
  kError,                  // crash, timeout, infrastructure
  kProblemError,           // the problem's own inputs are unusable (ProblemResult::error_kind)
  kSkipped,                // unsupported / not run
};
NLOHMANN_JSON_SERIALIZE_ENUM(FailureKind,
                             {{FailureKind::kNone, "none"},
                              {FailureKind::kCorrectnessRegression, "correctness_regression"},
                              {FailureKind::kPerformanceRegression, "performance_regression"},
                              {FailureKind::kGateFailure, "gate_failure"},
                              {FailureKind::kError, "error"},
                              {FailureKind::kProblemError, "problem_error"},
                              {FailureKind::kSkipped, "skipped"}})
std::string to_string(FailureKind k);
std::string to_string(Outcome o);

// Correct = what ships for this problem passes its gates: improved / matched / fallback
// (the baseline is kept), or a performance-only regression. Errors, skips and correctness
// regressions are not correct.
bool is_correct(const ProblemResult& r);
FailureKind classify(const ProblemResult& r, RunKind kind);

// The one outcome -> exit status policy (docs/reports.md), used by every reporter and by the
// exit codes of `kgate run`/`check`/`report`/`merge` alike, in `worse()`'s order: any
// infrastructure error (a problem without a verdict, a crash or timeout) is kInfra; else a
// problem whose own inputs are unusable is kUsage; else a failed gate or a correctness
// regression is kGateFailure, a performance regression too when `fail_on_performance`;
// else kPass.
ExitCode exit_code_of(const std::vector<FailureKind>& failures, bool fail_on_performance);

// An error row (JUnit <error>, a level's `errors`): infrastructure or the problem's inputs.
bool is_error(FailureKind k);

// Whether a row fails the pipeline as a failure (exit 1, JUnit <failure>, a level's
// `failures`): a correctness regression or a gate failure always, a performance
// regression when the suite gates on performance. Errors are exit 3 or 2 (JUnit <error>).
bool is_failing(FailureKind k, bool fail_on_performance);

struct ProblemRow {
  const ProblemResult* record = nullptr;  // points into the RunRecords summarized
  FailureKind failure = FailureKind::kNone;
  bool correct = false;
  std::optional<double> speedup_vs_eager;    // eager_us / best_us, when both measured
  std::optional<double> speedup_vs_compile;  // compile_us / best_us
  std::optional<double> speedup_vs_max_autotune;  // compile_max_autotune_us / best_us
  std::string message;  // one line: why it failed / was skipped ("" when passed)
};

struct LevelSummary {
  std::string level;   // "" for the overall row
  int problems = 0;
  int improved = 0, matched = 0, fallback = 0, regressed = 0, skipped = 0;
  // Problems without a result, split as the result line and the JUnit split them: `failed`
  // ended at a gate (a starter that fails its own gates, a PR check's change that fails a
  // static/correctness/oracle gate: a JUnit <failure>), `errors` could not be run or judged
  // (the JUnit <error> count: only such a problem is an error). `regressed` counts the
  // regressions the result line counts (correctness and performance).
  int failed = 0, errors = 0;
  int correct = 0;
  // Geomeans over correct results; nullopt when no correct result has that time.
  std::optional<double> geomean_speedup;             // vs each record's own baseline
  std::optional<double> geomean_vs_eager;
  std::optional<double> geomean_vs_compile;
  std::optional<double> geomean_vs_max_autotune;     // torch.compile max-autotune-no-cudagraphs
  // Dispatch-aware (compiled-mode) problems: how many, and their fallbacks by kind
  // ("no-triton", "extern-dominated", "at-roofline", "gate-failed", "not-faster").
  int compiled = 0;
  std::map<std::string, int> fallback_kinds;
  // their experiments' wall times after the baseline (s), how many the screen reverted, and
  // the median and 90th percentile of those times (nullopt without experiments)
  std::vector<double> experiment_wall_s;
  int experiments_screened = 0;
  std::optional<double> experiment_wall_median_s, experiment_wall_p90_s;
  double fast_p[kFastPCount] = {0, 0, 0, 0};         // fractions in [0, 1]
  int fast_p_count[kFastPCount] = {0, 0, 0, 0};
  double wall_s = 0;
  int failures = 0;   // JUnit <failure> count (correctness regressions, gate failures, and
                      // performance regressions when the suite gates on them)
};

// A vs-reference column left empty, and why: "kb-level1/23_Softmax vs eager", or
// "... (every mode)" when no mode was measured (ProblemResult::references_missing).
struct MissingReference {
  std::string what;
  std::string why;
};

// What every report says of a run stopped before it finished (RunInfo::interrupted).
inline constexpr const char* kInterruptedWhy =
    "interrupted: the run was stopped before it finished, exit 130; `kgate run --resume` finishes it";

// What every report says of a merge without every shard's output (RunInfo::missing_shards):
// "shard 2/4 is missing: kgate merge was not given its output; its problems have no result"
// ("" when none is). An infrastructure error, exit 3.
std::string missing_shards_why(const RunInfo& info);

struct Summary {
  const RunInfo* info = nullptr;
  std::vector<LevelSummary> levels;   // sorted by level id
  LevelSummary overall;
  std::vector<ProblemRow> rows;       // sorted by (level, problem)
  int correctness_regressions = 0;
  int performance_regressions = 0;
  int gate_failures = 0;
  int errors = 0;
  // What the pipeline should say (exit_code_of over the rows): infrastructure errors,
  // correctness regressions and gate failures always fail; performance regressions only
  // when the suite opts in (RunInfo::fail_on_performance). Every report and the exit code
  // of `kgate run`/`report`/`merge`/`check` say the same.
  ExitCode exit_code = ExitCode::kPass;
  bool pipeline_failed = false;  // exit_code != kPass
  // The worst rows first: correctness regressions, gate failures, errors, performance
  // regressions (slowest first); at most `limit`. For annotations.
  std::vector<const ProblemRow*> worst(size_t limit) const;
};

// `run` must outlive the Summary (rows point into it).
// Every empty vs-reference column of the run, in row order (report.md, report.html).
std::vector<MissingReference> missing_references(const Summary& s);

Summary summarize(const RunRecords& run);

// Geometric mean of positive values; nullopt when empty. Exposed for tests.
std::optional<double> geomean(const std::vector<double>& xs);

}  // namespace kgate::report

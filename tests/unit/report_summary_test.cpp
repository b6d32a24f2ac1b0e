// summarize(): counts, geomeans over correct results, fast_p over all problems, the
// failure classification and the pipeline verdict.
#include "report/summary.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using testing::fixture;
using testing::gate_row;

const LevelSummary& level(const Summary& s, const std::string& id) {
  for (const auto& l : s.levels)
    if (l.level == id) return l;
  throw std::runtime_error("no level " + id);
}

const ProblemRow& row(const Summary& s, const std::string& problem) {
  for (const auto& r : s.rows)
    if (r.record->problem == problem) return r;
  throw std::runtime_error("no problem " + problem);
}

TEST(ReportSummary, CountsGeomeansAndFastP) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  Summary s = summarize(run);
  ASSERT_EQ(s.levels.size(), 3u);

  const LevelSummary& l1 = level(s, "level1");
  EXPECT_EQ(l1.problems, 4);
  EXPECT_EQ(l1.improved, 1);
  EXPECT_EQ(l1.matched, 1);
  EXPECT_EQ(l1.fallback, 1);
  EXPECT_EQ(l1.regressed, 1);
  EXPECT_EQ(l1.correct, 3);  // the correctness regression is not correct
  ASSERT_TRUE(l1.geomean_speedup);
  EXPECT_NEAR(*l1.geomean_speedup, std::cbrt(1.8 * 1.003 * 1.0), 1e-9);
  ASSERT_TRUE(l1.geomean_vs_compile);
  EXPECT_NEAR(*l1.geomean_vs_compile, std::cbrt(4720 / 2622.2 * (321.0 / 320) * 1.0), 1e-9);
  ASSERT_TRUE(l1.geomean_vs_eager);
  EXPECT_NEAR(*l1.geomean_vs_eager, std::cbrt(6110 / 2622.2 * (8330.0 / 320) * (11400.0 / 3950)),
              1e-9);
  EXPECT_DOUBLE_EQ(l1.fast_p[0], 3.0 / 4);  // every correct result
  EXPECT_DOUBLE_EQ(l1.fast_p[1], 2.0 / 4);  // 1.8 and 1.003; the fallback's 1.0 is not > 1
  EXPECT_DOUBLE_EQ(l1.fast_p[2], 1.0 / 4);
  EXPECT_DOUBLE_EQ(l1.fast_p[3], 0.0);

  const LevelSummary& l2 = level(s, "level2");
  EXPECT_EQ(l2.problems, 2);
  EXPECT_EQ(l2.errors, 1);
  EXPECT_EQ(l2.correct, 1);  // a performance regression is still correct
  EXPECT_NEAR(*l2.geomean_speedup, 0.85, 1e-12);
  EXPECT_DOUBLE_EQ(l2.fast_p[0], 0.5);
  EXPECT_DOUBLE_EQ(l2.fast_p[1], 0.0);

  const LevelSummary& l3 = level(s, "level3");
  EXPECT_EQ(l3.skipped, 1);
  EXPECT_DOUBLE_EQ(l3.fast_p[1], 0.5);  // the skipped problem counts as not fast

  EXPECT_EQ(s.overall.problems, 8);
  EXPECT_EQ(s.overall.correct, 5);
  EXPECT_DOUBLE_EQ(s.overall.fast_p[1], 3.0 / 8);
  EXPECT_NEAR(*s.overall.geomean_speedup, std::pow(1.8 * 1.003 * 1.0 * 0.85 * 1.2, 1.0 / 5),
              1e-9);
}

TEST(ReportSummary, ClassifiesFailures) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  Summary s = summarize(run);
  EXPECT_EQ(row(s, "12_Matmul").failure, FailureKind::kCorrectnessRegression);
  EXPECT_EQ(row(s, "12_Gemm_Multiply_LeakyReLU").failure, FailureKind::kPerformanceRegression);
  EXPECT_EQ(row(s, "1_Conv2D_ReLU_BiasAdd").failure, FailureKind::kError);
  EXPECT_EQ(row(s, "44_MiniGPTBlock").failure, FailureKind::kSkipped);
  EXPECT_EQ(row(s, "36_RMSNorm").failure, FailureKind::kNone);  // fallback costs nothing
  EXPECT_EQ(row(s, "23_Softmax").failure, FailureKind::kNone);
  EXPECT_NE(row(s, "12_Matmul").message.find("NaN in output"), std::string::npos);
  EXPECT_NE(row(s, "12_Gemm_Multiply_LeakyReLU").message.find("0.850x"), std::string::npos);

  EXPECT_EQ(s.correctness_regressions, 1);
  EXPECT_EQ(s.performance_regressions, 1);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.gate_failures, 0);
  EXPECT_TRUE(s.pipeline_failed);

  auto worst = s.worst(10);
  ASSERT_EQ(worst.size(), 3u);
  EXPECT_EQ(worst[0]->record->problem, "12_Matmul");
  EXPECT_EQ(worst[1]->record->problem, "1_Conv2D_ReLU_BiasAdd");
  EXPECT_EQ(worst[2]->record->problem, "12_Gemm_Multiply_LeakyReLU");
  EXPECT_EQ(s.worst(1).size(), 1u);
}

TEST(ReportSummary, PerformanceRegressionFailsOnlyWhenTheSuiteSaysSo) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  // The infrastructure error alone fails the run (exit 3, as `kgate run` itself exits).
  std::erase_if(run.results, [](const ProblemResult& r) { return r.problem == "12_Matmul"; });
  EXPECT_EQ(summarize(run).exit_code, ExitCode::kInfra);
  // Drop it too: only the performance regression is left.
  std::erase_if(run.results, [](const ProblemResult& r) { return r.problem == "1_Conv2D_ReLU_BiasAdd"; });
  EXPECT_FALSE(summarize(run).pipeline_failed);
  EXPECT_EQ(summarize(run).exit_code, ExitCode::kPass);
  run.info.fail_on_performance = true;
  EXPECT_TRUE(summarize(run).pipeline_failed);
  EXPECT_EQ(summarize(run).exit_code, ExitCode::kGateFailure);
}

TEST(ReportSummary, CheckRunsReportGateFailures) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.info.kind = RunKind::kCheck;
  Summary s = summarize(run);
  EXPECT_EQ(row(s, "36_RMSNorm").failure, FailureKind::kGateFailure);  // change rejected
  EXPECT_EQ(row(s, "12_Matmul").failure, FailureKind::kGateFailure);
  EXPECT_EQ(s.gate_failures, 2);
  EXPECT_TRUE(s.pipeline_failed);
  // The level table counts what the result line counts: a check's change that failed a gate
  // is among the failed, not the regressed ("Regressed 1" above "0 correctness
  // regressions, 1 gate failures" before).
  EXPECT_EQ(s.overall.failed, s.gate_failures);
  EXPECT_EQ(s.overall.regressed, s.correctness_regressions + s.performance_regressions);
}

TEST(ReportSummary, TheLevelTableSplitsGateFailuresFromErrorsAsTheResultLineDoes) {
  // A starter that fails its own gates (outcome error, a failed gate) is a gate failure in
  // the result line and a JUnit <failure>: the level table counts it as failed, not among
  // the errors (a new user's run read "1 gate failures, 1 errors" above "Errors 2").
  RunRecords run = load_run_dir(fixture("run_basic"));
  ProblemResult* conv = nullptr;
  for (auto& r : run.results)
    if (r.problem == "1_Conv2D_ReLU_BiasAdd") conv = &r;
  ASSERT_NE(conv, nullptr);
  ProblemResult starter = *conv;
  starter.problem = "2_Conv_starter_fails";
  starter.gates = {gate_row(gates::Gate::kOracle, gates::GateStatus::kFail, gates::Fault::kNone,
                            "oracle: case c: rel_l2_err 0.01 > 10 x the reference's 1e-06")};
  run.results.push_back(starter);
  Summary s = summarize(run);
  EXPECT_EQ(s.gate_failures, 1);
  EXPECT_EQ(s.errors, 1);
  const LevelSummary& l2 = level(s, "level2");
  EXPECT_EQ(l2.failed, 1);
  EXPECT_EQ(l2.errors, 1);
  EXPECT_EQ(s.overall.failed, s.gate_failures);
  EXPECT_EQ(s.overall.errors, s.errors);
}

TEST(ReportSummary, GeomeanIgnoresNonPositive) {
  EXPECT_FALSE(geomean({}));
  EXPECT_FALSE(geomean({0.0, -1.0}));
  EXPECT_NEAR(*geomean({2.0, 8.0}), 4.0, 1e-12);
}

}  // namespace
}  // namespace kgate::report

namespace kgate::report {
namespace {

// A problem kgate could not judge on the machine (no case fit): an infrastructure error
// (exit 3), where the same gate with a verdict on the code is a gate failure (exit 1).
TEST(ReportSummary, AProblemKgateCannotJudgeIsAnErrorNotAGateFailure) {
  ProblemResult r;
  r.problem = "23_Softmax";
  r.outcome = Outcome::kError;
  r.reason = "kgate cannot judge this problem: cannot judge: no case could be checked (...)";
  r.gates = {gate_row(gates::Gate::kCorrectness, gates::GateStatus::kError, gates::Fault::kCannotJudge)};
  EXPECT_EQ(classify(r, RunKind::kRun), FailureKind::kError);
  EXPECT_EQ(exit_code_of({classify(r, RunKind::kRun)}, false), ExitCode::kInfra);
  r.gates[0].status = gates::GateStatus::kFail;
  r.gates[0].fault = gates::Fault::kNone;
  EXPECT_EQ(classify(r, RunKind::kRun), FailureKind::kGateFailure);
}

// A PR check's change that fails the correctness gate is a correctness regression where
// its base version passed the gates (base_correct), a gate failure where it did not.
TEST(ReportSummary, ACheckRegressesCorrectnessOnlyWhereTheBaseWasCorrect) {
  ProblemResult r;
  r.problem = "tiny_softmax";
  r.outcome = Outcome::kRegressed;
  r.gates = {gate_row(gates::Gate::kStatic, gates::GateStatus::kPass),
             gate_row(gates::Gate::kCorrectness, gates::GateStatus::kFail)};
  EXPECT_EQ(classify(r, RunKind::kCheck), FailureKind::kGateFailure);
  r.base_correct = true;
  EXPECT_EQ(classify(r, RunKind::kCheck), FailureKind::kCorrectnessRegression);
  EXPECT_EQ(exit_code_of({classify(r, RunKind::kCheck)}, false), ExitCode::kGateFailure);
  // A slower change is a performance regression whatever its base.
  r.gates = {gate_row(gates::Gate::kPerformance, gates::GateStatus::kFail)};
  EXPECT_EQ(classify(r, RunKind::kCheck), FailureKind::kPerformanceRegression);
}

// A problem whose own file the worker rejects is an error of the problem's inputs: exit 2
// (as a bad config is), counted among the errors, below an infrastructure error and above a
// failed gate in the one exit-code order (worse()).
TEST(ReportSummary, AProblemWithUnusableInputsIsAUsageErrorInTheOneOrder) {
  ProblemResult rejected;
  rejected.problem = "1_Broken";
  rejected.outcome = Outcome::kError;
  rejected.error_kind = kProblemErrorKind;
  rejected.reason = "lv/1_Broken.py:5: error: problem lv/1_Broken rejected by the worker: RuntimeError: x";
  const FailureKind problem = classify(rejected, RunKind::kRun);
  EXPECT_EQ(problem, FailureKind::kProblemError);
  EXPECT_EQ(classify(rejected, RunKind::kCheck), FailureKind::kProblemError);
  EXPECT_TRUE(is_error(problem));
  EXPECT_FALSE(is_failing(problem, true));
  EXPECT_EQ(exit_code_of({problem}, false), ExitCode::kUsage);
  EXPECT_EQ(exit_code_of({FailureKind::kGateFailure, problem}, false), ExitCode::kUsage);
  EXPECT_EQ(exit_code_of({problem, FailureKind::kError}, false), ExitCode::kInfra);
  EXPECT_EQ(exit_code_of({FailureKind::kError, FailureKind::kGateFailure}, false), ExitCode::kInfra);
  // Without the kind the same row is the runner's: infrastructure.
  rejected.error_kind.clear();
  EXPECT_EQ(classify(rejected, RunKind::kRun), FailureKind::kError);

  RunRecords run = load_run_dir(fixture("run_basic"));
  ProblemResult row = run.results.front();
  row.outcome = Outcome::kError;
  row.gates.clear();
  row.error_kind = kProblemErrorKind;
  row.reason = "p.py:5: error: problem x rejected by the worker: RuntimeError: x";
  run.results = {row};
  run.info.planned.clear();
  const Summary s = summarize(run);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.exit_code, ExitCode::kUsage);
  EXPECT_TRUE(s.pipeline_failed);
  ASSERT_EQ(s.levels.size(), 1u);
  EXPECT_EQ(s.levels[0].errors, 1);
}

}  // namespace
}  // namespace kgate::report

// write_reports(): the four files, GitHub job summary and annotations, errors.
#include "report/report_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "report/record_io.h"
#include "report/run_info.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

namespace fs = std::filesystem;
using namespace testing;

TEST(ReportWriter, WritesEveryReport) {
  TempDir d;
  fs::copy(fixture("run_basic"), d.path, fs::copy_options::recursive);
  unsetenv("GITHUB_STEP_SUMMARY");
  WrittenReports w = write_reports(d.str());
  EXPECT_EQ(w.files.size(), 4u);
  for (const char* f : {"junit.xml", "report.md", "report.json", "report.html"})
    EXPECT_TRUE(fs::exists(d.path / f)) << f;
  EXPECT_FALSE(fs::exists(d.path / "junit.xml.tmp"));
  EXPECT_TRUE(w.pipeline_failed);
  // The fixture run has an infrastructure error (level2/1_Conv2D_ReLU_BiasAdd, no verdict)
  // besides a correctness regression: the more severe status wins, as in `kgate run`.
  EXPECT_EQ(w.exit_code, ExitCode::kInfra);
  EXPECT_EQ(w.correctness_regressions, 1);
}

// One problem per outcome class: the exit status (the run's own policy), the Markdown
// result line, report.json and the JUnit element all say the same.
TEST(ReportWriter, EveryReportAndTheExitCodeAgree) {
  struct Case {
    const char* name;
    Outcome outcome;
    gates::GateStatus correctness;  // kSkipped = no gate table at all
    bool fail_on_performance;
    ExitCode want;
    const char* junit;  // element inside the testcase, "" = passed
  };
  const Case cases[] = {
      {"improved", Outcome::kImproved, gates::GateStatus::kPass, false, ExitCode::kPass, ""},
      {"fallback", Outcome::kFallback, gates::GateStatus::kPass, false, ExitCode::kPass, ""},
      {"starter-wrong-math", Outcome::kError, gates::GateStatus::kFail, false, ExitCode::kGateFailure, "failure"},
      {"starter-crash", Outcome::kError, gates::GateStatus::kError, false, ExitCode::kInfra, "error"},
      {"no-verdict", Outcome::kError, gates::GateStatus::kSkipped, false, ExitCode::kInfra, "error"},
      {"slower", Outcome::kRegressed, gates::GateStatus::kPass, false, ExitCode::kPass, ""},
      {"slower-gating", Outcome::kRegressed, gates::GateStatus::kPass, true, ExitCode::kGateFailure, "failure"},
      {"skipped", Outcome::kSkipped, gates::GateStatus::kSkipped, false, ExitCode::kPass, "skipped"},
  };
  unsetenv("GITHUB_STEP_SUMMARY");
  for (const Case& c : cases) {
    TempDir d;
    RunInfo info;
    info.suite = "agree";
    info.run_id = "r1";
    info.fail_on_performance = c.fail_on_performance;
    write_run_info(d.str(), info);
    ProblemResult r;
    r.run_id = "r1";
    r.level = "lv";
    r.problem = c.name;
    r.outcome = c.outcome;
    r.baseline_us = 10;
    r.best_us = c.outcome == Outcome::kRegressed ? 20 : 8;
    r.speedup = r.baseline_us / r.best_us;
    r.speedup_lo = r.speedup_hi = r.speedup;
    r.reason = "why";
    if (c.correctness != gates::GateStatus::kSkipped) {
      gates::GateResult g;
      g.gate = gates::Gate::kCorrectness;
      g.status = c.correctness;
      g.failed_case = c.correctness == gates::GateStatus::kPass ? "" : "seed=7/f32";
      g.reason = "correctness: case seed=7/f32: 12 elements over tolerance";
      r.gates = {g};
    }
    write_result(d.str(), r);
    WrittenReports w = write_reports(d.str());
    EXPECT_EQ(w.exit_code, c.want) << c.name;
    EXPECT_EQ(w.pipeline_failed, c.want != ExitCode::kPass) << c.name;
    std::string md = read_file(d / "report.md");
    EXPECT_NE(md.find(c.want == ExitCode::kPass ? "**Result: PASS**" : "**Result: FAIL**"), std::string::npos)
        << c.name;
    nlohmann::json j = nlohmann::json::parse(read_file(d / "report.json"));
    EXPECT_EQ(j["result"]["pipeline_failed"], c.want != ExitCode::kPass) << c.name;
    EXPECT_EQ(j["result"]["exit_code"], to_int(c.want)) << c.name;
    std::string xml = read_file(d / "junit.xml");
    for (const char* el : {"failure", "error", "skipped"}) {
      bool has = xml.find(std::string("<") + el + " ") != std::string::npos ||
                 xml.find(std::string("<") + el + ">") != std::string::npos ||
                 xml.find(std::string("<") + el + "/>") != std::string::npos;
      EXPECT_EQ(has, std::string(c.junit) == el) << c.name << ": <" << el << ">\n" << xml;
    }
    if (std::string(c.name) == "starter-wrong-math") {  // the gate and the case, in JUnit
      EXPECT_NE(xml.find("seed=7/f32"), std::string::npos) << xml;
    }
  }
}

TEST(ReportWriter, MissingRecordsThrowUsageError) {
  TempDir d;
  EXPECT_THROW(write_reports(d.str()), UsageError);
}

TEST(ReportWriter, GithubStepSummaryAndAnnotations) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.results[1].reason = "50% slower:\nsee, here";  // needs workflow-command escaping
  std::string summary = d / "step_summary.md";
  write_file(summary, "previous step\n");
  setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  ::testing::internal::CaptureStdout();
  write_reports(run, d.str());
  std::string out = ::testing::internal::GetCapturedStdout();
  unsetenv("GITHUB_STEP_SUMMARY");

  std::string md = read_file(summary);
  EXPECT_EQ(md.rfind("previous step\n", 0), 0u);  // appended, not replaced
  EXPECT_NE(md.find("# kgate report: nightly"), std::string::npos);
  auto lines = split_lines(out);
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0].rfind("::error title=correctness_regression%3A level1/12_Matmul::", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("::error title=error%3A level2/1_Conv2D_ReLU_BiasAdd::", 0), 0u);
  EXPECT_NE(lines[2].find("performance_regression"), std::string::npos);
}

TEST(ReportWriter, AnnotationsAreCappedAndEscaped) {
  RunRecords base = load_run_dir(fixture("run_basic"));
  RunRecords run;
  run.info = base.info;
  for (int i = 0; i < 30; ++i) {
    ProblemResult r = base.results[0];  // the correctness regression
    r.problem = "p" + std::to_string(i);
    r.gates[1].reason = "100% wrong\r\nreally";
    run.results.push_back(r);
  }
  Summary s = summarize(run);
  auto lines = github_annotations(s);
  EXPECT_EQ(lines.size(), 10u);
  EXPECT_NE(lines[0].find("100%25 wrong%0D%0Areally"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace kgate::report

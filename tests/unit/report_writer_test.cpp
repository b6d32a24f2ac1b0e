// write_reports(): the four files, GitHub job summary and annotations, errors.
#include "report/report_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "report/record_io.h"
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
  EXPECT_EQ(w.exit_code, ExitCode::kGateFailure);
  EXPECT_EQ(w.correctness_regressions, 1);
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

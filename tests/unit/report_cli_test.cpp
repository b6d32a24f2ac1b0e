// `kgate report` and `kgate merge` as a user runs them: exit codes and messages.
#include <gtest/gtest.h>

#include <filesystem>

#include "report_test_util.h"

namespace kgate::report {
namespace {

namespace fs = std::filesystem;
using namespace testing;

TEST(ReportCli, ReportFromRecords) {
  TempDir d;
  fs::copy(fixture("run_basic"), d.path / "run", fs::copy_options::recursive);
  auto [rc, out] = run_command(kgate_bin() + " report --from " + (d / "run") + " --out " +
                               (d / "reports"));
  EXPECT_EQ(rc, 0) << out;
  for (const char* f : {"junit.xml", "report.md", "report.json", "report.html"})
    EXPECT_TRUE(fs::exists(d.path / "reports" / f)) << f;
  // Without --out the reports land next to the records.
  auto [rc2, out2] = run_command(kgate_bin() + " report --from " + (d / "run"));
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_TRUE(fs::exists(d.path / "run" / "report.html"));
}

TEST(ReportCli, MalformedRecordExitsTwoNamingTheFile) {
  TempDir d;
  fs::copy(fixture("run_basic"), d.path, fs::copy_options::recursive);
  std::string bad = d / "results/level1__40_LayerNorm.json";
  write_file(bad, "{\"version\": 1, \"level\": \"level1\", \"problem\": 12,,}");
  auto [rc, out] = run_command(kgate_bin() + " report --from " + d.str());
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find(bad), std::string::npos) << out;
  EXPECT_EQ(out.find("internal error"), std::string::npos) << out;

  write_file(bad, "{\"version\": 99, \"level\": \"level1\", \"problem\": \"x\"}");
  auto [rc2, out2] = run_command(kgate_bin() + " report --from " + d.str());
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("unknown record version 99"), std::string::npos) << out2;
}

// A run killed after some of its problems: the ones it planned but never finished are in
// every report as errors (the report read PASS with them absent).
TEST(ReportCli, PlannedProblemsWithoutARecordAreErrorsInEveryReport) {
  TempDir d;
  fs::copy(fixture("run_basic"), d.path / "run", fs::copy_options::recursive);
  std::string info = read_file((d.path / "run" / "run.json").string());
  const std::string planned =
      "\"planned\": [\"level1/12_Matmul\", \"level1/23_Softmax\", \"level1/36_RMSNorm\", \"level1/40_LayerNorm\", "
      "\"level2/12_Gemm_Multiply_LeakyReLU\", \"level2/1_Conv2D_ReLU_BiasAdd\", \"level3/1_MLP\", "
      "\"level3/44_MiniGPTBlock\", \"level1/99_Never_Ran\"]";
  info.replace(info.find("\"planned\": []"), std::string("\"planned\": []").size(), planned);
  info.replace(info.find("\"finished_at\": \"2026-11-29T04:00:00Z\""),
               std::string("\"finished_at\": \"2026-11-29T04:00:00Z\"").size(), "\"finished_at\": \"\"");
  write_file((d.path / "run" / "run.json").string(), info);
  auto [rc, out] = run_command(kgate_bin() + " report --from " + (d / "run") + " --out " + (d / "reports"));
  // The exit code is the one the reports state (report.json's exit_code), and it fails.
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("1 of 9 planned problems have no result record (level1/99_Never_Ran)"), std::string::npos) << out;
  const std::string md = read_file((d.path / "reports" / "report.md").string());
  EXPECT_EQ(md.find("**Result: PASS**"), std::string::npos) << md.substr(0, 400);
  EXPECT_NE(md.find("99_Never_Ran"), std::string::npos);
  const std::string junit = read_file((d.path / "reports" / "junit.xml").string());
  EXPECT_NE(junit.find("99_Never_Ran"), std::string::npos);
  EXPECT_NE(junit.find("planned but no result"), std::string::npos);
  const std::string js = read_file((d.path / "reports" / "report.json").string());
  EXPECT_NE(js.find("\"pipeline_failed\": true"), std::string::npos);
  EXPECT_NE(js.find("\"exit_code\": " + std::to_string(rc)), std::string::npos) << "exit " << rc;
}

TEST(ReportCli, MissingRecordsExitTwo) {
  TempDir d;
  auto [rc, out] = run_command(kgate_bin() + " report --from " + d.str());
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("no result records"), std::string::npos) << out;
  auto [rc2, out2] = run_command(kgate_bin() + " report");
  EXPECT_EQ(rc2, 2) << out2;
}

}  // namespace
}  // namespace kgate::report

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

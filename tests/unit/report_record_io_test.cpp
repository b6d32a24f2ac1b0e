// Loading records: every bad input is a UsageError naming the file and the reason.
#include "report/record_io.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

namespace fs = std::filesystem;
using testing::fixture;
using testing::TempDir;
using testing::write_file;

// Copies the basic run into a temp dir so a test can break one file.
TempDir copy_basic() {
  TempDir d;
  fs::copy(fixture("run_basic"), d.path, fs::copy_options::recursive);
  return d;
}

std::string load_error(const std::string& dir) {
  try {
    load_run_dir(dir);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ReportRecordIo, LoadsARunDirectorySorted) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_EQ(run.results.size(), 8u);
  EXPECT_EQ(run.info.run_id, "nightly-20261129");
  EXPECT_EQ(run.info.config_hash, "cfg-1234");
  EXPECT_EQ(run.results.front().level, "level1");
  EXPECT_EQ(run.results.front().problem, "12_Matmul");
  EXPECT_EQ(run.results.back().level, "level3");
}

TEST(ReportRecordIo, WriteThenLoadRoundTrips) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  TempDir d;
  write_run_info(d.str(), run.info);
  for (const auto& r : run.results) write_result(d.str(), r);
  RunRecords again = load_run_dir(d.str());
  ASSERT_EQ(again.results.size(), run.results.size());
  for (size_t i = 0; i < run.results.size(); ++i)
    EXPECT_EQ(nlohmann::json(again.results[i]), nlohmann::json(run.results[i]));
  EXPECT_EQ(nlohmann::json(again.info), nlohmann::json(run.info));
}

TEST(ReportRecordIo, MalformedJsonNamesTheFile) {
  TempDir d = copy_basic();
  std::string f = d / "results/level1__23_Softmax.json";
  write_file(f, "{\"version\": 1, \"problem\": ");
  std::string e = load_error(d.str());
  EXPECT_NE(e.find(f), std::string::npos) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
}

TEST(ReportRecordIo, UnknownVersionIsAnError) {
  TempDir d = copy_basic();
  std::string f = d / "results/level1__23_Softmax.json";
  auto j = nlohmann::json::parse(testing::read_file(f));
  j["version"] = 7;
  write_file(f, j.dump());
  std::string e = load_error(d.str());
  EXPECT_NE(e.find(f), std::string::npos) << e;
  EXPECT_NE(e.find("unknown record version 7"), std::string::npos) << e;
}

// error_kind decides the exit code (2 or 3) and the JUnit type: a typo is an error naming
// the file, never an infrastructure error by default.
TEST(ReportRecordIo, AnUnknownErrorKindIsAnError) {
  TempDir d = copy_basic();
  std::string f = d / "results/level1__23_Softmax.json";
  auto j = nlohmann::json::parse(testing::read_file(f));
  j["outcome"] = "error";
  j["error_kind"] = "problme";
  write_file(f, j.dump());
  std::string e = load_error(d.str());
  EXPECT_NE(e.find(f + ": bad \"error_kind\": \"problme\""), std::string::npos) << e;
  j["outcome"] = "improved";
  j["error_kind"] = "problem";
  write_file(f, j.dump());
  e = load_error(d.str());
  EXPECT_NE(e.find("\"error_kind\" is for an outcome \"error\""), std::string::npos) << e;
  j["outcome"] = "error";
  write_file(f, j.dump());
  EXPECT_EQ(load_run_dir(d.str()).results.size(), 8u);
}

TEST(ReportRecordIo, WrongTypesAndBadNumbersAreErrors) {
  TempDir d = copy_basic();
  std::string f = d / "results/level1__23_Softmax.json";
  auto j = nlohmann::json::parse(testing::read_file(f));
  j["speedup"] = "fast";
  write_file(f, j.dump());
  EXPECT_NE(load_error(d.str()).find("bad field"), std::string::npos);

  j["speedup"] = -2.0;
  write_file(f, j.dump());
  EXPECT_NE(load_error(d.str()).find("\"speedup\" must be"), std::string::npos);

  j["speedup"] = 1.0;
  j["outcome"] = 3;
  write_file(f, j.dump());
  EXPECT_NE(load_error(d.str()).find("unknown value 3 for \"outcome\""), std::string::npos);
  j["outcome"] = "great";
  write_file(f, j.dump());
  EXPECT_NE(load_error(d.str()).find(f), std::string::npos);
  j["outcome"] = "improved";
  j["gates"][1]["status"] = "passed";
  write_file(f, j.dump());
  EXPECT_NE(load_error(d.str()).find("gates[1].status"), std::string::npos) << load_error(d.str());
  j["gates"][1]["status"] = "pass";

  write_file(f, "[1, 2]");
  EXPECT_NE(load_error(d.str()).find("expected a JSON object"), std::string::npos);

  write_file(f, "{\"version\": 1}");
  EXPECT_NE(load_error(d.str()).find("missing \"problem\""), std::string::npos);
}

TEST(ReportRecordIo, MissingRecordsAreErrors) {
  TempDir d;
  EXPECT_NE(load_error(d.str()).find("no result records"), std::string::npos);
  fs::create_directories(d.path / "results");
  EXPECT_NE(load_error(d.str()).find("no result records"), std::string::npos);
  EXPECT_NE(load_error(d / "nope").find("not a directory"), std::string::npos);
}

TEST(ReportRecordIo, DuplicateAndForeignRecordsAreErrors) {
  TempDir d = copy_basic();
  fs::copy_file(d / "results/level1__23_Softmax.json", d / "results/zz_copy.json");
  EXPECT_NE(load_error(d.str()).find("duplicate record for level1/23_Softmax"),
            std::string::npos);
  fs::remove(d / "results/zz_copy.json");

  std::string f = d / "results/level3__1_MLP.json";
  auto j = nlohmann::json::parse(testing::read_file(f));
  j["run_id"] = "another-run";
  write_file(f, j.dump());
  EXPECT_NE(load_error(d.str()).find("run_id \"another-run\""), std::string::npos);
}

TEST(ReportRecordIo, RunInfoIsOptionalAndValidated) {
  TempDir d = copy_basic();
  fs::remove(d / "run.json");
  RunRecords run = load_run_dir(d.str());
  EXPECT_EQ(run.info.run_id, "nightly-20261129");
  EXPECT_EQ(run.info.suite, "nightly");

  write_file(d / "run.json", R"({"version": 1, "run_id": "nightly-20261129",
                                  "shard": {"index": 3, "count": 2}})");
  EXPECT_NE(load_error(d.str()).find("bad shard 3/2"), std::string::npos);
  write_file(d / "run.json", R"({"version": 2})");
  EXPECT_NE(load_error(d.str()).find("unknown record version 2"), std::string::npos);
}

TEST(ReportRecordIo, FileNamesAreFlat) {
  EXPECT_EQ(record_file_name("native", "ops/softmax_4096"), "native__ops_softmax_4096.json");
}

// Was: a directory where run.json should be read as "" and failed as "malformed JSON".
TEST(ReportRecordIo, ADirectoryForARecordCannotBeRead) {
  TempDir d = copy_basic();
  fs::remove(d / "run.json");
  fs::create_directories(d / "run.json");
  std::string e = load_error(d.str());
  EXPECT_NE(e.find(d / "run.json" + ": cannot read the file"), std::string::npos) << e;
}

// Was: a failed rename left PATH.tmp behind.
TEST(ReportRecordIo, AFailedAtomicWriteLeavesNoTempFile) {
  TempDir d;
  fs::create_directories(d.path / "report.md" / "busy");  // a file cannot replace it
  try {
    write_file_atomic(d / "report.md", "# report\n");
    FAIL() << "no error";
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find(d / "report.md" + ": cannot rename into place: "), std::string::npos)
        << e.what();
  }
  for (const auto& e : fs::directory_iterator(d.path))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  write_file_atomic(d / "sub/dir/report.md", "# report\n");
  EXPECT_TRUE(fs::is_regular_file(d.path / "sub/dir/report.md"));
}

}  // namespace
}  // namespace kgate::report

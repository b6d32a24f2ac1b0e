// JSON reporter: golden file and the checked-in schema (reports/report.schema.json).
#include "report/json_reporter.h"

#include <gtest/gtest.h>

#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

std::string schema_path() { return std::string(KGATE_SOURCE_DIR) + "/reports/report.schema.json"; }

TEST(ReportJson, MatchesGolden) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  expect_golden(json_report(summarize(run)).dump(2) + "\n", "report.json");
}

TEST(ReportJson, ValidAgainstSchema) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  nlohmann::json j = json_report(summarize(run));
  EXPECT_EQ(validate_against(schema_path(), j), "");
  EXPECT_EQ(j["version"], kReportVersion);
  EXPECT_EQ(j["problems"].size(), 8u);
  EXPECT_TRUE(j["levels"][2]["geomean_vs_eager"].is_number());
  EXPECT_TRUE(j["problems"][4]["speedup_vs_eager"].is_null() ||
              j["problems"][4]["speedup_vs_eager"].is_number());
}

TEST(ReportJson, SchemaCheckCatchesMissingFields) {
  // The check itself must be able to fail.
  RunRecords run = load_run_dir(fixture("run_basic"));
  nlohmann::json j = json_report(summarize(run));
  j["levels"][0].erase("fast_p");
  j["problems"][0]["outcome"] = "great";
  std::string err = validate_against(schema_path(), j);
  EXPECT_NE(err.find("missing required \"fast_p\""), std::string::npos) << err;
  EXPECT_NE(err.find("not in enum"), std::string::npos) << err;
}

}  // namespace
}  // namespace kgate::report

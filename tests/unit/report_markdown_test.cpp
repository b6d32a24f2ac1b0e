// Markdown reporter: golden file and the size cap for $GITHUB_STEP_SUMMARY.
#include "report/markdown_reporter.h"

#include <gtest/gtest.h>

#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

TEST(ReportMarkdown, MatchesGolden) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  expect_golden(markdown_report(summarize(run)), "report.md");
}

TEST(ReportMarkdown, TruncatesRowsToFitTheLimit) {
  RunRecords base = load_run_dir(fixture("run_basic"));
  RunRecords run;
  run.info = base.info;
  for (int i = 0; i < 5000; ++i) {
    ProblemResult r = base.results[static_cast<size_t>(i) % base.results.size()];
    r.problem = "p" + std::to_string(100000 + i) + "_" + std::string(100, 'x');
    run.results.push_back(r);
  }
  Summary s = summarize(run);
  std::string full = markdown_report(s);
  EXPECT_LE(full.size(), kMarkdownMaxBytes);
  EXPECT_GT(full.size(), kMarkdownMaxBytes / 2);
  EXPECT_NE(full.find("problem rows left out"), std::string::npos);

  std::string small = markdown_report(s, 20000);
  EXPECT_LE(small.size(), 20000u);
  EXPECT_NE(small.find("## Levels"), std::string::npos);  // the summary always survives
  EXPECT_NE(small.find("of 5000 problem rows left out"), std::string::npos);

  std::string fits = markdown_report(summarize(base));
  EXPECT_EQ(fits.find("left out"), std::string::npos);
}

TEST(ReportMarkdown, EscapesTableCells) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.results[0].problem = "a|b\nc";
  std::string md = markdown_report(summarize(run));
  EXPECT_NE(md.find("a\\|b c"), std::string::npos);
}

}  // namespace
}  // namespace kgate::report

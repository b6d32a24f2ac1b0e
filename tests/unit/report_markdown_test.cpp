// Markdown reporter: golden file and the size cap for $GITHUB_STEP_SUMMARY.
#include "report/markdown_reporter.h"

#include <gtest/gtest.h>

#include "report/format.h"
#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

TEST(ReportMarkdown, MatchesGolden) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  expect_golden(markdown_report(summarize(run)), "report.md");
}

// A result with no time of its own (an error; a starter that failed its gates) shows no
// speedup, whatever its record's speedup field holds (the runs write 1.0 there).
TEST(ReportMarkdown, AnErrorRowShowsNoSpeedup) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  for (auto& r : run.results)
    if (r.outcome == Outcome::kError) {
      r.speedup = r.speedup_lo = r.speedup_hi = 1.0;
      r.best_us = 0;
    }
  const std::string md = markdown_report(summarize(run));
  const size_t at = md.find("| 1_Conv2D_ReLU_BiasAdd |");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string line = md.substr(at, md.find('\n', at) - at);
  EXPECT_EQ(line.find("1.000x"), std::string::npos) << line;
  EXPECT_EQ(fmt::result_speedup(0, 1.0, 1.0, 1.0), "-");
  EXPECT_EQ(fmt::result_speedup(12.5, 1.25, 1.2, 1.3), "1.250x [1.200, 1.300]");
}

// An empty vs-reference column says why it is empty; a report without such a gap says
// nothing about it.
TEST(ReportMarkdown, SaysWhyAReferenceColumnIsEmpty) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_FALSE(run.results.empty());
  EXPECT_EQ(markdown_report(summarize(run)).find("Not measured against the reference model"), std::string::npos);
  const ProblemResult r = eager_unmeasured(run, "the worker exited with status 137 (killed)");
  ProblemResult all = run.results.front();
  all.problem += "_b";
  all.references_missing = {{"references", "cannot start the reference worker"}};
  run.results = {r, all};
  const std::string md = markdown_report(summarize(run));
  EXPECT_NE(md.find("_Not measured against the reference model: " + r.level + "/" + r.problem +
                    " vs eager: the worker exited with status 137 (killed); " + all.level + "/" + all.problem +
                    " (every mode): cannot start the reference worker._"),
            std::string::npos)
      << md;
}

// The dispatch-aware table says how many kept kernels are kgate's templates.
TEST(ReportMarkdown, DispatchRowsCountKeptTemplates) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_FALSE(run.results.empty());
  ProblemResult r = compiled_record(run, Outcome::kImproved);
  r.triton_kernels = 3;
  r.kernels_searched = 2;
  r.kernels_kept = 2;
  r.templates_kept = 1;
  run.results = {r};
  std::string md = markdown_dispatch_tables(summarize(run), kMarkdownMaxBytes);
  EXPECT_NE(md.find("| 2 | 2 (1 template) |"), std::string::npos) << md;
  run.results[0].templates_kept = 0;
  md = markdown_dispatch_tables(summarize(run), kMarkdownMaxBytes);
  EXPECT_NE(md.find("| 2 | 2 |"), std::string::npos) << md;
}

// The per-level row says what an experiment cost: how many ran (how many the kernel-level
// screen reverted) and the median and 90th percentile of their wall times over the level.
TEST(ReportMarkdown, DispatchRowsGiveTheCostOfAnExperiment) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_FALSE(run.results.empty());
  ProblemResult a = compiled_record(run, Outcome::kFallback);
  a.fallback_kind = "not-faster";
  a.experiment_wall_s = {1.0, 2.0, 9.0};
  a.experiments_screened = 2;
  ProblemResult b = a;
  b.problem += "_b";
  b.experiment_wall_s = {3.0, 4.0};
  b.experiments_screened = 0;
  run.results = {a, b};
  std::string md = markdown_dispatch_tables(summarize(run), kMarkdownMaxBytes);
  EXPECT_NE(md.find("Experiments (screened) | s per experiment: median / p90 |"), std::string::npos) << md;
  // over the five walls of the level: median 3.0, 90th percentile between 4 and 9
  EXPECT_NE(md.find("| 5 (2) | 3.0 / 7.0 |"), std::string::npos) << md;
  run.results = {a};
  run.results[0].experiment_wall_s.clear();
  run.results[0].experiments_screened = 0;
  md = markdown_dispatch_tables(summarize(run), kMarkdownMaxBytes);
  EXPECT_NE(md.find("| 0 (0) | - |"), std::string::npos) << md;
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
  size_t rows = 0;  // skipped problems are named in one line, not counted as rows
  for (const auto& r : run.results) rows += r.outcome != Outcome::kSkipped;
  EXPECT_NE(small.find("of " + std::to_string(rows) + " problem rows left out"), std::string::npos);

  std::string fits = markdown_report(summarize(base));
  EXPECT_EQ(fits.find("left out"), std::string::npos);
}

// A KernelBench level without solutions skips most problems: they are named in one line
// under the table, not listed as empty rows.
TEST(ReportMarkdown, SkippedProblemsAreNamedOnceNotListed) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  for (int i = 0; i < 3; ++i) {
    ProblemResult r = run.results[0];
    r.problem = "unsolved_" + std::to_string(i);
    r.outcome = Outcome::kSkipped;
    r.reason = "no starting candidate";
    run.results.push_back(r);
  }
  std::string md = markdown_report(summarize(run));
  EXPECT_EQ(md.find("| unsolved_0 |"), std::string::npos);
  EXPECT_NE(md.find("skipped (the reasons are in report.json): "), std::string::npos) << md;
  EXPECT_NE(md.find("/unsolved_0, "), std::string::npos) << md;
  EXPECT_NE(md.find("/unsolved_2"), std::string::npos) << md;
}

TEST(ReportMarkdown, EscapesTableCells) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.results[0].problem = "a|b\nc";
  std::string md = markdown_report(summarize(run));
  EXPECT_NE(md.find("a\\|b c"), std::string::npos);
}

}  // namespace
}  // namespace kgate::report

// HTML reporter: golden file, self-contained (no script, no external resource), charts.
#include "report/html_reporter.h"

#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>

#include "report/dispatch_table.h"
#include "report/markdown_reporter.h"
#include "report/record_io.h"
#include "report/report_writer.h"
#include "report/svg_chart.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(ReportHtml, MatchesGolden) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  expect_golden(html_report(summarize(run)), "report.html");
}

// An empty vs-reference cell says why, as report.md does: the reason as the cell's tooltip
// and a list under the problems table.
// A host run records no driver: the header leaves it out instead of "driver , CUDA ...".
TEST(ReportHtml, AVersionTheRunDidNotRecordIsLeftOut) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.info.env.driver.clear();
  run.info.env.triton.clear();
  const std::string html = html_report(summarize(run));
  EXPECT_EQ(html.find("driver"), std::string::npos);
  EXPECT_EQ(html.find("triton ,"), std::string::npos);
  EXPECT_NE(html.find(", CUDA " + run.info.env.cuda + ", torch " + run.info.env.torch + ", kgate "), std::string::npos);
}

TEST(ReportHtml, SaysWhyAReferenceColumnIsEmpty) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_FALSE(run.results.empty());
  EXPECT_EQ(html_report(summarize(run)).find("Not measured against the reference model"), std::string::npos);
  const ProblemResult r = eager_unmeasured(run, "the worker exited with status 137 (killed) <&>");
  run.results = {r};
  const std::string html = html_report(summarize(run));
  EXPECT_NE(html.find("<li>" + r.level + "/" + r.problem +
                      " vs eager: the worker exited with status 137 (killed) &lt;&amp;&gt;</li>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"n\" title=\"the worker exited with status 137 (killed) &lt;&amp;&gt;\">-</td>"),
            std::string::npos)
      << html;
}

// The dispatch-aware tables are in report.html too, cell for cell what report.md shows
// (both render dispatch_table.h); none for a run without compiled-mode problems.
TEST(ReportHtml, DispatchTablesMatchTheMarkdownOnes) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_FALSE(run.results.empty());
  EXPECT_EQ(html_report(summarize(run)).find("Dispatch-aware search"), std::string::npos);
  ProblemResult improved = compiled_record(run, Outcome::kImproved);
  improved.triton_kernels = 3;
  improved.kernels_searched = 2;
  improved.kernels_kept = 2;
  improved.templates_kept = 1;
  ProblemResult fallback = compiled_record(run, Outcome::kFallback);
  fallback.problem += "_b";
  fallback.reason = "extern-dominated: Triton 4.0 % of model time <1 %>";
  run.results = {improved, fallback};
  const Summary s = summarize(run);
  const std::string html = html_report(s), md = markdown_dispatch_tables(s, kMarkdownMaxBytes);
  ASSERT_NE(html.find("<h2>Dispatch-aware search (torch.compile's Triton kernels)</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"n\">2 (1 template)</td>"), std::string::npos) << html;
  EXPECT_NE(md.find("| 2 (1 template) |"), std::string::npos) << md;
  EXPECT_NE(html.find("<td>extern-dominated: Triton 4.0 % of model time &lt;1 %&gt;</td>"), std::string::npos) << html;
  const Table levels = dispatch_level_table(s);
  ASSERT_EQ(levels.rows.size(), 1u);
  for (const auto& cell : levels.rows[0]) {
    EXPECT_NE(html.find(">" + cell + "</td>"), std::string::npos) << cell;
    EXPECT_NE(md.find("| " + cell + " |"), std::string::npos) << cell;
  }
}

TEST(ReportHtml, SelfContainedWithCharts) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.results[0].problem = "<script>alert(1)</script>";
  std::string html = html_report(summarize(run));
  EXPECT_EQ(html.find("<script"), std::string::npos);  // escaped, and no scripts of our own
  EXPECT_EQ(count(html, "<svg"), 3u);                  // geomean, speedups, roofline
  EXPECT_EQ(count(html, "<svg"), count(html, "</svg>"));
  // The only URL is the SVG namespace: nothing is fetched when viewing the file.
  std::string no_ns = std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_EQ(no_ns.find("http://"), std::string::npos);
  EXPECT_EQ(no_ns.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  // Geomean bars: level1 has vs-baseline, vs-eager and vs-compile, level2 and level3 too.
  EXPECT_GE(count(html, "class=\"bar\""), 9u);
  EXPECT_NE(html.find("level1 vs torch.compile: "), std::string::npos);
  // Roofline on a fixed 0-100 % axis: 40 % is 40 % of the 420 px plot, whatever the maximum.
  EXPECT_NE(html.find("width=\"168.0\" height=\"12.0\" fill=\"#59a14f\"><title>level1/40_LayerNorm: 40.000%</title>"),
            std::string::npos);
  EXPECT_NE(html.find(">100%</text>"), std::string::npos);
}

TEST(ReportHtml, WellFormedXmlFragments) {
  // Every SVG must be well-formed XML on its own (browsers are lenient, viewers are not).
  RunRecords run = load_run_dir(fixture("run_basic"));
  std::string html = html_report(summarize(run));
  auto [rc0, w] = run_command("command -v xmllint");
  if (rc0 != 0) GTEST_SKIP() << "xmllint not installed";
  size_t p = 0;
  int n = 0;
  while ((p = html.find("<svg", p)) != std::string::npos) {
    size_t e = html.find("</svg>", p);
    ASSERT_NE(e, std::string::npos);
    TempDir d;
    write_file(d / "chart.svg", html.substr(p, e + 6 - p));
    auto [rc, out] = run_command("xmllint --noout " + (d / "chart.svg"));
    EXPECT_EQ(rc, 0) << out;
    p = e;
    ++n;
  }
  EXPECT_EQ(n, 3);
}

TEST(ReportSvg, TrendTicksDatesWhiskersAndDips) {
  EXPECT_EQ(svg::y_ticks(0.5, 4, true), (std::vector<double>{0.5, 0.75, 1, 1.5, 2, 3, 4}));
  EXPECT_EQ(svg::y_ticks(0.25, 64, true), (std::vector<double>{0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(svg::y_ticks(0, 100, false), (std::vector<double>{0, 25, 50, 75, 100}));
  EXPECT_TRUE(svg::y_ticks(1, 1, true).empty());
  // Three nights, the third three days after the second: x by date, not by index.
  svg::TrendSeries s{"p", {1.0, 2.0, 4.0}, {1.0, 1.8, 3.5}, {1.1, 2.2, 4.0}, {false, true, false}, true};
  svg::TrendAxes a;
  a.x = {0, 1, 4};
  a.log_scale = true;
  a.reference = 2;
  a.reference_label = "accepted 2.000x";
  a.unit = "x";
  const std::string t = svg::trend("t", {"2026-11-01", "2026-11-02", "2026-11-05"}, {s}, a);
  EXPECT_NE(t.find("cx=\"60.0\""), std::string::npos) << t;   // left edge
  EXPECT_NE(t.find("cx=\"200.0\""), std::string::npos) << t;  // 1 of 4 days: 60 + 560 / 4
  EXPECT_NE(t.find("cx=\"620.0\""), std::string::npos) << t;  // right edge
  EXPECT_EQ(count(t, "class=\"whisker\""), 3u);
  EXPECT_EQ(count(t, "class=\"dip\""), 1u);
  EXPECT_NE(t.find("accepted 2.000x"), std::string::npos);
  // Log scale: 1x at the bottom, 4x at the top, 2x (the reference) half way.
  EXPECT_NE(t.find("cy=\"240.0\""), std::string::npos) << t;
  EXPECT_NE(t.find("cy=\"40.0\""), std::string::npos) << t;
  EXPECT_NE(t.find("y1=\"140.0\" x2=\"620.0\" y2=\"140.0\" class=\"ref\""), std::string::npos) << t;
  EXPECT_NE(t.find(">1.50x</text>"), std::string::npos) << t;
  // A fixed linear range (roofline 0..100 %) keeps its bounds whatever the values.
  svg::TrendAxes lin;
  lin.y_min = 0;
  lin.y_max = 100;
  lin.unit = "%";
  const std::string r = svg::trend("r", {"a", "b"}, {svg::TrendSeries{"q", {10, 20}, {}, {}, {}, true}}, lin);
  EXPECT_NE(r.find(">100%</text>"), std::string::npos) << r;
  EXPECT_NE(r.find(">0%</text>"), std::string::npos) << r;
  EXPECT_NE(r.find("cy=\"220.0\""), std::string::npos) << r;  // 10 % of 200 px above the axis at 240
}

TEST(ReportHtml, ProgressPlotsFromResultsTsv) {
  const std::string tsv =
      "# kgate-results v1\n"
      "experiment\tproblem\tcommit\tverdict\tfailed_gate\tlatency_us\tspeedup\tpct_roofline\tdescription\n"
      "0\t23_Softmax\taaaa\tbaseline\t\t100.000\t1.0000\t10.00\tstarter\n"
      "1\t23_Softmax\tbbbb\trevert\tcorrectness\t\t\t\twrong\n"
      "2\t23_Softmax\tcccc\tkeep\t\t50.000\t2.0000\t20.00\tfaster\n"
      "3\t23_Softmax\tdddd\trevert\t\t60.000\t1.6667\t\tnot faster\n"
      "x\tbroken row\n"
      "0\t36_RMSNorm\teeee\tbaseline\t\t10.000\t1.0000\t\tstarter\n"
      "1\t36_RMSNorm\tffff\tagent_error\t\t\t\t\tno reply\n";
  const std::vector<ExperimentPoint> pts = parse_results_tsv(tsv);
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[2].n, 2);
  EXPECT_EQ(pts[2].verdict, "keep");
  EXPECT_DOUBLE_EQ(pts[2].speedup, 2.0);
  EXPECT_DOUBLE_EQ(pts[1].speedup, 0);  // not measured
  EXPECT_EQ(pts[5].problem, "36_RMSNorm");

  const std::string charts = progress_charts(pts);
  EXPECT_EQ(count(charts, "<svg"), 2u);
  // 23_Softmax: three measured experiments as points, the kept two (0 and 2) joined by one
  // line; 36_RMSNorm: its starter alone.
  EXPECT_EQ(count(charts, "<polyline"), 2u);
  EXPECT_EQ(count(charts, "class=\"point\""), 3u + 2u + 1u + 1u) << charts;  // every + kept, per problem
  EXPECT_NE(charts.find("23_Softmax: speedup vs the starter per experiment"), std::string::npos);
  EXPECT_EQ(progress_charts(pts, 1).find("36_RMSNorm"), std::string::npos);
  EXPECT_EQ(progress_charts(parse_results_tsv("# kgate-results v1\n")), "");

  // Through write_reports: a run directory with a results.tsv gets the plots in report.html.
  TempDir d;
  std::filesystem::copy(fixture("run_basic"), d.path, std::filesystem::copy_options::recursive);
  write_reports(d.str());
  EXPECT_EQ(read_file(d / "report.html").find("Search progress"), std::string::npos);
  write_file(d / "results.tsv", tsv);
  write_reports(d.str());
  const std::string html = read_file(d / "report.html");
  EXPECT_NE(html.find("<h2>Search progress</h2>"), std::string::npos);
  EXPECT_EQ(count(html, "<svg"), 3u + 2u);
}

ProblemResult& by_name(RunRecords& run, const std::string& problem) {
  for (auto& r : run.results)
    if (r.problem == problem) return r;
  throw std::runtime_error("no " + problem + " in the fixture");
}

AcceptedComparison compared(double accepted_us, double ratio, double lo, double hi, double p, bool regressed) {
  AcceptedComparison c;
  c.run_id = "night-1";
  c.accepted_at = "2026-11-30T03:00:00Z";
  c.content_hash = "abc";
  c.accepted_us = accepted_us;
  c.accepted_speedup = 2;
  c.ratio = ratio;
  c.ratio_lo = lo;
  c.ratio_hi = hi;
  c.p_value = p;
  c.regressed = regressed;
  c.prior_outcome = Outcome::kImproved;
  c.prior_reason = "";
  return c;
}

TEST(ReportHtml, AcceptedTableRegressionsFirstWithTheirInterval) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  EXPECT_EQ(html_report(summarize(run)).find("Against the accepted results"), std::string::npos);
  // Only what passes, so that the result line is the comparison's alone.
  std::erase_if(run.results, [](const ProblemResult& r) { return !is_correct(r) || r.outcome == Outcome::kRegressed; });
  run.info.planned.clear();  // the removed ones would be planned problems without a record
  // 40_LayerNorm as fast as accepted; 23_Softmax 2x and 36_RMSNorm 1.25x slower (regressed).
  by_name(run, "40_LayerNorm").vs_accepted = compared(320, 1.0, 0.97, 1.03, 0.9, false);
  ProblemResult& sm = by_name(run, "23_Softmax");
  sm.vs_accepted = compared(sm.best_us / 2, 0.5, 0.48, 0.52, 1e-6, true);
  sm.outcome = Outcome::kRegressed;
  sm.reason = "slower than the accepted result of run night-1";
  ProblemResult& rms = by_name(run, "36_RMSNorm");
  rms.vs_accepted = compared(rms.best_us * 0.8, 0.8, 0.77, 0.83, 1e-4, true);
  rms.outcome = Outcome::kRegressed;
  rms.reason = "slower than the accepted result of run night-1";
  run.info.regression_threshold = 1.03;
  const std::string html = html_report(summarize(run));
  const std::string table = html_accepted_table(summarize(run));
  ASSERT_NE(table, "");
  EXPECT_NE(html.find(table), std::string::npos);  // the page has the same section
  EXPECT_NE(table.find("2 of 3 compared problems regressed"), std::string::npos) << table;
  EXPECT_NE(table.find("(1.030x)"), std::string::npos) << table;
  const size_t a = table.find("<td>level1/23_Softmax</td>");
  const size_t b = table.find("<td>level1/36_RMSNorm</td>");
  const size_t c = table.find("<td>level1/40_LayerNorm</td>");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(a, b);  // the largest drop first
  EXPECT_LT(b, c);  // the regressions before the others
  auto row_of = [&](size_t at) { return table.substr(table.rfind("<tr", at), table.find("</tr>", at) - table.rfind("<tr", at)); };
  EXPECT_EQ(row_of(a).rfind("<tr class=\"f\">", 0), 0u) << row_of(a);
  EXPECT_NE(row_of(a).find("0.500x [0.480, 0.520]"), std::string::npos) << row_of(a);
  EXPECT_NE(row_of(a).find("+100.0%"), std::string::npos) << row_of(a);
  EXPECT_NE(row_of(a).find("<td class=\"verdict\">performance regression</td>"), std::string::npos);
  EXPECT_NE(row_of(b).find("+25.0%"), std::string::npos) << row_of(b);
  EXPECT_EQ(row_of(c).rfind("<tr>", 0), 0u) << row_of(c);
  EXPECT_NE(row_of(c).find("<td class=\"verdict\">ok</td>"), std::string::npos) << row_of(c);
  EXPECT_NE(row_of(c).find("night-1"), std::string::npos);
  // 36_RMSNorm is a fallback whose gate table is its rejected candidate's (a failed
  // correctness gate): regressed against the accepted result it is a performance
  // regression, not a correctness one, and still correct.
  const Summary sum = summarize(run);
  for (const auto& row : sum.rows)
    if (row.record->problem == "36_RMSNorm") {
      EXPECT_EQ(row.failure, FailureKind::kPerformanceRegression);
      EXPECT_TRUE(row.correct);
    }
  EXPECT_EQ(sum.performance_regressions, 2);
  EXPECT_EQ(sum.correctness_regressions, 0);
  // The same story in the result line: the suite does not fail on performance here.
  EXPECT_NE(html.find("<p class=\"pass\">PASS</p>"), std::string::npos);
  EXPECT_EQ(table.find("which fails the pipeline"), std::string::npos);
  run.info.fail_on_performance = true;
  const std::string failing = html_report(summarize(run));
  EXPECT_NE(failing.find("<p class=\"fail\">FAIL</p>"), std::string::npos);
  EXPECT_NE(failing.find("which fails the pipeline"), std::string::npos);
}

}  // namespace
}  // namespace kgate::report

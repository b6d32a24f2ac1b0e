// HTML reporter: golden file, self-contained (no script, no external resource), charts.
#include "report/html_reporter.h"

#include <gtest/gtest.h>

#include <regex>

#include "report/record_io.h"
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

}  // namespace
}  // namespace kgate::report

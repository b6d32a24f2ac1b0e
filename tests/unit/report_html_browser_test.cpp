// The HTML report in a real headless Chromium: the page loads offline and the SVG charts
// render (the screenshot holds the bar colours; the same page without its SVGs does not).
// Skips cleanly when no Chromium is installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <filesystem>

#include "report/html_reporter.h"
#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

std::string find_chromium() {
  for (const char* b : {"chromium", "chromium-browser", "google-chrome", "chrome"}) {
    auto [rc, out] = run_command(std::string("command -v ") + b);
    if (rc == 0) return out.substr(0, out.find('\n'));
  }
  return "";
}

// Screenshot of `html` and the pixel counts of the chart colours (blue, orange, green).
std::vector<long> render(const std::string& chromium, const std::string& html, const TempDir& d,
                         const std::string& name) {
  std::string page = d / (name + ".html"), shot = d / (name + ".png");
  write_file(page, html);
  auto [rc, out] = run_command("timeout 300 " + chromium +
                               " --headless --no-sandbox --disable-gpu --hide-scrollbars"
                               " --no-first-run --user-data-dir=" + (d / ("profile-" + name)) +
                               " --window-size=1100,2600 --screenshot=" + shot + " file://" + page);
  EXPECT_TRUE(std::filesystem::exists(shot)) << "chromium rc " << rc << ": " << out;
  if (!std::filesystem::exists(shot)) return {};
  auto [prc, counts] = run_command("python3 " + fixture("png_colors.py") + " " + shot +
                                   " 4e79a7 f28e2b 59a14f");
  EXPECT_EQ(prc, 0) << counts;
  std::vector<long> v;
  std::istringstream in(counts);
  long c;
  while (in >> c) v.push_back(c);
  return v;
}

TEST(ReportHtmlBrowser, ChartsRenderInHeadlessChromium) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium installed";
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  std::string html = html_report(summarize(run));
  auto with = render(chromium, html, d, "report");
  ASSERT_EQ(with.size(), 3u);
  EXPECT_GT(with[0], 300) << "geomean bars (vs baseline) not drawn";
  EXPECT_GT(with[1], 300) << "geomean bars (vs eager) not drawn";
  EXPECT_GT(with[2], 300) << "speedup bars not drawn";

  std::string no_svg = html;  // the same page without its charts
  for (size_t p; (p = no_svg.find("<svg")) != std::string::npos;)
    no_svg.erase(p, no_svg.find("</svg>", p) + 6 - p);
  auto without = render(chromium, no_svg, d, "nosvg");
  ASSERT_EQ(without.size(), 3u);
  EXPECT_LT(without[0], 20);
  EXPECT_LT(without[2], 20);
}

}  // namespace
}  // namespace kgate::report

#include "report/progress.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>

#include "core/file_io.h"
#include "report/format.h"
#include "report/svg_chart.h"

namespace kgate::report {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    cells.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return cells;
}

bool parse_int(const std::string& s, int& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || v < 0 || v > 100000000) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

std::vector<ExperimentPoint> parse_results_tsv(const std::string& text) {
  std::vector<ExperimentPoint> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> c = split_tabs(line);
    // experiment problem commit verdict failed_gate latency_us speedup pct_roofline description
    if (c.size() < 7) continue;
    ExperimentPoint p;
    if (!parse_int(c[0], p.n)) continue;  // the header, or a malformed row
    p.problem = c[1];
    p.verdict = c[3];
    if (!c[6].empty()) {
      char* end = nullptr;
      double v = std::strtod(c[6].c_str(), &end);
      if (*end == '\0' && std::isfinite(v) && v > 0) p.speedup = v;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ExperimentPoint> read_results_tsv(const std::string& out_dir) {
  core::ReadResult r = core::read_file((std::filesystem::path(out_dir) / "results.tsv").string());
  if (!r.ok()) return {};
  return parse_results_tsv(r.bytes);
}

std::string progress_charts(const std::vector<ExperimentPoint>& points, size_t max_problems) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ExperimentPoint*>> by_problem;
  for (const auto& p : points) {
    auto& v = by_problem[p.problem];
    if (v.empty()) order.push_back(p.problem);
    v.push_back(&p);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::string out;
  size_t shown = 0;
  for (const auto& problem : order) {
    const auto& rows = by_problem[problem];
    bool measured = false;
    for (const ExperimentPoint* p : rows) measured = measured || p->speedup > 0;
    if (!measured) continue;
    if (shown >= max_problems) break;
    ++shown;
    std::vector<std::string> labels;
    svg::TrendAxes axes;
    axes.log_scale = true;
    axes.reference = 1.0;
    axes.reference_label = "starter";
    axes.unit = "x";
    svg::TrendSeries every{"every experiment", {}, {}, {}, {}, /*line=*/false};
    svg::TrendSeries kept{"kept (best so far)", {}, {}, {}, {}, /*line=*/true};
    for (const ExperimentPoint* p : rows) {
      labels.push_back(std::to_string(p->n));
      axes.x.push_back(static_cast<double>(p->n));
      every.values.push_back(p->speedup > 0 ? p->speedup : nan);
      const bool is_kept = p->verdict == "baseline" || p->verdict == "keep";
      kept.values.push_back(is_kept && p->speedup > 0 ? p->speedup : nan);
    }
    out += svg::trend(problem + ": speedup vs the starter per experiment", labels, {every, kept}, axes);
  }
  if (out.empty()) return "";
  std::string head = "<h2>Search progress</h2>\n<p>Per problem, from <code>results.tsv</code>: every measured "
                     "experiment's speedup vs the starter (log scale), the kept ones joined.";
  if (shown < by_problem.size())
    head += " The first " + std::to_string(shown) + " of " + std::to_string(by_problem.size()) + " problems.";
  return head + "</p>\n" + out;
}

}  // namespace kgate::report

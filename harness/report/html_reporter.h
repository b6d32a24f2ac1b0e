#pragma once
// One self-contained HTML file (inline CSS and SVG, no script, no network) from a Summary:
// status, level table, charts (per-level geomean vs baseline / eager / torch.compile,
// per-problem speedups, roofline %), failures with their gate tables, the comparison with
// the accepted results (when the run was compared with a history), every problem row.
#include <string>

#include "report/progress.h"
#include "report/summary.h"

namespace kgate::report {

inline constexpr size_t kHtmlMaxChartRows = 300;  // per-problem charts stay readable

// `progress`: OUT/results.tsv's experiments (report/progress.h), drawn as one progress plot
// per problem after the charts; none for a merged run or a PR check.
std::string html_report(const Summary& s, const std::vector<ExperimentPoint>& progress = {});

// Page skeleton shared with the weekly report.
std::string html_page(const std::string& title, const std::string& body);
std::string html_level_table(const Summary& s);
// "Against the accepted results": every row compared with its accepted result, the
// regressions first (largest drop first): accepted and current time, the speed ratio with
// its interval, the time change, p and the verdict. "" when no row was compared.
std::string html_accepted_table(const Summary& s);

}  // namespace kgate::report

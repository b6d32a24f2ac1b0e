#pragma once
// One self-contained HTML file (inline CSS and SVG, no script, no network) from a Summary:
// status, level table, charts (per-level geomean vs baseline / eager / torch.compile,
// per-problem speedups, roofline %), failures with their gate tables, every problem row.
#include <string>

#include "report/summary.h"

namespace kgate::report {

inline constexpr size_t kHtmlMaxChartRows = 300;  // per-problem charts stay readable

std::string html_report(const Summary& s);

// Page skeleton shared with the weekly report.
std::string html_page(const std::string& title, const std::string& body);
std::string html_level_table(const Summary& s);

}  // namespace kgate::report

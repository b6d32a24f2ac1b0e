#pragma once
// The versioned JSON report (schema: reports/report.schema.json): the run, the per-level and
// overall summary and one entry per problem, exactly as summarize() computed them.
#include <nlohmann/json.hpp>

#include "report/summary.h"

namespace kgate::report {

inline constexpr int kReportVersion = 1;

nlohmann::json json_report(const Summary& s);
nlohmann::json to_json(const LevelSummary& l);  // shared with the weekly report

}  // namespace kgate::report

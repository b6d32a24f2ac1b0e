#include "report/dispatch_table.h"

#include "report/format.h"

namespace kgate::report {
namespace {

std::vector<std::string> level_cells(const LevelSummary& l, const std::string& name) {
  auto kind = [&](const char* k) {
    auto it = l.fallback_kinds.find(k);
    return std::to_string(it == l.fallback_kinds.end() ? 0 : it->second);
  };
  const std::string cost = !l.experiment_wall_median_s
                               ? "-"
                               : fmt::num(*l.experiment_wall_median_s, 1) + " / " + fmt::num(*l.experiment_wall_p90_s, 1);
  return {name,
          std::to_string(l.compiled),
          std::to_string(l.improved),
          kind("no-triton"),
          kind("extern-dominated"),
          kind("at-roofline"),
          kind("gate-failed"),
          kind("not-faster"),
          fmt::speedup(l.geomean_vs_compile),
          fmt::speedup(l.geomean_vs_max_autotune),
          fmt::speedup(l.geomean_vs_eager),
          std::to_string(l.experiment_wall_s.size()) + " (" + std::to_string(l.experiments_screened) + ")",
          cost};
}

}  // namespace

bool has_dispatch(const Summary& s) {
  for (const auto& l : s.levels)
    if (l.compiled > 0) return true;
  return false;
}

Table dispatch_level_table(const Summary& s) {
  Table t;
  t.header = {"Level",        "Problems",     "Improved",   "Fallback: no Triton",      "extern-dominated",
              "at roofline",  "gate failed",  "not faster", "Geomean vs torch.compile", "vs max-autotune",
              "vs eager",     "Experiments (screened)",     "s per experiment: median / p90"};
  t.numeric.assign(t.header.size(), true);
  t.numeric[0] = false;
  for (const auto& l : s.levels)
    if (l.compiled > 0) t.rows.push_back(level_cells(l, l.level));
  if (s.levels.size() > 1) {
    t.total_row = static_cast<int>(t.rows.size());
    t.rows.push_back(level_cells(s.overall, "all"));
  }
  return t;
}

Table dispatch_problem_table(const Summary& s) {
  Table t;
  t.header = {"Problem", "Outcome", "Triton share", "Triton kernels", "Extern calls",
              "Searched", "Kept",    "vs torch.compile", "Fallback reason"};
  t.numeric = {false, false, true, true, true, true, true, true, false};
  for (const auto& row : s.rows) {
    const ProblemResult& r = *row.record;
    if (r.mode != "compiled") continue;
    std::string kept = std::to_string(r.kernels_kept);
    if (r.templates_kept > 0)
      kept += " (" + std::to_string(r.templates_kept) + " template" + (r.templates_kept == 1 ? "" : "s") + ")";
    t.rows.push_back({r.level + "/" + r.problem, to_string(r.outcome), fmt::fraction_pct(r.triton_share),
                      std::to_string(r.triton_kernels), std::to_string(r.extern_calls),
                      std::to_string(r.kernels_searched), kept, fmt::speedup(row.speedup_vs_compile),
                      r.outcome == Outcome::kFallback ? r.reason : ""});
  }
  return t;
}

}  // namespace kgate::report

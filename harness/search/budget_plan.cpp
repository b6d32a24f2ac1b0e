#include "search/budget_plan.h"

#include <algorithm>
#include <cstdio>

namespace kgate::search {

BudgetPlan plan_budgets(const std::vector<PlanInput>& inputs, double suite_wall_s, double spent_s,
                        double floor_s, double cap_s) {
  BudgetPlan plan;
  plan.suite_wall_s = suite_wall_s;
  plan.spent_s = std::max(0.0, spent_s);
  const double left = std::max(0.0, suite_wall_s - plan.spent_s);
  double total_us = 0;
  for (const auto& in : inputs) total_us += std::max(0.0, in.baseline_us);
  double total_gain = 0;
  for (const auto& in : inputs) {
    PlanEntry e;
    e.problem = in.problem;
    e.share = total_us > 0 ? std::max(0.0, in.baseline_us) / total_us
                           : 1.0 / static_cast<double>(inputs.size());
    if (in.roofline_floor_us > 0 && in.baseline_us > 0)
      e.headroom = std::clamp(1.0 - in.roofline_floor_us / in.baseline_us, 0.0, 1.0);
    else
      e.headroom = 0.5;
    e.gain = e.share * e.headroom;
    total_gain += e.gain;
    plan.entries.push_back(e);
  }
  const double n = static_cast<double>(inputs.size());
  // When the floors alone exceed the suite budget, everyone gets an equal slice.
  double floor = std::min(floor_s, n > 0 ? left / n : 0.0);
  double rest = std::max(0.0, left - floor * n);
  for (auto& e : plan.entries) {
    double extra = total_gain > 0 ? rest * e.gain / total_gain : rest / n;
    e.budget_s = floor + extra;
    if (cap_s > 0) e.budget_s = std::min(e.budget_s, std::max(cap_s, floor));
  }
  std::stable_sort(plan.entries.begin(), plan.entries.end(),
                   [](const PlanEntry& a, const PlanEntry& b) { return a.gain > b.gain; });
  return plan;
}

std::string BudgetPlan::table() const {
  std::string s;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-28s %8s %9s %8s %9s\n", "problem", "share", "headroom",
                "gain", "budget_s");
  s += buf;
  for (const auto& e : entries) {
    std::snprintf(buf, sizeof buf, "%-28s %7.1f%% %8.1f%% %8.3f %9.1f\n", e.problem.c_str(),
                  e.share * 100, e.headroom * 100, e.gain, e.budget_s);
    s += buf;
  }
  if (spent_s > 0)
    std::snprintf(buf, sizeof buf, "suite wall budget %.1f s: %.1f s went to the baselines, %.1f s split over the searches",
                  suite_wall_s, spent_s, std::max(0.0, suite_wall_s - spent_s));
  else
    std::snprintf(buf, sizeof buf, "suite wall budget %.1f s", suite_wall_s);
  s += buf;
  return s;
}

}  // namespace kgate::search

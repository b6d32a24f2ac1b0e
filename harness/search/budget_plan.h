#pragma once
// How a suite's wall-time budget -- what is left of it once the baselines are measured --
// is split across its problems (Amdahl): a problem's
// expected end-to-end gain is its share of the suite's baseline time times the
// fraction of its time still above the roofline floor. Each problem gets a floor, the
// rest follows the gain, nobody gets more than the per-problem cap, and problems are
// searched in order of expected gain.
#include <string>
#include <vector>

namespace kgate::search {

struct PlanInput {
  std::string problem;
  double baseline_us = 0;
  double roofline_floor_us = 0;  // 0 = unknown: assume half the time is removable
};

struct PlanEntry {
  std::string problem;
  double share = 0;     // of the suite's baseline time
  double headroom = 0;  // 1 - floor/baseline, in [0, 1]
  double gain = 0;      // share * headroom
  double budget_s = 0;
};

struct BudgetPlan {
  std::vector<PlanEntry> entries;  // highest gain first
  double suite_wall_s = 0;
  double spent_s = 0;  // of suite_wall_s before the plan (the baselines): not split
  std::string table() const;  // what `kgate run` prints before searching
};

// `spent_s` of `suite_wall_s` is gone already; the rest (none when it is all spent: every
// search then moves on at once) is what the floors and the gain split.
BudgetPlan plan_budgets(const std::vector<PlanInput>& inputs, double suite_wall_s, double spent_s,
                        double floor_s, double cap_s);

}  // namespace kgate::search

#include "search/budget_plan.h"

#include <gtest/gtest.h>

namespace kgate::search {
namespace {

TEST(SearchBudgetPlan, SplitsByTimeShareTimesHeadroomWithAFloor) {
  // a: 80% of the time, far from roofline; b: 20%, far; c: tiny and at roofline.
  BudgetPlan plan = plan_budgets({{"b", 200, 20}, {"a", 800, 80}, {"c", 1, 1}}, 300, 0, 20, 0);
  ASSERT_EQ(plan.entries.size(), 3u);
  EXPECT_EQ(plan.entries[0].problem, "a");  // highest expected gain first
  EXPECT_EQ(plan.entries[1].problem, "b");
  EXPECT_EQ(plan.entries[2].problem, "c");
  EXPECT_DOUBLE_EQ(plan.entries[2].headroom, 0.0);
  EXPECT_DOUBLE_EQ(plan.entries[2].budget_s, 20.0);  // the floor
  double total = 0;
  for (const auto& e : plan.entries) total += e.budget_s;
  EXPECT_NEAR(total, 300, 1e-9);
  EXPECT_NEAR(plan.entries[0].budget_s / plan.entries[1].budget_s, (20 + 240 * 0.8) / (20 + 240 * 0.2), 1e-3);
  EXPECT_NE(plan.table().find("budget_s"), std::string::npos);
}

TEST(SearchBudgetPlan, CapAndTinySuiteBudgets) {
  BudgetPlan capped = plan_budgets({{"a", 100, 0}, {"b", 100, 0}}, 1000, 0, 10, 60);
  for (const auto& e : capped.entries) EXPECT_DOUBLE_EQ(e.budget_s, 60);
  // Unknown roofline: half the time is assumed removable, split evenly.
  EXPECT_DOUBLE_EQ(capped.entries[0].headroom, 0.5);
  // Floors larger than the suite budget: equal slices that add up to the budget.
  BudgetPlan tiny = plan_budgets({{"a", 1, 0}, {"b", 9, 0}}, 10, 0, 30, 0);
  EXPECT_NEAR(tiny.entries[0].budget_s + tiny.entries[1].budget_s, 10, 1e-9);
  EXPECT_TRUE(plan_budgets({}, 100, 0, 10, 0).entries.empty());
}

TEST(SearchBudgetPlan, TheBaselinesTimeIsNotSplit) {
  // 300 s of a 400 s suite went to the baselines: the floors and the gain split 100 s.
  BudgetPlan plan = plan_budgets({{"a", 800, 80}, {"b", 200, 20}}, 400, 300, 20, 0);
  EXPECT_NEAR(plan.entries[0].budget_s + plan.entries[1].budget_s, 100, 1e-9);
  EXPECT_NEAR(plan.entries[0].budget_s, 20 + 60 * 0.8, 1e-9);
  EXPECT_NE(plan.table().find("300.0 s went to the baselines, 100.0 s split over the searches"), std::string::npos)
      << plan.table();
  // All of it spent (or more): nothing to split, every search moves on at once.
  for (const auto& e : plan_budgets({{"a", 1, 0}, {"b", 9, 0}}, 400, 450, 20, 30).entries) EXPECT_EQ(e.budget_s, 0);
}

}  // namespace
}  // namespace kgate::search

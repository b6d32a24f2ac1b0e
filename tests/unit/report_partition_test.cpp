// Shard partition: deterministic, complete, balanced by cost; --shard parsing.
#include "report/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "core/error.h"

namespace kgate::report {
namespace {

std::vector<std::string> ids(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("level1/p" + std::to_string(100 + i));
  return v;
}

TEST(ReportPartition, RoundRobinWithoutHistory) {
  auto shards = partition({"c", "a", "b", "d", "e", "a"}, 2);
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0], (std::vector<std::string>{"a", "c", "e"}));
  EXPECT_EQ(shards[1], (std::vector<std::string>{"b", "d"}));
}

TEST(ReportPartition, CompleteDisjointAndOrderIndependent) {
  auto problems = ids(37);
  auto a = partition(problems, 5);
  std::reverse(problems.begin(), problems.end());
  auto b = partition(problems, 5);
  EXPECT_EQ(a, b);
  std::set<std::string> all;
  size_t total = 0;
  for (const auto& s : a) {
    total += s.size();
    all.insert(s.begin(), s.end());
  }
  EXPECT_EQ(total, 37u);
  EXPECT_EQ(all.size(), 37u);
}

TEST(ReportPartition, BalancedByCost) {
  auto problems = ids(20);
  std::map<std::string, double> cost;
  for (int i = 0; i < 20; ++i) cost[problems[static_cast<size_t>(i)]] = i < 2 ? 1000 : 10;
  auto shards = partition(problems, 2, cost);
  auto load = [&](const std::vector<std::string>& s) {
    double t = 0;
    for (const auto& id : s) t += cost[id];
    return t;
  };
  // The two expensive problems land on different shards.
  EXPECT_NEAR(load(shards[0]), load(shards[1]), 10.0 + 1e-9);
  // Round-robin would have put both 1000 s problems (p100, p101) on different shards too, so
  // check a case it gets wrong: expensive problems at even positions.
  std::map<std::string, double> even;
  for (int i = 0; i < 20; ++i) even[problems[static_cast<size_t>(i)]] = (i % 2 == 0) ? 100 : 1;
  auto rr = partition(problems, 2);
  auto lpt = partition(problems, 2, even);
  auto load2 = [&](const std::vector<std::string>& s) {
    double t = 0;
    for (const auto& id : s) t += even[id];
    return t;
  };
  EXPECT_GT(std::abs(load2(rr[0]) - load2(rr[1])), 900);
  EXPECT_LE(std::abs(load2(lpt[0]) - load2(lpt[1])), 100);
}

TEST(ReportPartition, UnknownCostsGetTheMedian) {
  std::map<std::string, double> cost{{"a", 10}, {"b", 10}, {"c", 10}};
  auto shards = partition({"a", "b", "c", "x", "y", "z"}, 2, cost);
  EXPECT_EQ(shards[0].size(), 3u);
  EXPECT_EQ(shards[1].size(), 3u);
}

TEST(ReportPartition, ShardsCoverTheProblemsAndParse) {
  auto problems = ids(10);
  std::vector<std::string> joined;
  const auto shards = partition(problems, parse_shard("3/3").count);
  for (int k = 1; k <= 3; ++k) {
    const auto& s = shards[static_cast<size_t>(parse_shard(std::to_string(k) + "/3").index - 1)];
    joined.insert(joined.end(), s.begin(), s.end());
  }
  std::sort(joined.begin(), joined.end());
  EXPECT_EQ(joined, problems);
  EXPECT_EQ(parse_shard("2/4").index, 2);
  EXPECT_EQ(parse_shard("2/4").count, 4);
  for (const char* bad : {"", "1", "0/2", "3/2", "a/b", "1/0", "1/2/3", "-1/2"})
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
  EXPECT_THROW(partition(problems, 0), UsageError);
  EXPECT_EQ(partition({}, 3).size(), 3u);
}

}  // namespace
}  // namespace kgate::report

#include "report/partition.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "core/error.h"

namespace kgate::report {
namespace {

bool parse_int(const std::string& s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

ShardInfo parse_shard(const std::string& k_of_n) {
  auto slash = k_of_n.find('/');
  ShardInfo s;
  if (slash == std::string::npos || !parse_int(k_of_n.substr(0, slash), s.index) ||
      !parse_int(k_of_n.substr(slash + 1), s.count))
    throw UsageError("--shard: expected k/n (e.g. 2/4), got \"" + k_of_n + "\"");
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw UsageError("--shard: need 1 <= k <= n, got \"" + k_of_n + "\"");
  return s;
}

std::vector<std::vector<std::string>> partition(const std::vector<std::string>& problems, int n,
                                                const std::map<std::string, double>& costs) {
  if (n < 1) throw UsageError("partition: the shard count must be >= 1, got " + std::to_string(n));
  std::set<std::string> ids(problems.begin(), problems.end());
  std::vector<std::vector<std::string>> shards(static_cast<size_t>(n));

  std::vector<double> known;
  for (const auto& id : ids)
    if (auto it = costs.find(id); it != costs.end() && std::isfinite(it->second) && it->second > 0)
      known.push_back(it->second);

  if (known.empty()) {
    size_t i = 0;
    for (const auto& id : ids) shards[i++ % shards.size()].push_back(id);
    return shards;
  }

  std::sort(known.begin(), known.end());
  const double median = known[known.size() / 2];
  std::vector<std::pair<double, std::string>> items;
  for (const auto& id : ids) {
    auto it = costs.find(id);
    bool ok = it != costs.end() && std::isfinite(it->second) && it->second > 0;
    items.emplace_back(ok ? it->second : median, id);
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second < b.second;
  });
  std::vector<double> load(shards.size(), 0.0);
  for (const auto& [cost, id] : items) {
    size_t best = 0;
    for (size_t s = 1; s < load.size(); ++s)
      if (load[s] < load[best]) best = s;
    load[best] += cost;
    shards[best].push_back(id);
  }
  for (auto& s : shards) std::sort(s.begin(), s.end());
  return shards;
}

}  // namespace kgate::report

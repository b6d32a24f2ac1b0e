#pragma once
// Sharding a suite over CI jobs (`kgate run --shard k/n`). The partition is a pure function
// of the problem ids, n and the cost table, so every shard job computes the same split
// without talking to the others.
#include <map>
#include <string>
#include <vector>

#include "report/run_info.h"

namespace kgate::report {

// "k/n" with 1 <= k <= n. Throws UsageError("--shard: ...") otherwise.
ShardInfo parse_shard(const std::string& k_of_n);

// Splits `problems` (ids; duplicates ignored) into n lists. Without costs: round-robin over
// the ids sorted. With costs (expected seconds per problem, e.g. History::expected_cost_s):
// longest-processing-time-first onto the least-loaded shard; a problem without a cost gets
// the median known cost. Ties break by id and shard index, so the result is deterministic.
// Each list is sorted by id. Throws UsageError when n < 1.
std::vector<std::vector<std::string>> partition(const std::vector<std::string>& problems, int n,
                                                const std::map<std::string, double>& cost_from_history = {});

}  // namespace kgate::report

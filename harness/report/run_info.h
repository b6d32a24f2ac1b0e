#pragma once
// What one run (or one shard of it) was: written by `kgate run` / `kgate check` as
// OUT/run.json next to OUT/results/*.json. Reporters and `kgate merge` read it; the search
// fills it. Versioned like every kgate file.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/record.h"

namespace kgate::report {

// Which kind of pipeline produced the records: a nightly/weekly search run or a PR check.
// It decides how a failing gate is reported (regression vs PR gate failure).
enum class RunKind { kRun, kCheck };
NLOHMANN_JSON_SERIALIZE_ENUM(RunKind, {{RunKind::kRun, "run"}, {RunKind::kCheck, "check"}})

// Shard k of n, 1-based (`--shard 2/4` = index 2, count 4). An unsharded run is 1/1.
struct ShardInfo {
  int index = 1;
  int count = 1;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ShardInfo, index, count)

struct RunInfo {
  int version = 1;
  RunKind kind = RunKind::kRun;
  std::string suite;
  std::string run_id;        // the same in every shard of one run
  std::string config_hash;   // hash of the resolved suite + configs; shards must agree
  uint64_t seed = 0;
  std::string started_at;    // ISO 8601 UTC, "2026-11-29T02:00:00Z"
  std::string finished_at;   // "" while running / when interrupted before the end
  bool interrupted = false;
  Environment env;
  ShardInfo shard;
  std::vector<std::string> planned;  // "<level>/<problem>" ids this shard was given
  // The suite's regression policy, copied so reports need no config to classify.
  bool fail_on_performance = false;
  double regression_threshold = 1.03;  // slowdown ratio that counts as a regression
  double keep_threshold = 1.01;        // speedup lower bound that counts as improved
  // `kgate merge --latest`: the runs whose records this directory combines (each record
  // keeps its own run_id); empty for a run's own directory and for merged shards.
  std::vector<std::string> merged_runs;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunInfo, version, kind, suite, run_id,
                                                config_hash, seed, started_at, finished_at,
                                                interrupted, env, shard, planned,
                                                fail_on_performance, regression_threshold,
                                                keep_threshold, merged_runs)

// Every record of one output directory: what reporters, merge and history consume.
struct RunRecords {
  RunInfo info;
  std::vector<ProblemResult> results;  // sorted by (level, problem)
};

}  // namespace kgate::report

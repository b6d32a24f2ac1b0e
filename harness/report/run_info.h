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
  // A shard of a sharded run (shard.count > 1): the plan of every shard of the run, shard
  // k's at k-1, so `kgate merge` can name the problems of a shard whose output is missing.
  std::vector<std::vector<std::string>> shard_plans;
  // `kgate merge` of a sharded run without every shard's output: the shards (k of
  // shard.count) it lacks, each an infrastructure error in every report; shard.index is
  // then 0 (the directory is no one shard, nor the whole run). Empty otherwise.
  std::vector<int> missing_shards;
  // The history database that could not be read or written after the problems ran ("history
  // DB: ..."): each an infrastructure error in every report (exit 3, a JUnit <error> of
  // suite "kgate"), so no report says PASS where the exit code says 3. Written only when set.
  std::vector<std::string> history_errors;
};

// As NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT would, except that shard_plans,
// missing_shards and history_errors are written only when set: a run that needs none of
// them writes the run.json (and report.json "run") it always did.
inline void to_json(nlohmann::json& j, const RunInfo& r) {
  j = nlohmann::json{{"version", r.version},
                     {"kind", r.kind},
                     {"suite", r.suite},
                     {"run_id", r.run_id},
                     {"config_hash", r.config_hash},
                     {"seed", r.seed},
                     {"started_at", r.started_at},
                     {"finished_at", r.finished_at},
                     {"interrupted", r.interrupted},
                     {"env", r.env},
                     {"shard", r.shard},
                     {"planned", r.planned},
                     {"fail_on_performance", r.fail_on_performance},
                     {"regression_threshold", r.regression_threshold},
                     {"keep_threshold", r.keep_threshold},
                     {"merged_runs", r.merged_runs}};
  if (!r.shard_plans.empty()) j["shard_plans"] = r.shard_plans;
  if (!r.missing_shards.empty()) j["missing_shards"] = r.missing_shards;
  if (!r.history_errors.empty()) j["history_errors"] = r.history_errors;
}

inline void from_json(const nlohmann::json& j, RunInfo& r) {
  const RunInfo d;
  r.version = j.value("version", d.version);
  r.kind = j.value("kind", d.kind);
  r.suite = j.value("suite", d.suite);
  r.run_id = j.value("run_id", d.run_id);
  r.config_hash = j.value("config_hash", d.config_hash);
  r.seed = j.value("seed", d.seed);
  r.started_at = j.value("started_at", d.started_at);
  r.finished_at = j.value("finished_at", d.finished_at);
  r.interrupted = j.value("interrupted", d.interrupted);
  r.env = j.value("env", d.env);
  r.shard = j.value("shard", d.shard);
  r.planned = j.value("planned", d.planned);
  r.fail_on_performance = j.value("fail_on_performance", d.fail_on_performance);
  r.regression_threshold = j.value("regression_threshold", d.regression_threshold);
  r.keep_threshold = j.value("keep_threshold", d.keep_threshold);
  r.merged_runs = j.value("merged_runs", d.merged_runs);
  r.shard_plans = j.value("shard_plans", d.shard_plans);
  r.missing_shards = j.value("missing_shards", d.missing_shards);
  r.history_errors = j.value("history_errors", d.history_errors);
}

// Every record of one output directory: what reporters, merge and history consume.
struct RunRecords {
  RunInfo info;
  std::vector<ProblemResult> results;  // sorted by (level, problem)
};

}  // namespace kgate::report

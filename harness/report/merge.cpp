#include "report/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "report/record_io.h"

namespace fs = std::filesystem;

namespace kgate::report {
namespace {

std::string canonical(const std::string& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

}  // namespace

namespace {

// kgate merge --latest: each problem's record from the run that started last.
RunRecords merge_latest(const std::vector<std::string>& dirs) {
  std::vector<std::pair<RunRecords, std::string>> runs;
  for (const auto& dir : dirs) {
    runs.emplace_back(load_run_dir(dir), dir);
    const RunInfo& info = runs.back().first.info;
    const RunInfo& first = runs.front().first.info;
    if (info.suite != first.suite)
      throw UsageError("kgate merge --latest: " + dir + " ran suite \"" + info.suite + "\" but " +
                       runs.front().second + " ran \"" + first.suite + "\"; combine the runs of one suite");
    if (info.kind != first.kind)
      throw UsageError("kgate merge --latest: " + dir + " and " + runs.front().second +
                       " are different kinds of run (run vs check)");
  }
  // Oldest first, so a later run's record replaces an earlier one's (ties: argument order).
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.first.info.started_at < b.first.info.started_at;
  });
  RunRecords merged;
  merged.info = runs.back().first.info;
  merged.info.shard = ShardInfo{};
  merged.info.shard_plans.clear();
  merged.info.missing_shards.clear();
  merged.info.interrupted = false;  // each record kept is a finished problem's
  std::map<std::string, ProblemResult> latest;
  std::set<std::string> planned;
  for (auto& [part, dir] : runs) {
    if (!part.info.started_at.empty() &&
        (merged.info.started_at.empty() || part.info.started_at < merged.info.started_at))
      merged.info.started_at = part.info.started_at;
    if (part.info.finished_at > merged.info.finished_at) merged.info.finished_at = part.info.finished_at;
    planned.insert(part.info.planned.begin(), part.info.planned.end());
    // A problem a run was given but did not finish (cut by its device call's limit) has no
    // record there: it never replaces another run's result.
    const std::vector<std::string> unfinished = planned_without_result(part);
    for (auto& r : part.results) {
      const std::string key = r.level + "/" + r.problem;
      if (std::find(unfinished.begin(), unfinished.end(), key) == unfinished.end() && !is_missing_shard_row(r))
        latest[key] = std::move(r);
    }
  }
  std::size_t unmeasured = 0;
  for (const auto& key : planned) unmeasured += latest.count(planned_record_key(key)) ? 0 : 1;
  if (unmeasured > 0)
    log::warn("kgate merge --latest: " + std::to_string(unmeasured) + " of " + std::to_string(planned.size()) +
              " planned problems have a record in none of the " + std::to_string(runs.size()) +
              " runs; the report covers the " + std::to_string(latest.size()) + " that do");
  merged.info.planned.clear();
  std::set<std::string> run_ids;  // a combined directory given again brings its runs
  for (const auto& [part, dir] : runs) {
    run_ids.insert(part.info.run_id);
    run_ids.insert(part.info.merged_runs.begin(), part.info.merged_runs.end());
  }
  merged.info.merged_runs.assign(run_ids.begin(), run_ids.end());
  for (auto& [key, r] : latest) {
    merged.info.planned.push_back(key);
    merged.results.push_back(std::move(r));
  }
  log::info("kgate merge --latest: " + std::to_string(merged.results.size()) + " problems from " +
            std::to_string(runs.size()) + " runs of suite " + merged.info.suite + ", the newest " +
            merged.info.run_id);
  return merged;
}

}  // namespace

RunRecords merge_runs(const std::vector<std::string>& dirs, MergeMode mode) {
  if (dirs.empty()) throw UsageError("kgate merge: no shard directories given");
  if (mode == MergeMode::kLatest) return merge_latest(dirs);
  RunRecords merged;
  std::map<std::string, std::pair<nlohmann::json, std::string>> by_key;  // key -> (record, dir)
  std::set<int> shard_indices;
  std::set<int> shard_counts;
  std::set<std::string> planned;
  std::vector<std::vector<std::string>> shard_plans;  // from the first shard that has them
  std::map<std::string, ProblemResult> no_record;     // planned by an input without a record
  bool whole_run = false;
  std::string first_dir;

  for (const auto& dir : dirs) {
    RunRecords part = load_run_dir(dir);
    const RunInfo& info = part.info;
    if (first_dir.empty()) {
      first_dir = dir;
      merged.info = info;
    } else {
      if (info.run_id != merged.info.run_id)
        throw UsageError("kgate merge: " + dir + " is from run \"" + info.run_id + "\" but " +
                         first_dir + " is from run \"" + merged.info.run_id +
                         "\"; merge only the shards of one run");
      if (info.config_hash != merged.info.config_hash)
        throw UsageError("kgate merge: " + dir + " has config hash \"" + info.config_hash +
                         "\" but " + first_dir + " has \"" + merged.info.config_hash +
                         "\"; the shards ran different configurations");
      if (info.kind != merged.info.kind)
        throw UsageError("kgate merge: " + dir + " and " + first_dir +
                         " are different kinds of run (run vs check)");
      if (!info.started_at.empty() &&
          (merged.info.started_at.empty() || info.started_at < merged.info.started_at))
        merged.info.started_at = info.started_at;
      if (info.finished_at > merged.info.finished_at) merged.info.finished_at = info.finished_at;
      merged.info.interrupted = merged.info.interrupted || info.interrupted;
    }
    // A whole run (unsharded, or a complete merge of its shards) holds every shard.
    if (info.shard.count == 1) whole_run = true;
    if (info.shard.count > 1) {
      shard_counts.insert(info.shard.count);
      if (info.shard.index == 0) {  // an earlier merge that lacked some shards: it holds the others
        for (int k = 1; k <= info.shard.count; ++k)
          if (std::find(info.missing_shards.begin(), info.missing_shards.end(), k) == info.missing_shards.end())
            shard_indices.insert(k);
      } else {
        shard_indices.insert(info.shard.index);
      }
      if (shard_plans.empty()) shard_plans = info.shard_plans;
    }
    planned.insert(info.planned.begin(), info.planned.end());
    const std::vector<std::string> unfinished = planned_without_result(part);
    for (auto& r : part.results) {
      // An earlier merge's row for a shard it lacked: this merge decides again.
      if (is_missing_shard_row(r)) continue;
      // A problem this input planned but has no record of (load_run_dir's row): another
      // input's record of it stands; with none, the row comes back after the loop.
      if (std::find(unfinished.begin(), unfinished.end(), r.level + "/" + r.problem) != unfinished.end()) {
        no_record.emplace(r.level + "/" + r.problem, std::move(r));
        continue;
      }
      std::string key = r.level + "/" + r.problem;
      nlohmann::json j = r;
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        by_key.emplace(key, std::make_pair(j, dir));
        merged.results.push_back(std::move(r));
      } else if (it->second.first != j) {
        throw UsageError("kgate merge: " + dir + " and " + it->second.second +
                         " hold different results for " + key);
      }
    }
  }

  for (auto& [key, row] : no_record)
    if (!by_key.count(key)) {
      by_key.emplace(key, std::make_pair(nlohmann::json(row), std::string("(no record)")));
      merged.results.push_back(std::move(row));
    }
  if (shard_counts.size() > 1)
    throw UsageError("kgate merge: the directories were split with different shard counts");
  // A shard whose output was not given is an infrastructure error, never a smaller run:
  // each of its problems (named by the shards' plans) is an error row saying so, and the
  // merged run.json names the missing shards (every report, the JUnit and the exit code
  // then fail the merge; report::summarize).
  std::vector<int> missing;
  const int n = shard_counts.size() == 1 ? *shard_counts.begin() : 1;
  for (int k = 1; k <= n && n > 1 && !whole_run; ++k)
    if (!shard_indices.count(k)) missing.push_back(k);
  const bool plans_known = shard_plans.size() == static_cast<size_t>(n);
  for (int k : missing) {
    const std::string shard = std::to_string(k) + "/" + std::to_string(n);
    if (!plans_known) {
      log::error("kgate merge: shard " + shard + " is missing; its problems cannot be named (the shards' run.json "
                 "has no shard_plans: an older kgate ran them); the reports carry the shard as one error");
      continue;
    }
    const std::vector<std::string>& plan = shard_plans[static_cast<size_t>(k - 1)];
    int added = 0;
    for (const auto& id : plan) {
      planned.insert(id);
      const std::string key = planned_record_key(id);
      if (by_key.count(key)) continue;
      ProblemResult m = no_result_row(merged.info, id, missing_shard_reason(k, n));
      by_key.emplace(key, std::make_pair(nlohmann::json(m), std::string("(missing shard)")));
      merged.results.push_back(std::move(m));
      ++added;
    }
    log::error("kgate merge: shard " + shard + " is missing: its " + std::to_string(added) +
               " problem" + (added == 1 ? " is an error" : "s are errors") + " in the reports");
  }
  for (const auto& key : planned)
    if (!by_key.count(planned_record_key(key))) log::warn("kgate merge: " + key + " was planned but has no record");

  merged.info.missing_shards = missing;
  if (missing.empty()) {
    merged.info.shard = ShardInfo{};  // the whole run, as an unsharded run writes it
    merged.info.shard_plans.clear();
  } else {
    merged.info.shard = ShardInfo{0, n};
    merged.info.shard_plans = shard_plans;
  }
  merged.info.planned.assign(planned.begin(), planned.end());
  std::sort(merged.results.begin(), merged.results.end(),
            [](const ProblemResult& a, const ProblemResult& b) {
              return std::tie(a.level, a.problem) < std::tie(b.level, b.problem);
            });
  return merged;
}

WrittenReports merge_dirs(const std::vector<std::string>& dirs, const std::string& out_dir,
                          const std::function<void(RunRecords&)>& adjust, MergeMode mode) {
  std::string out_c = canonical(out_dir);
  for (const auto& d : dirs)
    if (canonical(d) == out_c)
      throw UsageError("kgate merge: --out " + out_dir + " is also an input; write elsewhere");
  RunRecords merged = merge_runs(dirs, mode);
  if (adjust) adjust(merged);

  // Replace the records of a previous merge into the same directory.
  std::error_code ec;
  fs::path results = fs::path(out_dir) / "results";
  if (fs::is_directory(results, ec))
    for (const auto& e : fs::directory_iterator(results, ec))
      if (e.path().extension() == ".json") fs::remove(e.path(), ec);
  for (const auto& r : merged.results) write_result(out_dir, r);
  write_run_info(out_dir, merged.info);
  return write_reports(merged, out_dir);
}

}  // namespace kgate::report

#pragma once
// `kgate run` minus the command line: every problem of a suite's plan gets its baseline
// measured, then a budgeted keep/revert search (Amdahl order), then a final interleaved
// re-measure in a fresh worker. Everything it does is journaled first, so a killed run
// resumes with no experiment lost or run twice; workspaces, results.tsv and the result
// records are rebuilt from the journal.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/types.h"
#include "core/exit_code.h"
#include "report/record.h"
#include "report/run_info.h"
#include "search/candidate_evaluator.h"

namespace kgate::search {

struct RunItem {
  std::string level;          // level id ("native-demo")
  std::string problem_id;     // unique within the run
  config::NativeProblem problem;
  std::string gpu_target;     // configs/gpus id ("" = none matched / host)
  std::string starter;        // absolute path of the starter candidate
  std::string problem_file;   // absolute path of the problem YAML ("" = none)
  std::string skip_reason;    // non-empty: recorded as outcome `skipped`, not searched
};

struct SuiteRunOptions {
  std::string out = "out";
  std::string suite_path;
  config::Suite suite;
  std::string backend = "host";
  bool resume = false;
  std::optional<int> max_experiments;
  std::optional<uint64_t> seed;
  const std::atomic<bool>* interrupted = nullptr;  // set by SIGINT/SIGTERM
  std::string run_id;  // "" = generated (time + seed); shards of one run share one
  // What OUT/run.json says besides what the run fills in (run id, seed, times, env).
  report::ShardInfo shard;
  std::string config_hash;
  std::vector<std::string> planned;  // "<level>/<problem>" ids of this shard
  std::vector<std::vector<std::string>> shard_plans;  // every shard's planned ids (shard k's at k-1)
  std::string cache_dir;  // the workers' compile caches when outside OUT ("": OUT/cache)
};

// Builds the gate evaluator of one problem (the real one wraps gates::Evaluator).
using EvaluatorFactory = std::function<std::unique_ptr<CandidateEvaluator>(
    const RunItem& item, const std::string& workspace, uint64_t seed)>;

struct RunSummary {
  ExitCode code = ExitCode::kPass;
  std::string run_id;
  std::vector<report::ProblemResult> results;  // problems finished (this run + resumed)
  bool interrupted = false;
};

class SuiteRun {
 public:
  SuiteRun(SuiteRunOptions options, std::vector<RunItem> items, EvaluatorFactory factory);
  ~SuiteRun();
  RunSummary run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// File names under OUT (documented in docs/search.md).
std::string journal_path(const std::string& out);
std::string results_tsv_path(const std::string& out);
std::string result_record_path(const std::string& out, const std::string& level,
                               const std::string& problem);

}  // namespace kgate::search

#pragma once
// The history store (docs/architecture.md, docs/reports.md): one SQLite file with the runs, their results and
// the accepted kernels per (problem, GPU). Nightly jobs record their merged output here;
// the weekly report, shard costs and regression checks read it.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/run_info.h"

struct sqlite3;

namespace kgate::report {

// 1: runs, results, accepted(problem, gpu). 2: accepted results keyed by config too, with
// their speedup CI (a version 1 file is migrated when opened).
inline constexpr int kHistorySchemaVersion = 2;

// A result the pipeline accepted for a problem on a GPU target under one config: what later
// runs are compared with (report/regression.h, compare_with_accepted).
struct AcceptedKernel {
  std::string problem;      // "<level>/<problem>"
  std::string gpu;          // gpu target id (Environment::gpu_target, else the device name)
  std::string content_hash; // sha256 of the candidate source
  std::string accepted_at;  // ISO 8601 UTC
  std::string commit;       // experiment-repo commit of the kernel
  std::string run_id;
  double best_us = 0;
  double speedup = 0;
  std::string config_key;   // ProblemResult::config_key ("" = unknown)
  double speedup_lo = 0;    // the accepted result's speedup CI (its noise, for comparisons)
  double speedup_hi = 0;
};

struct RunSummaryRow {
  std::string run_id, suite, started_at, gpu;
  int problems = 0;
};

class History {
 public:
  // Opens or creates the database. Throws InfraError when it cannot be opened and
  // UsageError when it was written by a newer kgate (unknown schema version).
  explicit History(const std::string& path);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Stores the run and its results (replacing an earlier record of the same run_id, so
  // re-recording is idempotent). A search run (not a PR check) also accepts every improved,
  // correct result that names its kernel (best_hash) when its (problem, gpu, config) has no
  // accepted result yet, or when it is a different kernel significantly faster than the
  // accepted one (SpeedPolicy::clears_keep on speed_vs_accepted: the run's keep threshold).
  void record_run(const RunRecords& run);
  bool has_run(const std::string& run_id) const;

  void accept(const AcceptedKernel& k);
  // The latest accepted result of (problem, gpu, config_key).
  std::optional<AcceptedKernel> accepted(const std::string& problem, const std::string& gpu,
                                         const std::string& config_key = "") const;

  // Runs whose start lies in [since, until) (ISO date/time strings compare as text), oldest first.
  std::vector<RunSummaryRow> runs(const std::string& since, const std::string& until) const;
  // The stored records of one run (as written by kgate run), sorted.
  RunRecords load_run(const std::string& run_id) const;
  // Latest run start in the store ("" when empty).
  std::string latest_start() const;

  // Expected cost per problem id ("<level>/<problem>") for the shard partition: the mean
  // wall time of its last `window` results on `gpu` ("" = any GPU).
  std::map<std::string, double> expected_cost_s(const std::string& gpu = "", int window = 5) const;

  const std::string& path() const { return path_; }

  // How long a write waits for other writers (shards, merges, reports recording into one
  // file at once): SQLite's busy handler waits up to `attempt` per try; a write still
  // refused as busy or locked is rolled back and tried again until `total` has passed,
  // then it is an InfraError naming the database and what was not recorded. Never
  // dropped silently.
  struct LockWait {
    std::chrono::milliseconds attempt{10000};
    std::chrono::milliseconds total{120000};
  };
  void set_lock_wait(LockWait w);

 private:
  // body, tried again while it throws busy (with a jittered pause) until wait_.total.
  void with_retry(const std::string& what, const std::function<void()>& body);
  // BEGIN IMMEDIATE, body, COMMIT; retried from the start while the database is busy.
  void write_transaction(const std::string& what, const std::function<void()>& body);
  void insert_accepted(const AcceptedKernel& k);  // one statement, no retry (inside a transaction)
  void exec(const std::string& sql);
  void exec_noexcept(const std::string& sql);
  std::string schema_version() const;
  void migrate_from_1();
  std::string path_;
  sqlite3* db_ = nullptr;
  LockWait wait_;
};

// The GPU key used for history rows: the gpu target id when known, else the device name.
std::string gpu_key(const Environment& env);
// The GPU key of one record of a run: its own environment's, else the run's.
std::string gpu_key(const ProblemResult& r, const RunInfo& info);
// The history's id of a record: "<level>/<problem>".
std::string problem_key(const ProblemResult& r);
// An accepted result from a record of a run (accepted_at = the run's end, else its start).
AcceptedKernel accepted_from(const ProblemResult& r, const RunInfo& info);

}  // namespace kgate::report

#pragma once
// The history store (DESIGN.md §1, §6): one SQLite file with the runs, their results and
// the accepted kernels per (problem, GPU). Nightly jobs record their merged output here;
// the weekly report, shard costs and regression checks read it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/run_info.h"

struct sqlite3;

namespace kgate::report {

inline constexpr int kHistorySchemaVersion = 1;

// A kernel the pipeline accepted for a problem on a GPU target: what later nights are
// re-verified and re-measured against.
struct AcceptedKernel {
  std::string problem;      // "<level>/<problem>"
  std::string gpu;          // gpu target id (Environment::gpu_target, else the device name)
  std::string content_hash; // sha256 of the candidate source
  std::string accepted_at;  // ISO 8601 UTC
  std::string commit;       // experiment-repo commit of the kernel
  std::string run_id;
  double best_us = 0;
  double speedup = 0;
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
  // re-recording is idempotent) and accepts every improved, correct result that names its
  // kernel (best_hash): the accepted kernel of (problem, gpu) becomes that one.
  void record_run(const RunRecords& run);
  void record_run_dir(const std::string& out_dir);

  void accept(const AcceptedKernel& k);
  std::optional<AcceptedKernel> accepted(const std::string& problem, const std::string& gpu) const;

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

 private:
  void exec(const std::string& sql);
  std::string path_;
  sqlite3* db_ = nullptr;
};

// The GPU key used for history rows: the gpu target id when known, else the device name.
std::string gpu_key(const Environment& env);

}  // namespace kgate::report

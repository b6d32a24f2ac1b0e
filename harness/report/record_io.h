#pragma once
// Reading and writing the record files of one output directory:
//   OUT/run.json                     RunInfo
//   OUT/results/<level>__<problem>.json  ProblemResult, one per problem
// Loading never trusts the files: a missing, malformed or foreign record is a UsageError
// naming the file and the reason, never a crash.
#include <string>
#include <vector>

#include "report/record.h"
#include "report/run_info.h"

namespace kgate::report {

inline constexpr int kRecordVersion = 1;   // ProblemResult::version this kgate reads/writes
inline constexpr int kRunInfoVersion = 1;  // RunInfo::version

// "<level>__<problem>.json" with path separators in ids replaced by '_'.
std::string record_file_name(const std::string& level, const std::string& problem);

// The record key ("<level>/<problem>") of a planned id: a KernelBench id names a path below
// the level's root ("kb-level1/level1/19_ReLU"), its record the last component.
std::string planned_record_key(const std::string& planned_id);

// One record file. Throws UsageError("path: reason") on any problem.
ProblemResult load_result(const std::string& path);
RunInfo load_run_info(const std::string& path);

// The reason of the error row load_run_dir adds for a planned problem without a record.
inline constexpr const char* kPlannedNoResult = "planned but no result: the run ended before this problem finished";

// The planned problems of `run` that have no record of their own (load_run_dir's error
// rows), as "<level>/<problem>".
std::vector<std::string> planned_without_result(const RunRecords& run);

// The error row of planned problem `planned_id` of the run `info` describes, which has no
// result record: outcome error, `reason` saying why (load_run_dir's kPlannedNoResult rows,
// `kgate merge`'s missing-shard rows).
ProblemResult no_result_row(const RunInfo& info, const std::string& planned_id, const std::string& reason);

// The reason of the error row `kgate merge` writes for each problem of a shard whose output
// it was not given: "no result: shard 2/4 is missing".
std::string missing_shard_reason(int index, int count);
// Whether `r` is such a row (a later merge that is given the shard replaces it).
bool is_missing_shard_row(const ProblemResult& r);

// OUT/run.json (optional: derived from the records when absent, with a warning) and every
// OUT/results/*.json. Throws UsageError when there is no record, a record is malformed, two
// records describe the same problem, or records disagree on the run id.
RunRecords load_run_dir(const std::string& out_dir);

// Writes run.json and results/*.json (atomically per file: temp file + rename).
// Throws InfraError on I/O failure.
void write_run_info(const std::string& out_dir, const RunInfo& info);
// This machine and this kgate build (host name, version, git sha) for `backend`; the
// device fields stay empty for the caller to fill.
Environment host_environment(const std::string& backend);
void write_result(const std::string& out_dir, const ProblemResult& r);

// Writes `text` to `path` through a temp file + rename; creates parent directories.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace kgate::report

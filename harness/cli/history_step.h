#pragma once
// The history step every command that writes records shares (`kgate run`, `check`,
// `merge`, `report --from`, `accept`): which database, comparing a run's records with the
// accepted results, and what that adds to the exit status.
#include <string>

#include "core/exit_code.h"
#include "report/history.h"
#include "report/run_info.h"

namespace kgate::cli {

// `--db FILE`, else $KGATE_HISTORY; "" = no history.
std::string history_db(const std::string& flag);

// What makes two results of a problem comparable across runs and PR checks (the key of its
// accepted results besides problem and GPU): the problem file's content (op, shapes,
// dtypes, tolerances; `problem_source` is the native problem YAML or the KernelBench
// reference) and the backend. Not the kernel: a slower kernel committed since is what the
// comparison with the accepted result is there to catch.
std::string config_key_of(const std::string& problem_source, const std::string& backend);

// compare_with_accepted over `run`, each regression logged as a warning. Returns how many
// of them fail the pipeline (the suite's fail_on.performance).
int compare_with_history(report::RunRecords& run, const report::History& history);

// Rewrites the records of `out_dir` that exist there as files with the (compared) ones of
// `run` (a planned problem without a record stays without one), and its run.json with
// run.info (the history's errors in it).
void rewrite_records(const std::string& out_dir, const report::RunRecords& run);

// Logs a history error as "history DB: WHAT" (DB once when WHAT starts with it) and
// returns that line.
std::string log_history_error(const std::string& db, const std::exception& e);

// A history that could not be read or written, as an infrastructure error every report of
// the run states: logged, and kept in RunInfo::history_errors of the run.json in `run_dir`,
// which the reports written after it read. Returns kInfra.
ExitCode history_error_in_run_json(const std::string& run_dir, const std::string& db, const std::exception& e);

// The history step of a run whose records are in memory before its reports are written
// (`kgate run`, `check`, a merge's adjust hook, `kgate report --from`): `run` compared with the accepted results of
// the database `db` ("" = none) and, when `record`, recorded there. A history that cannot
// be opened, read or written is logged and kept in run.info.history_errors, so the reports
// written after state it (exit 3). Returns how many regressions fail the pipeline.
int compare_and_record(report::RunRecords& run, const std::string& db, bool record);

// What a history comparison adds to a command's exit status: 1 when a regression against
// the accepted results fails the pipeline, else 0.
inline ExitCode history_exit(int failing) { return failing > 0 ? ExitCode::kGateFailure : ExitCode::kPass; }

}  // namespace kgate::cli

// `kgate merge DIR... --out DIR`: one set of records and reports from shard outputs; with
// a history (--db, else $KGATE_HISTORY) the merged run is compared with the accepted
// results and recorded.
#include <optional>

#include "cli/commands.h"
#include "cli/history_step.h"
#include "core/error.h"
#include "core/log.h"
#include "core/paths.h"
#include "report/merge.h"

namespace kgate::cli {

ExitCode cmd_merge(const MergeOptions& o) {
  // --latest combines records other runs made (and recorded, with a history): the
  // combination is a report, not a run of its own.
  if (o.latest && !o.db.empty())
    throw UsageError("kgate merge --latest: --db does not apply (the runs it combines are recorded on their own)");
  paths::require_output_dir(o.out);
  const std::string db = o.latest ? std::string() : history_db(o.db);
  // A history that cannot be opened or written does not stop the merge (its records and
  // reports are what the pipeline publishes); the merge then exits with its error's status.
  std::optional<ExitCode> history_error;
  auto history_failed = [&](const Error& e) {
    log_history_error(db, e);
    history_error = e.code();
  };
  std::optional<report::History> history;
  try {
    if (!db.empty()) history.emplace(db);
  } catch (const Error& e) {
    history_failed(e);
  }
  report::RunRecords merged;
  int failing = 0;
  report::WrittenReports w = report::merge_dirs(
      o.dirs, o.out,
      [&](report::RunRecords& run) {
        if (history) failing = compare_with_history(run, *history);
        merged = run;
      },
      o.latest ? report::MergeMode::kLatest : report::MergeMode::kShards);
  for (const auto& f : w.files) log::info("wrote " + f);
  if (history) {
    try {
      history->record_run(merged);
      log::info("recorded run " + merged.info.run_id + " in " + db);
    } catch (const Error& e) {
      history_failed(e);
    }
  }
  // The merged run is the run the pipeline judges (its shards ran as parts of it): the
  // merge exits with the status its reports state -- 1 for a gate failure in any shard, 3
  // for an infrastructure error or a shard the merge was not given --, and with 1 for a
  // regression against the accepted results found here (the shards could not see it), so
  // a merge job is never green under a report that says FAIL.
  const ExitCode reported = w.exit_code;
  if (history_error) return worse(*history_error, reported);
  return worse(history_exit(failing), reported);
}

}  // namespace kgate::cli

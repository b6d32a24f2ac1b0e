// `kgate merge DIR... --out DIR`: one set of records and reports from shard outputs; with
// a history (--db, else $KGATE_HISTORY) the merged run is compared with the accepted
// results and recorded.
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
  // The merged run is compared with the accepted results and recorded before its reports
  // are written; a history that cannot be opened, read or written does not stop the merge
  // (its records and reports are what the pipeline publishes) and every report states it.
  int failing = 0;
  report::WrittenReports w = report::merge_dirs(
      o.dirs, o.out, [&](report::RunRecords& run) { failing = compare_and_record(run, db, /*record=*/true); },
      o.latest ? report::MergeMode::kLatest : report::MergeMode::kShards);
  for (const auto& f : w.files) log::info("wrote " + f);
  // The merged run is the run the pipeline judges (its shards ran as parts of it): the
  // merge exits with the status its reports state -- 1 for a gate failure in any shard, 3
  // for an infrastructure error, a shard the merge was not given or a history it could not
  // use --, and with 1 for a regression against the accepted results found here (the shards
  // could not see it), so a merge job is never green under a report that says FAIL.
  return worse(history_exit(failing), w.exit_code);
}

}  // namespace kgate::cli

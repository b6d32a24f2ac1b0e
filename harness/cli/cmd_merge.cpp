// `kgate merge DIR... --out DIR`: one set of records and reports from shard outputs; with
// a history (--db, else $KGATE_HISTORY) the merged run is compared with the accepted
// results and recorded.
#include <optional>

#include "cli/commands.h"
#include "cli/history_step.h"
#include "core/log.h"
#include "report/merge.h"

namespace kgate::cli {

ExitCode cmd_merge(const MergeOptions& o) {
  const std::string db = history_db(o.db);
  std::optional<report::History> history;
  if (!db.empty()) history.emplace(db);
  report::RunRecords merged;
  int failing = 0;
  report::WrittenReports w = report::merge_dirs(o.dirs, o.out, [&](report::RunRecords& run) {
    if (history) failing = compare_with_history(run, *history);
    merged = run;
  });
  for (const auto& f : w.files) log::info("wrote " + f);
  if (history) {
    history->record_run(merged);
    log::info("recorded run " + merged.info.run_id + " in " + db);
  }
  // Like `kgate report`: merging formats what the shards found and never fails the
  // pipeline for them; a regression against the accepted results, found here, does when
  // the suite fails on performance (the shards could not see it).
  return history_exit(failing);
}

}  // namespace kgate::cli

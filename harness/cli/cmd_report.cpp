// `kgate report`: regenerate reports from result records (--from), compare a run with the
// accepted results and record it into the history (--from + --db), or write the weekly
// trend report (--db --weekly).
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/history_step.h"
#include "core/error.h"
#include "core/paths.h"
#include "core/log.h"
#include "report/history.h"
#include "report/record_io.h"
#include "report/report_writer.h"
#include "report/weekly_report.h"

namespace kgate::cli {

ExitCode cmd_report(const ReportOptions& o) {
  if (o.from.empty() && !o.weekly)
    throw UsageError("kgate report: give --from DIR (reports from records) or --db FILE --weekly");
  if (o.weekly && o.db.empty()) throw UsageError("kgate report: --weekly needs --db FILE");
  if (!o.since.empty() && !o.weekly) throw UsageError("kgate report: --since needs --weekly");
  int failing = 0;
  ExitCode incomplete = ExitCode::kPass;  // the reports' own status when problems are missing
  if (!o.from.empty()) {
    report::RunRecords run = report::load_run_dir(o.from);
    if (!o.db.empty() && !run.info.merged_runs.empty())
      throw UsageError("kgate report: " + o.from + " combines " + std::to_string(run.info.merged_runs.size()) +
                       " runs (kgate merge --latest), recorded on their own: --db does not apply");
    std::string out = o.out.empty() ? o.from : o.out;
    paths::require_output_dir(out);
    ExitCode history_status = ExitCode::kPass;
    if (!o.db.empty()) {
      // Compared with the accepted results and recorded first, so the reports carry the
      // comparison, and a history that cannot be opened, read or written (exit 3, never a
      // run silently not recorded); the records and run.json of DIR are updated when the
      // reports go there too.
      failing = compare_and_record(run, o.db, /*record=*/true);
      if (!run.info.history_errors.empty()) history_status = ExitCode::kInfra;
      if (out == o.from) rewrite_records(o.from, run);
    }
    report::WrittenReports w = report::write_reports(run, out);
    for (const auto& f : w.files) log::info("wrote " + f);
    const std::vector<std::string> missing = report::planned_without_result(run);
    if (!missing.empty()) {
      std::string list;
      for (const auto& k : missing) list += (list.empty() ? "" : ", ") + k;
      log::error(o.from + ": " + std::to_string(missing.size()) + " of " + std::to_string(run.info.planned.size()) +
                 " planned problems have no result record (" + list +
                 "): the run ended before they finished; the reports list them as errors");
      incomplete = w.exit_code;
    }
    if (!run.info.missing_shards.empty()) {  // a `kgate merge` that lacked shards
      log::error(o.from + ": " + report::missing_shards_why(run.info) + "; the reports list them as errors");
      incomplete = w.exit_code;
    }
    incomplete = worse(incomplete, history_status);
  }
  if (o.weekly) {
    report::History h(o.db);
    report::WeeklyReport w = report::weekly_report(h, o.since);
    std::string out = o.out.empty() ? (o.from.empty() ? "." : o.from) : o.out;
    for (const auto& f : report::write_weekly(w, out)) log::info("wrote " + f);
  }
  // Regenerating the reports of a finished run does not fail the pipeline again: the run
  // that produced the records did. An incomplete run does: its reports list the missing
  // problems as errors, and the exit code says what they say. A regression against the
  // accepted results found here (--db) fails it when the suite fails on performance.
  return worse(history_exit(failing), incomplete);
}

}  // namespace kgate::cli

// `kgate report`: regenerate reports from result records (--from), record a run into the
// history (--from + --db), or write the weekly trend report (--db --weekly).
#include <string>

#include "cli/commands.h"
#include "core/error.h"
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
  if (!o.from.empty()) {
    report::RunRecords run = report::load_run_dir(o.from);
    std::string out = o.out.empty() ? o.from : o.out;
    report::WrittenReports w = report::write_reports(run, out);
    for (const auto& f : w.files) log::info("wrote " + f);
    if (!o.db.empty()) {
      report::History h(o.db);
      h.record_run(run);
      log::info("recorded run " + run.info.run_id + " in " + o.db);
    }
  }
  if (o.weekly) {
    report::History h(o.db);
    report::WeeklyReport w = report::weekly_report(h, o.since);
    std::string out = o.out.empty() ? (o.from.empty() ? "." : o.from) : o.out;
    for (const auto& f : report::write_weekly(w, out)) log::info("wrote " + f);
  }
  // Regenerating reports never fails the pipeline: the run that produced the records did.
  return ExitCode::kPass;
}

}  // namespace kgate::cli

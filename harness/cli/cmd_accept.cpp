// `kgate accept --db FILE RUN_DIR`: promote a run's results to the accepted results of the
// history, the ones later runs are compared with (docs/reports.md, "Regressions against the
// accepted results").
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "cli/history_step.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "report/record_io.h"
#include "report/summary.h"

namespace kgate::cli {

ExitCode cmd_accept(const AcceptOptions& o) {
  if (o.from.empty()) throw UsageError("kgate accept: give the run directory (kgate accept --db FILE RUN_DIR)");
  const std::string db = history_db(o.db);
  if (db.empty()) throw UsageError("kgate accept: give the history database with --db FILE (or $KGATE_HISTORY)");
  report::RunRecords run = report::load_run_dir(o.from);
  if (run.info.kind != report::RunKind::kRun)
    throw UsageError(o.from + ": a PR check's results are never accepted; accept the run that measures the merged kernel");

  // --problem names "<level>/<problem>" or "<problem>"; every one must name a result.
  const std::set<std::string> wanted(o.problems.begin(), o.problems.end());
  auto selected = [&](const report::ProblemResult& r) {
    return wanted.empty() || wanted.count(report::problem_key(r)) || wanted.count(r.problem);
  };
  std::string unknown;
  for (const auto& p : wanted) {
    bool hit = false;
    for (const auto& r : run.results) hit = hit || report::problem_key(r) == p || r.problem == p;
    if (!hit) unknown += (unknown.empty() ? "" : ", ") + p;
  }
  if (!unknown.empty()) throw UsageError(o.from + ": no result for " + unknown);

  report::History h(db);
  // Accepted rows name their run: the run is in the history first.
  if (!h.has_run(run.info.run_id)) {
    h.record_run(run);
    log::info("recorded run " + run.info.run_id + " in " + db);
  }
  const std::string now = utc_now("%Y-%m-%dT%H:%M:%SZ");
  int accepted = 0;
  for (const auto& r : run.results) {
    if (!selected(r)) continue;
    const std::string id = report::problem_key(r);
    if (!report::is_correct(r) || !(r.best_us > 0)) {
      log::warn(id + ": not accepted (" + report::to_string(r.outcome) +
                (r.reason.empty() ? "" : ": " + r.reason) + ")");
      continue;
    }
    report::AcceptedKernel k = report::accepted_from(r, run.info);
    k.accepted_at = now;
    h.accept(k);
    std::printf("accepted %s on %s: %.2f us, %.3fx [%.3f, %.3f] vs %s (run %s)\n", id.c_str(),
                k.gpu.c_str(), r.best_us, r.speedup, r.speedup_lo, r.speedup_hi,
                r.baseline_kind.empty() ? "baseline" : r.baseline_kind.c_str(), run.info.run_id.c_str());
    ++accepted;
  }
  if (accepted == 0) throw UsageError(o.from + ": nothing to accept (no correct, measured result)");
  std::fflush(stdout);
  log::info("accepted " + std::to_string(accepted) + " result" + (accepted == 1 ? "" : "s") + " of run " +
            run.info.run_id + " in " + db);
  return ExitCode::kPass;
}

}  // namespace kgate::cli

#include "search/suite_run.h"

#include <filesystem>
#include <set>

#include "core/clock.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "report/record_io.h"
#include "report/summary.h"
#include "search/budget_plan.h"
#include "search/suite_run_phases.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kgate::search {

std::string journal_path(const std::string& out) { return (fs::path(out) / "journal.jsonl").string(); }
std::string results_tsv_path(const std::string& out) { return (fs::path(out) / "results.tsv").string(); }
std::string result_record_path(const std::string& out, const std::string& level,
                               const std::string& problem) {
  return (fs::path(out) / "results" / report::record_file_name(level, problem)).string();
}

namespace {

using namespace suite;

// ---- journal: the problems of the plan, the journal opened (or resumed and replayed),
// what an interrupted writer left removed, run.json, results.tsv and the finished
// problems' records rebuilt from the journal.
void journal_phase(RunState& st) {
  init_problems(st);
  open_journal(st);
  // Under OUT's lock every temp file of a writer that is gone is garbage: a record, the
  // TSV, a report or a compile-cache entry that a kill -9 or a full disk interrupted.
  const std::vector<std::string> stale = core::remove_stale_temps(st.opt.out);
  if (!stale.empty())
    log::info("removed " + std::to_string(stale.size()) + " temp file" + (stale.size() == 1 ? "" : "s") +
              " left by an interrupted run (e.g. " + stale.front() + ")");
  write_run_json(st, false, false);
  for (auto& p : st.problems) finish_problem_setup(st, p);
  st.rewrite_tsv();
  for (auto& p : st.problems)
    if (p.done) st.write_result(*p.done);
}

// ---- baseline: experiment 0 of each problem, in plan order (a finished one's git checked
// on a resume, a skipped one journaled as such, a failing starter finalized at once).
// Returns the problem whose worker is kept: the last baseline's, in case the plan searches
// it first.
Problem* baseline_phase(RunState& st) {
  // One worker is kept: the last baseline's, in case the
  // plan searches its problem first (a PR check's single problem) -- its cached check
  // cases spare that search's first experiment the inputs and the float64 truth. Others
  // would each hold a process (and, on a GPU, memory) until their turn.
  Problem* kept = nullptr;
  for (auto& p : st.problems) {
    if (p.done) {
      if (!st.opt.resume) continue;
      try {
        check_finished_refs(st, p);
      } catch (const Error& e) {
        log::error(p.item->problem_id + ": " + e.what());
        st.error_result(p, e);
      }
      p.repo.reset();
      continue;
    }
    if (!p.infra_error.empty())
      log::info(p.item->problem_id + ": going on after an infrastructure error: " + p.infra_error);
    if (!p.item->skip_reason.empty()) {
      report::ProblemResult res = st.base_result(p);
      res.outcome = report::Outcome::kSkipped;
      res.reason = p.item->skip_reason;
      st.problem_done(p, std::move(res));
      continue;
    }
    if (st.stopped()) break;
    if (kept != nullptr) kept->eval.reset();  // before this problem's worker starts
    kept = nullptr;
    try {
      open_workspace(p);
      reconcile(st, p);
      if (p.compiled && p.baseline()) load_inventory(st, p);
      if (!p.baseline()) run_baseline(st, p);
      if (p.baseline() && !p.baseline()->passed) finalize(st, p, 0);
      // Nothing to search (a compiled model with no kernel worth it, an A/A): its result now,
      // so a run cut later (a CI job's timeout, a shard's device budget) keeps it; its
      // re-measures against the reference model come after every search (a max-autotune
      // compile of a GEMM takes most of a minute).
      else if (const std::string why = nothing_to_search(st, p); p.baseline() && !why.empty()) {
        st.stop_reasons[p.item->problem_id] = why;
        finalize(st, p, 0, References::kLater);
      }
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      // Infrastructure or a problem its worker rejects (a KernelBench file that fails
      // to load, a device out of memory): this problem's error, not the run's end.
      log::error(p.item->problem_id + ": " + e.what());
      st.error_result(p, e);
    }
    if (p.done) p.eval.reset();
    else if (p.eval) kept = &p;
  }
  return kept;
}

// ---- plan: the Amdahl order and budgets over the problems with a passing baseline.
BudgetPlan plan_phase(RunState& st, Problem* kept) {
  std::vector<PlanInput> inputs;
  for (auto& p : st.problems)
    if (p.baseline() && p.baseline()->passed && !p.done)
      inputs.push_back({p.item->problem_id, p.baseline()->latency_us, p.baseline()->roofline_floor_us});
  const auto& b = st.opt.suite.budget;
  // suite_wall_s is the whole run's: the baselines (compiles, profiles, float64 truths)
  // came out of it; the searches split what is left.
  BudgetPlan plan = plan_budgets(inputs, b.suite_wall_s, now_s() - st.started_s, b.problem_floor_s, b.problem_wall_s);
  if (!inputs.empty() && !st.stopped()) log::info("search plan (Amdahl order):\n" + plan.table());
  if (kept != nullptr && (plan.entries.empty() || plan.entries.front().problem != kept->item->problem_id))
    kept->eval.reset();
  return plan;
}

// ---- search and final: each problem, highest expected gain first, searched, then its
// final re-measure and result.
void search_phase(RunState& st, const BudgetPlan& plan) {
  for (const auto& entry : plan.entries) {
    Problem& p = *st.find(entry.problem);
    p.budget_s = entry.budget_s;
    if (p.done) continue;
    if (st.stopped()) break;
    try {
      double t0 = now_s();
      search_problem(st, p);
      if (st.stopped()) break;
      finalize(st, p, now_s() - t0);
      if (!p.done) break;  // stopped during its final re-measures
      const auto& r = *p.done;
      log::info(p.item->problem_id + ": " + json(r.outcome).get<std::string>() + " " +
                fmt(r.speedup, "%.3f") + "x [" + fmt(r.speedup_lo, "%.3f") + ", " +
                fmt(r.speedup_hi, "%.3f") + "] " + fmt(r.baseline_us, "%.2f") + " -> " +
                fmt(r.best_us, "%.2f") + " us, " + std::to_string(r.kept) + "/" +
                std::to_string(r.experiments) + " kept");
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      log::error(p.item->problem_id + ": " + e.what());
      st.error_result(p, e);
    }
    p.eval.reset();  // one worker at a time on a small machine
  }
}

// ---- the run's end: the summary, its exit code, run_done journaled, run.json.
constexpr const char* kReferencesInterrupted =
    "the run was interrupted before its re-measures against the reference model; `kgate run --resume` takes them";

RunSummary close_run(RunState& st) {
  RunSummary summary;
  summary.run_id = st.run_id;
  // A worker killed mid-compile (the OOM killer; the request went to a fresh worker)
  // left its compile-cache temp behind: no live process writes it now.
  for (const auto& t : core::remove_stale_temps(st.opt.out)) log::debug("removed the stale temp file " + t);
  summary.interrupted = st.stopped();
  std::vector<report::FailureKind> kinds;
  for (auto& p : st.problems) {
    if (!p.done) continue;
    report::ProblemResult res = *p.done;
    if (summary.interrupted && p.references_pending) {
      // Its reference columns are empty because the stop came first: the record (and the
      // reports built from it) says so. The journal still has them pending, and the
      // journaled result has no such note: `--resume` takes them and writes the record whole.
      res.references_missing["references"] = kReferencesInterrupted;
      st.write_result(res);
    }
    kinds.push_back(report::classify(res, report::RunKind::kRun));
    summary.results.push_back(std::move(res));
  }
  // The reports' own policy: the exit code and every report tell the same story.
  summary.code = summary.interrupted ? ExitCode::kInterrupted
                                     : report::exit_code_of(kinds, st.opt.suite.fail_on.performance);
  if (!summary.interrupted) st.journal->append({{"event", "run_done"}, {"exit", to_int(summary.code)},
                                             {"time", utc_now("%Y-%m-%dT%H:%M:%SZ")}});
  for (const auto& r : summary.results)
    if (st.device_name.empty() && !r.env.gpu.empty()) st.device_name = r.env.gpu;
  write_run_json(st, !summary.interrupted, summary.interrupted);
  return summary;
}

}  // namespace

struct SuiteRun::Impl : suite::RunState {};

SuiteRun::SuiteRun(SuiteRunOptions options, std::vector<RunItem> items, EvaluatorFactory factory)
    : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  impl_->items = std::move(items);
  impl_->factory = std::move(factory);
  std::set<std::string> ids;
  for (const auto& it : impl_->items)
    if (!ids.insert(it.problem_id).second)
      throw UsageError("problem '" + it.problem_id + "' appears twice in the plan");
}

SuiteRun::~SuiteRun() = default;

RunSummary SuiteRun::run() {
  RunState& st = *impl_;
  st.started_s = now_s();
  journal_phase(st);
  try {
    Problem* warm = baseline_phase(st);
    const BudgetPlan plan = plan_phase(st, warm);
    search_phase(st, plan);
    references_phase(st);
  } catch (const Interrupted&) {
    // A stop abandoned the worker call in flight (a baseline's compile, a re-measure):
    // its worker is killed, its problem has no record (--resume runs it again), and what
    // finished stands.
    st.abandoned = true;
    log::info("stopped: the worker call in flight was abandoned");
  }
  return close_run(st);
}

}  // namespace kgate::search

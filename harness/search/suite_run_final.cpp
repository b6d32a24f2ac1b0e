// The final phase of a suite run: a problem's result, and the run's run.json.
#include "search/suite_run_phases.h"

#include <algorithm>
#include <filesystem>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "gates/static_gate.h"
#include "report/record_io.h"
#include "report/run_info.h"
#include "report/verdict_result.h"
#include "verdict/speed_policy.h"

namespace kgate::search::suite {

namespace fs = std::filesystem;

namespace {

// A/A: the reference through every gate against itself. Passing with a timing verdict of
// no difference is `matched`; a difference the keep or regression rule would act on is a
// false alarm of this runner, an error (the pipeline must not trust its verdicts). Other
// performance-gate flags of the A/A (a time under the roofline floor, as cache-resident
// sizes read on a CPU) concern both sides alike and are kept in the reason.
void aa_result(const RunState& st, const ExperimentRecord& base, report::ProblemResult& res) {
  const auto& g = st.opt.suite.gates;
  res.baseline_us = res.best_us = base.latency_us;
  res.speedup = base.speedup;
  res.speedup_lo = base.speedup_lo;
  res.speedup_hi = base.speedup_hi;
  res.pct_roofline = base.pct_roofline;
  const std::string ci = fmt(base.speedup, "%.3f") + "x [" + fmt(base.speedup_lo, "%.3f") + ", " +
                         fmt(base.speedup_hi, "%.3f") + "]";
  const bool flagged = std::any_of(base.gates.begin(), base.gates.end(), [](const gates::GateResult& r) {
    return r.gate == gates::Gate::kPerformance && r.status == gates::GateStatus::kFail;
  });
  const std::string also = flagged ? " (" + base.reason + ")" : "";
  if (gates::SpeedPolicy::of(g).aa_alarm(base.speedup_lo, base.speedup_hi)) {
    res.outcome = report::Outcome::kError;
    res.reason = "A/A false alarm: the reference timed against itself reads " + ci + also;
    return;
  }
  res.outcome = report::Outcome::kMatched;
  res.reason = "A/A: the reference passed every gate against itself, " + ci + also;
}

// Whether a result is re-measured against the reference model: a KernelBench problem's
// passing best (an A/A's reference is its own candidate) unless the suite's
// torch_references is given empty, or a native one's when the suite names torch_references
// (its op's PyTorch form).
bool wants_references(const RunState& st, const Problem& p, const report::ProblemResult& res) {
  const ExperimentRecord* base = p.baseline();
  const config::Suite& s = st.opt.suite;
  const bool has_reference = p.item->problem.kind == "kernelbench" ? !s.torch_references || !s.torch_references->empty()
                                                                   : s.torch_references && !s.torch_references->empty();
  return has_reference && base && base->passed && res.best_us > 0 && !st.aa_mode(p);
}

// KernelBench: the final best against the reference model (eager, torch.compile's modes),
// interleaved; the ratio is kept by expressing the reference in the best's measured time.
// (A problem that moved on without a search has no evaluator since the baseline phase:
// st.evaluator starts one.) False when a stop came before or during them.
bool take_references(RunState& st, Problem& p, report::ProblemResult& res) {
  if (st.stopped()) return false;
  const ExperimentRecord& best = p.best();
  auto timings = p.compiled ? st.evaluator(p).reference_timings(p.item->problem.path, {})
                            : st.evaluator(p).reference_timings(p.best_copy, compile_defines(p.best_copy, best.point));
  if (st.stopped()) return false;
  res.references_missing.erase("references");  // taken now: an earlier run's note is void
  for (const auto& [mode, t] : timings) {
    if (t.candidate_us <= 0) {  // not measured: the record says why the column is empty
      res.references_missing[mode] = t.note.empty() ? "no time was measured" : t.note;
      continue;
    }
    res.references_missing.erase(mode);
    if (p.compiled) require_kept_kernels(p, t, "the re-measure against " + mode);
    double ref_us = res.best_us * t.speedup;
    if (mode == "eager") res.eager_us = ref_us;
    if (mode == "compile") res.compile_us = ref_us;
    if (mode == "compile-max-autotune") res.compile_max_autotune_us = ref_us;
  }
  return true;
}

}  // namespace

void finalize(RunState& st, Problem& p, double wall_s, References references) {
  report::ProblemResult res = st.base_result(p);
  const ExperimentRecord* base = p.baseline();
  res.experiments = p.experiments();
  res.kept = p.kept();
  res.baseline_commit = base ? base->commit : "";
  const ExperimentRecord& best = p.best();
  res.best_commit = best.commit;
  res.best_hash = gates::hash_file(p.best_copy);
  res.gates = best.gates;
  res.wall_s = (base ? base->wall_s : 0) + std::max(wall_s, p.spent_s());
  if (!base || !base->passed) {
    res.outcome = report::Outcome::kError;
    const bool unjudged = base && gates::not_judged(base->gates);
    res.reason = !base      ? "no baseline"
                 : unjudged ? std::string(gates::kCannotJudgeProblem) + ": " + base->reason
                 : (st.aa_mode(p) ? "A/A false reject: the reference itself fails the " : "the starter fails the ") +
                       base->failed_gate + " gate: " + base->reason;
    res.baseline_us = base ? base->latency_us : 0;
  } else if (st.aa_mode(p)) {
    aa_result(st, *base, res);
  } else if (res.kept == 0) {
    bool any_passed = std::any_of(p.records.begin() + 1, p.records.end(),
                                  [](const ExperimentRecord& r) { return r.passed; });
    res.outcome = any_passed ? report::Outcome::kMatched : report::Outcome::kFallback;
    res.reason = any_passed ? "no candidate was faster than the starter"
                            : "no candidate passed every gate; the starter is kept";
    if (p.compiled) compiled_fallback(p, res);
    if (p.records.size() == 1 && p.fallback_kind.empty()) {  // none tried: say why, blame no candidate
      auto sr = st.stop_reasons.find(p.item->problem_id);
      const std::string why = sr != st.stop_reasons.end() ? "moved on: " + sr->second : "the search did not start";
      res.reason = p.compiled ? "not faster: no kernel edit was tried (" + why + ")"
                              : "no candidate was tried (" + why + "); the starter is kept";
    }
    res.baseline_us = res.best_us = base->latency_us;
    res.speedup = res.speedup_lo = res.speedup_hi = 1;
    res.pct_roofline = base->pct_roofline;
  } else {
    // Compiled mode: the workspace's kernel set (the branch is at the best) against
    // torch.compile's own model.
    gates::Timing t = p.compiled ? st.evaluator(p).remeasure(p.item->problem.path, {}, "")
                                 : st.evaluator(p).remeasure(p.best_copy, compile_defines(p.best_copy, best.point), p.starter_copy);
    if (p.compiled) require_kept_kernels(p, t, "the final re-measure");
    report::take_timing(report::timing_fields(res), t);
    res.outcome = gates::SpeedPolicy::of(st.opt.suite.gates).clears_keep(t) ? report::Outcome::kImproved
                                                                          : report::Outcome::kMatched;
    if (res.outcome == report::Outcome::kMatched)
      res.reason = "the final re-measure did not confirm the speedup (lower bound " +
                   fmt(t.speedup_lo, "%.3f") + "x" + (t.note.empty() ? "" : "; " + t.note) + ")";
  }
  if (!p.degenerate.empty() && res.outcome == report::Outcome::kImproved) {
    res.outcome = report::Outcome::kMatched;
    res.reason = "degenerate problem (" + p.degenerate + "): never counted as improved";
  }
  if (wants_references(st, p, res)) {
    // Compiled mode against torch.compile's default model: that model is the baseline, and
    // the evaluator does not time it a second time. The final re-measure's baseline is its
    // time (a fallback's result is that model: exactly 1x).
    if (p.item->problem.baseline_is_default_compile()) res.compile_us = res.baseline_us;
    if (references == References::kLater) {
      p.references_pending = true;
    } else if (!take_references(st, p, res)) {
      // A stop (SIGTERM from a CI timeout) is obeyed before and between the re-measures
      // against the reference model: the problem gets no record, so `--resume`
      // re-measures it whole rather than keep one without those columns.
      log::info(p.item->problem_id + ": stopped during its final re-measures; no result recorded (--resume finishes it)");
      return;
    }
  }
  if (p.compiled) fill_compiled(p, res);
  res.env.gpu = p.eval ? p.eval->device_name() : st.device_name;
  // the software the problem's worker ran (the run's first worker's once it is released)
  const protocol::HelloResult h = p.eval ? p.eval->runtime() : st.runtime;
  res.env.set_software(h.device.driver, h.cuda, h.torch, h.triton);
  auto sr = st.stop_reasons.find(p.item->problem_id);
  if (sr != st.stop_reasons.end() && res.reason.empty()) res.reason = "moved on: " + sr->second;
  st.problem_done(p, std::move(res));
}

void references_phase(RunState& st) {
  for (auto& p : st.problems) {
    if (!p.done || !p.references_pending) continue;
    report::ProblemResult res = *p.done;
    try {
      if (!take_references(st, p, res)) return;
    } catch (const Interrupted&) {
      throw;
    } catch (const InfraError& e) {
      // The machine, not the problem (a worker that would not start): the result stands
      // without those columns in this run's reports, and stays journaled as pending, so
      // `--resume` takes them again.
      log::error(p.item->problem_id + ": the re-measures against the reference model could not run (its result "
                 "stands without them; --resume takes them again): " + std::string(e.what()));
      p.eval.reset();
      continue;
    } catch (const Error& e) {
      log::error(p.item->problem_id + ": the re-measures against the reference model failed (its result "
                 "stands without them): " + std::string(e.what()));
      res.references_missing["references"] = e.what();
    }
    p.references_pending = false;
    st.problem_done(p, std::move(res));
    p.eval.reset();
  }
}

void write_run_json(RunState& st, bool finished, bool was_interrupted) {
  report::RunInfo info;
  info.kind = report::RunKind::kRun;
  info.suite = st.opt.suite.id;
  info.run_id = st.run_id;
  info.config_hash = st.opt.config_hash;
  info.seed = st.seed;
  info.started_at = st.started_at;
  info.finished_at = finished ? utc_now("%Y-%m-%dT%H:%M:%SZ") : "";
  info.interrupted = was_interrupted;
  info.env = report::host_environment(st.opt.backend);
  if (!st.items.empty()) info.env.gpu_target = st.items.front().gpu_target;
  info.env.gpu = st.device_name;
  info.env.set_software(st.runtime.device.driver, st.runtime.cuda, st.runtime.torch, st.runtime.triton);
  info.shard = st.opt.shard;
  info.shard_plans = st.opt.shard_plans;
  info.planned = st.opt.planned;
  if (info.planned.empty())
    for (const auto& it : st.items) info.planned.push_back(it.level + "/" + it.problem_id);
  info.fail_on_performance = st.opt.suite.fail_on.performance;
  info.regression_threshold = st.opt.suite.gates.regression_threshold;
  info.keep_threshold = st.opt.suite.gates.keep_threshold;
  try {
    report::write_run_info(st.opt.out, info);
  } catch (const Error& e) {
    log::warn(std::string("run.json: ") + e.what());
  }
}

}  // namespace kgate::search::suite

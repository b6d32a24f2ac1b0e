// The search phase of a suite run: one problem's keep/revert loop.
#include "search/suite_run_phases.h"

#include <algorithm>
#include <filesystem>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "search/workspace_guard.h"
#include "verdict/speed_policy.h"

namespace kgate::search::suite {

namespace fs = std::filesystem;

namespace {

void commit_and_journal(RunState& st, Problem& p, ExperimentRecord& r) {
  r.commit = p.repo->commit(commit_message(r, st.run_id));
  p.repo->set_ref(st.exp_ref(p, r.n), r.commit);
  bool kept = r.verdict == ExperimentVerdict::kKeep || r.verdict == ExperimentVerdict::kBaseline;
  r.best_commit = kept ? r.commit : p.records.back().best_commit;
  json e = r;
  e["event"] = "experiment";
  e["time"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
  st.journal->append(e);  // from here on the experiment exists
  p.records.push_back(r);
  st.all_records.push_back(r);
  if (kept) {
    p.repo->tag(st.best_tag(p), r.commit);
    write_plain(p.best_copy, read_text((fs::path(p.ws) / p.candidate_rel).string()));
    keep_partner_copies(p);
  } else {
    p.repo->reset_hard(r.best_commit);
  }
  st.rewrite_tsv();
}

AgentContext agent_context(const RunState& st, const Problem& p, int n) {
  AgentContext c;
  c.problem = p.item->problem_id;
  c.problem_title = p.item->problem.title;
  c.op = p.item->problem.op;
  c.backend = st.opt.backend;
  c.workspace = p.ws;
  c.candidate = p.candidate_rel;
  c.kernel = p.kernel;
  c.partners = partner_rels(p);
  if (p.compiled && !p.kernel.empty())
    for (const auto& o : template_offers(p, p.kernel))
      c.templates.push_back(fs::relative(o.file, p.ws).generic_string());
  c.problem_file = kProblemFile;
  c.experiment = n;
  c.history_tsv = results_tsv(p.records);
  const ExperimentRecord& last = p.records.back();
  c.feedback = {{"v", 1},
                {"experiment", last.n},
                {"verdict", to_string(last.verdict)},
                {"passed", last.passed},
                {"failed_gate", last.failed_gate},
                {"failed_case", last.failed_case},
                {"reason", last.reason},
                {"latency_us", last.latency_us},
                {"compared_us", last.compared_us},
                {"speedup", last.speedup},
                {"speedup_lo", last.speedup_lo},
                {"speedup_hi", last.speedup_hi},
                {"speedup_vs_starter", last.speedup_vs_starter},
                {"pct_roofline", last.pct_roofline},
                {"gates", last.gates},
                {"violations", last.violations}};
  c.starter_us = p.baseline()->latency_us;
  c.best_us = p.best().latency_us;
  c.best_speedup = p.best().speedup_vs_starter;
  c.keep_threshold = st.opt.suite.gates.keep_threshold;
  c.log_path = (fs::absolute(fs::path(st.opt.out)) / "logs" / p.item->problem_id /
                ("experiment-" + pad4(n) + ".log")).string();
  c.interrupted = st.opt.interrupted;
  return c;
}

// Why the search of `p` should move on now ("" = keep going). In compiled mode the
// consecutive-revert rule is per kernel (search_compiled applies it).
std::string stop_reason(const RunState& st, const Problem& p) {
  const auto& b = st.opt.suite.budget;
  if (p.experiments() >= st.max_experiments())
    return "experiment budget spent (" + std::to_string(st.max_experiments()) + ")";
  if (!p.compiled && p.consecutive_reverts() >= b.max_consecutive_reverts)
    return std::to_string(p.consecutive_reverts()) + " consecutive reverts";
  const ExperimentRecord& best = p.best();
  // Compiled mode judged torch.compile's model before the search (plan_kernels: each
  // kernel's headroom on the model as timed, against the keep threshold): a kernel it
  // plans is searched even where the model reads past roofline_stop (the official
  // activations time at 92-95 % of roofline, 4-7 % behind eager's kernels on the H200);
  // the rule stops a search that has got there.
  const bool judged_by_plan = p.compiled && p.kept() == 0;
  if (b.roofline_stop > 0 && best.pct_roofline >= b.roofline_stop && !judged_by_plan)
    return "at " + fmt(best.pct_roofline * 100, "%.1f") + "% of roofline";
  if (b.target_speedup > 0 && best.speedup_vs_starter >= b.target_speedup)
    return "target speedup reached (" + fmt(best.speedup_vs_starter, "%.2f") + "x)";
  if (p.spent_s() >= p.budget_s) return "wall-time budget spent (" + fmt(p.budget_s, "%.0f") + " s)";
  return "";
}

// One experiment. Returns false when the agent has nothing left or the run stops.
bool run_experiment(RunState& st, Problem& p, log::Progress& progress) {
  int n = static_cast<int>(p.records.size());
  AgentContext ctx = agent_context(st, p, n);
  p.agent->prepare(ctx);
  std::vector<std::string> may_change = {p.candidate_rel};
  for (const auto& pf : p.partners) may_change.push_back(pf.workspace_path);
  WorkspaceSnapshot snap = snapshot_workspace(p.ws, may_change);
  double t0 = now_s();
  Proposal prop = p.agent->propose(ctx);
  std::vector<Violation> violations = find_violations(snap);
  if (!violations.empty()) restore_workspace(snap);
  std::string best = p.records.back().best_commit;
  if (st.stopped()) {
    p.repo->reset_hard(best);  // abandon: not journaled, a resume runs it again
    return false;
  }
  if (prop.status == Proposal::Status::kExhausted && violations.empty()) {
    p.repo->reset_hard(best);
    log::info(p.item->problem_id + ": " + prop.description);
    return false;
  }
  ExperimentRecord r;
  r.problem = p.item->problem_id;
  r.n = n;
  r.kernel = p.kernel;
  r.description = p.kernel.empty() ? prop.description : p.kernel + ": " + prop.description;
  r.point = prop.defines;
  std::string cand = (fs::path(p.ws) / p.candidate_rel).string();
  if (!violations.empty()) {
    r.verdict = ExperimentVerdict::kViolation;
    for (const auto& v : violations) r.violations.push_back(v.describe());
    std::string partners;
    for (const auto& rel : partner_rels(p)) partners += (partners.empty() ? "" : ", ") + rel;
    r.reason = "only " + p.candidate_rel + (partners.empty() ? "" : " (and its pair partners " + partners + ")") +
               " may change; undone: " + r.violations.front() +
               (r.violations.size() > 1 ? " (+" + std::to_string(r.violations.size() - 1) + " more)" : "");
  } else if (prop.status == Proposal::Status::kTimeout) {
    r.verdict = ExperimentVerdict::kTimeout;
    r.reason = prop.error;
  } else if (prop.status == Proposal::Status::kFailed) {
    r.verdict = ExperimentVerdict::kAgentError;
    r.reason = prop.error;
  } else if (const bool partner_edited = !partners_unchanged(p);
             prop.defines.empty() && read_text(cand) == read_text(p.best_copy) && !partner_edited) {
    r.verdict = ExperimentVerdict::kRevert;
    r.reason = "the candidate is unchanged";
  } else {
    if (partner_edited) r.description += " (with its pair partner)";
    gates::CandidateVerdict v;
    try {
      st.evaluator(p).set_partners(cand, p.partners);
      v = st.evaluator(p).evaluate(cand, compile_defines(cand, prop.defines), p.best_copy);
    } catch (const Interrupted&) {
      p.repo->reset_hard(best);  // abandoned, as below
      throw;
    } catch (const UsageError& e) {
      // The kept best, compiled anew as the baseline, "does not compile" on a full disk.
      st.distrust_on_full_disk(p, e.what(), "the kept best");
      throw;
    }
    if (st.stopped()) {
      p.repo->reset_hard(best);
      return false;
    }
    fill_from_verdict(r, v);
    st.distrust_failure_on_full_disk(p, r);
    const double threshold = st.opt.suite.gates.keep_threshold;
    bool keep = v.passed && v.timing && gates::SpeedPolicy::of(st.opt.suite.gates).clears_keep(*v.timing);
    r.verdict = keep ? ExperimentVerdict::kKeep : ExperimentVerdict::kRevert;
    if (v.timing && v.timing->speedup > 0)
      r.speedup_vs_starter = p.best().speedup_vs_starter * v.timing->speedup;
    if (v.passed && !keep)
      r.reason = v.timing ? "not faster: speedup " + fmt(r.speedup, "%.3f") + "x, lower bound " +
                                fmt(r.speedup_lo, "%.3f") + "x < keep threshold " +
                                fmt(threshold, "%.2f") + "x"
                          : "no timing";
  }
  r.wall_s = now_s() - t0;
  commit_and_journal(st, p, r);
  p.agent->observe(r.point, r.verdict == ExperimentVerdict::kKeep, measured_cost(r));
  // Progress prefixes the problem and k/N: "softmax 3/8 #3 keep 117.5us 1.150x ..."
  std::string line = "#" + std::to_string(n) + " " + to_string(r.verdict);
  if (r.latency_us > 0) line += " " + fmt(r.latency_us, "%.2f") + "us";
  if (r.speedup_vs_starter > 0) line += " " + fmt(r.speedup_vs_starter, "%.3f") + "x";
  if (!r.failed_gate.empty()) line += " [" + r.failed_gate + "]";
  line += " " + r.description;
  progress.step(line);
  if (!r.reason.empty() && r.verdict != ExperimentVerdict::kKeep) log::debug("  " + r.reason);
  return true;
}

// Compiled mode: the kernels in order of attainable gain, each with its own agent and
// move-on rules, inside the problem's budgets. A kept kernel stays in the workspace, so
// later kernels are measured on top of it: the best is the set of kept kernels.
void search_compiled(RunState& st, Problem& p) {
  const std::string id = p.item->problem_id;
  // Resume: go on with the kernel of the last journaled experiment.
  size_t start = 0;
  for (const auto& r : p.records)
    for (size_t i = 0; i < p.kernel_order.size(); ++i)
      if (r.n > 0 && r.kernel == p.kernel_order[i]) start = i;
  log::Progress progress(id, st.max_experiments());
  for (int i = 0; i < p.experiments(); ++i) progress.step("(journaled)");
  std::string why;
  p.kernels_searched = 0;
  for (size_t i = 0; i < p.kernel_order.size() && why.empty(); ++i) {
    const std::string& k = p.kernel_order[i];
    bool touched = std::any_of(p.records.begin(), p.records.end(),
                               [&](const ExperimentRecord& r) { return r.n > 0 && r.kernel == k; });
    if (i < start) {
      p.kernels_searched += touched ? 1 : 0;
      continue;
    }
    select_kernel(st, p, k);
    const std::string text = read_text(p.best_copy);
    const std::vector<TemplateOffer> offers =
        st.opt.suite.agent.kind == "template" ? template_offers(p, k) : std::vector<TemplateOffer>{};
    if (tunes_declared_space(st.opt.suite.agent.kind) && offers.empty() &&
        parse_tune_space(text, p.candidate_rel).empty()) {
      log::warn(id + ": " + k + " declares no launch-config tunables" +
                (st.opt.suite.agent.kind == "template" ? " and matches no template" : "") + "; not searched");
      continue;
    }
    p.agent = make_agent(st.opt.suite.agent, read_text(p.starter_copy), p.starter_copy, p.seed + i, offers);
    // The kernel's starting point is its file as written; kept edits of it since replay.
    p.agent->replay(Point{}, true, p.best().latency_us > 0 ? std::optional<double>(p.best().latency_us) : std::nullopt);
    for (const auto& r : p.records) {
      if (r.n == 0 || r.kernel != k) continue;
      p.agent->replay(r.point, r.verdict == ExperimentVerdict::kKeep, measured_cost(r));
    }
    ++p.kernels_searched;
    log::info(id + ": searching " + k);
    while (true) {
      if (!(why = stop_reason(st, p)).empty()) break;
      if (st.stopped()) return;
      if (p.kernel_reverts(k) >= st.opt.suite.budget.max_consecutive_reverts) {
        log::info(id + ": " + k + ": moving on after " + std::to_string(p.kernel_reverts(k)) + " consecutive reverts");
        break;
      }
      if (!run_experiment(st, p, progress)) {
        if (st.stopped()) return;
        log::info(id + ": " + k + ": the agent has nothing left to try");
        break;
      }
    }
  }
  progress.finish();
  if (why.empty()) why = "every kernel worth searching was searched (" + std::to_string(p.kernels_searched) + ")";
  log::info(id + ": moving on: " + why);
  st.stop_reasons[id] = why;
}

}  // namespace

std::string nothing_to_search(const RunState& st, const Problem& p) {
  if (p.compiled && !p.fallback_kind.empty()) return p.fallback_reason;
  if (st.aa_mode(p)) return "A/A (agent: reference): the reference against itself, no search";
  return "";
}

void search_problem(RunState& st, Problem& p) {
  if (const std::string why = nothing_to_search(st, p); !why.empty()) {
    st.stop_reasons[p.item->problem_id] = why;
    return;
  }
  if (p.compiled) return search_compiled(st, p);
  const ExperimentRecord& base = *p.baseline();
  if (tunes_declared_space(st.opt.suite.agent.kind) &&
      parse_tune_space(read_text(p.starter_copy), p.item->starter).empty() &&
      p.item->problem.kind == "kernelbench") {
    // A KernelBench solution without a `# kgate:tune` space: the starter is the result.
    const std::string why = "the starter declares no tunables (# kgate:tune) for the tuner";
    log::warn(p.item->problem_id + ": " + why);
    st.stop_reasons[p.item->problem_id] = why;
    return;
  }
  p.agent = make_agent(st.opt.suite.agent, read_text(p.starter_copy), p.item->starter, p.seed);
  for (const auto& r : p.records) {
    bool kept = r.verdict == ExperimentVerdict::kKeep || r.verdict == ExperimentVerdict::kBaseline;
    p.agent->replay(r.point.empty() && r.n == 0 ? Point{} : r.point, kept, measured_cost(r));
  }
  (void)base;
  // A resumed search from a kept candidate: the oracle's anchor is still the starter (the
  // evaluator's first baseline would be the best), so keeps across a resume cannot loosen it.
  if (p.kept() > 0) st.evaluator(p).anchor_oracle(p.starter_copy);
  log::Progress progress(p.item->problem_id, st.max_experiments());
  for (int i = 0; i < p.experiments(); ++i) progress.step("(journaled)");
  std::string why;
  while ((why = stop_reason(st, p)).empty()) {
    if (st.stopped()) return;
    if (!run_experiment(st, p, progress)) {
      if (st.stopped()) return;
      why = "the agent has nothing left to try";
      break;
    }
  }
  progress.finish();
  log::info(p.item->problem_id + ": moving on: " + why);
  st.stop_reasons[p.item->problem_id] = why;
}

}  // namespace kgate::search::suite

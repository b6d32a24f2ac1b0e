// What the phases of a suite run share: the run state's members and the helpers.
#include "search/suite_run_phases.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/clock.h"
#include "core/disk_space.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "gates/performance_gate.h"
#include "report/record_io.h"
#include "report/verdict_result.h"

namespace kgate::search::suite {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  return core::read_file_or_throw<InfraError>(path, path + ": cannot read");
}

using report::write_file_atomic;

void write_plain(const std::string& path, const std::string& text) { core::write_file_atomic_or_throw(path, text); }

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string pad4(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d", n);
  return buf;
}

std::string fmt(double v, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

namespace {

// Failing rows only, with the count of cases judged: the journal stays small and a person
// still sees the case, and that a passing gate ran.
std::vector<gates::GateResult> slim_gates(const std::vector<gates::GateResult>& in) {
  std::vector<gates::GateResult> out = in;
  for (auto& g : out) {
    if (g.judged < 0) g.judged = static_cast<int>(g.rows.size());
    std::vector<gates::CaseRow> keep;
    for (auto& r : g.rows)
      if (!r.pass) keep.push_back(r);
    if (keep.size() > 8) keep.resize(8);
    g.rows = std::move(keep);
  }
  return out;
}

}  // namespace

Problem* RunState::find(const std::string& id) {
  for (auto& p : problems)
    if (p.item->problem_id == id) return &p;
  return nullptr;
}

std::string RunState::exp_ref(const Problem& p, int n) const {
  return "refs/kgate/" + run_id + "/" + p.item->problem_id + "/" + pad4(n);
}

std::string RunState::best_tag(const Problem& p) const { return "kgate/" + run_id + "/" + p.item->problem_id + "/best"; }

void RunState::rewrite_tsv() { write_file_atomic(results_tsv_path(opt.out), results_tsv(all_records)); }

CandidateEvaluator& RunState::evaluator(Problem& p) {
  if (!p.eval) p.eval = factory(*p.item, p.ws, p.seed);
  return *p.eval;
}

namespace {

// A reference starter (kernelbench_mode "reference") is the problem file with its Model
// named ModelNew too: the reference as its own candidate, every gate applied to it.
bool reference_starter(const Problem& p) { return p.item->problem.kernelbench_mode == "reference"; }

}  // namespace

bool RunState::aa_mode(const Problem& p) const { return reference_starter(p) && opt.suite.agent.kind == "reference"; }

int RunState::max_experiments() const {
  return opt.max_experiments ? *opt.max_experiments : opt.suite.budget.max_experiments;
}

report::ProblemResult RunState::base_result(const Problem& p) const {
  report::ProblemResult res;
  res.run_id = run_id;
  res.suite = opt.suite.id;
  res.level = p.item->level;
  res.problem = p.item->problem_id;
  res.baseline_kind = "starter";
  res.seed = p.seed;
  res.env = report::host_environment(opt.backend);
  res.env.gpu_target = p.item->gpu_target;
  res.best_candidate = (fs::path(p.ws) / p.candidate_rel).string();
  return res;
}

void RunState::write_result(const report::ProblemResult& res) {
  report::write_result(opt.out, res);
}

void RunState::problem_done(Problem& p, report::ProblemResult res, bool infra) {
  json e = {{"event", "problem_done"}, {"problem", p.item->problem_id}, {"result", res},
            {"time", utc_now("%Y-%m-%dT%H:%M:%SZ")}};
  if (infra) e["infra"] = true;
  if (p.references_pending) e["references_pending"] = true;
  journal->append(e);
  p.done = std::move(res);
  write_result(*p.done);
}

void RunState::error_result(Problem& p, const Error& e) {
  // The worktree back at the journaled best, as a revert leaves it (a failed write or a
  // full disk mid-experiment left the candidate's edit). Best effort: the same trouble
  // may refuse this too, and a resume's reconcile does it anyway.
  if (p.repo && !p.records.empty()) {
    try {
      p.repo->reset_hard(p.records.back().best_commit);
    } catch (const Error& e) {
      log::debug(p.item->problem_id + ": cannot reset the worktree after the error: " + e.what());
    }
  }
  report::ProblemResult res = base_result(p);
  res.outcome = report::Outcome::kError;
  res.reason = e.what();
  if (e.code() == ExitCode::kUsage) res.error_kind = report::kProblemErrorKind;
  res.experiments = p.experiments();
  res.kept = p.kept();
  // An error has no references to take (a resumed problem whose baseline-time result was
  // waiting for them and then failed must not have them taken on the error).
  p.references_pending = false;
  problem_done(p, std::move(res), /*infra=*/true);
}

void RunState::distrust_on_full_disk(const Problem& p, const std::string& reason, const std::string& whom) const {
  // OUT holds the workspaces and the compile cache (OUT/cache, or the --cache directory);
  // the temp directory is checked with them.
  std::vector<std::string> dirs = {opt.out};
  if (!opt.cache_dir.empty()) dirs.push_back(opt.cache_dir);
  const std::string why = core::storage_trouble(dirs, reason);
  if (why.empty()) return;
  std::string first = reason.substr(0, 160);
  if (const auto nl = first.find('\n'); nl != std::string::npos) first = first.substr(0, nl) + " ...";
  throw InfraError(p.item->problem_id + ": the disk is full (" + why + "); '" + first + "' is not charged to " + whom +
                   ": free space and run again with --resume");
}

void RunState::distrust_failure_on_full_disk(const Problem& p, const ExperimentRecord& r) const {
  if (r.passed) return;
  distrust_on_full_disk(p, r.reason, r.n == 0 ? "the starter" : "the candidate");
}

Point compile_defines(const std::string& path, const Point& point) {
  if (point.empty()) return point;
  const std::string text = read_text(path);
  return apply_point(text, point) == text ? Point{} : point;
}

bool failed_only_by_slowdown(const ExperimentRecord& r) {
  return !r.passed && std::any_of(r.gates.begin(), r.gates.end(), [](const auto& g) { return gates::is_slowdown(g); });
}

std::optional<double> measured_cost(const ExperimentRecord& r) {
  if (r.latency_us > 0 && (r.passed || failed_only_by_slowdown(r))) return r.latency_us;
  return std::nullopt;
}

void fill_from_verdict(ExperimentRecord& r, const gates::CandidateVerdict& v) {
  r.passed = v.passed;
  r.gates = slim_gates(v.gates);
  if (v.failed_gate) {
    r.failed_gate = json(*v.failed_gate).get<std::string>();
    for (const auto& g : v.gates)
      if (g.gate == *v.failed_gate) {
        r.failed_case = g.failed_case;
        r.reason = g.reason.empty() ? r.failed_gate + " gate failed" : g.reason;
        if (g.fault != gates::Fault::kNone)
          r.reason = json(g.fault).get<std::string>() + ": " + r.reason;
      }
    if (!r.failed_case.empty()) r.reason += " [case " + r.failed_case + "]";
  }
  report::take_timing(timing_fields(r), v);
}

std::string starter_text(const Problem& p) {
  std::string text = read_text(p.item->starter);
  if (!reference_starter(p)) return text;
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text + "\n\n# kgate: the reference model as its own candidate (starter: reference).\nModelNew = Model\n";
}

}  // namespace kgate::search::suite

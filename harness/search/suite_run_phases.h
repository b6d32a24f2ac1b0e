#pragma once
// The phases of a suite run and the state they share (internal to search/; the public
// face is search/suite_run.h). SuiteRun::run (suite_run.cpp) is their sequence:
//   journal   suite_run_journal.cpp   open or resume the journal; each workspace's git is
//                                      made to agree with it
//   baseline  suite_run_baseline.cpp  experiment 0: the starter through every gate, A/A
//   plan      suite_run.cpp           the Amdahl order and budgets (search/budget_plan.h)
//   search    suite_run_search.cpp    one problem's keep/revert loop
//   final     suite_run_final.cpp     the final re-measure, the problem's result; run.json
// Compiled mode's pieces (suite_run_compiled.cpp) serve the baseline, the search and the
// final phase; what all of them share is RunState (suite_run_state.cpp).
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/agent.h"
#include "search/experiment_record.h"
#include "search/experiment_repo.h"
#include "search/journal.h"
#include "search/suite_run.h"
#include "search/template_agent.h"

namespace kgate::search::suite {

using nlohmann::json;

inline constexpr const char* kProblemFile = "problem.yaml";
// Written by the harness for external agents; ignored by git, still guarded.
inline constexpr const char* kGitignore = "task.md\nhistory.tsv\nfeedback.json\n__pycache__/\n";
// Compiled mode: the worker's inventory of torch.compile's model, committed with the baseline.
inline constexpr const char* kInventoryFile = "inventory.json";

std::string read_text(const std::string& path);
// A workspace or state file, replaced whole (temp + rename): a full disk or a kill -9
// mid-write leaves the old file, never a truncated candidate, and a failed write is an
// InfraError with the system's words ("No space left on device"), never silent.
void write_plain(const std::string& path, const std::string& text);
double now_s();
std::string pad4(int n);
std::string fmt(double v, const char* f);
inline bool interrupted(const std::atomic<bool>* flag) { return flag && flag->load(); }

// What an agent is told an experiment cost: its latency when it did the problem's work,
// that is when it passed every gate or failed only by measuring slower (a slower template
// can still be a close loser); none when it failed otherwise or was not timed.
std::optional<double> measured_cost(const ExperimentRecord& r);
// Whether an experiment failed only by measuring slower than its baseline (gates::is_slowdown).
bool failed_only_by_slowdown(const ExperimentRecord& r);

struct Problem {
  const RunItem* item = nullptr;
  uint64_t seed = 0;
  std::string ws;             // workspace (absolute)
  std::string candidate_rel;  // candidate file name inside the workspace
  std::string starter_copy;   // OUT/state/<p>/starter/<name>
  std::string best_copy;      // OUT/state/<p>/best/<name>
  std::string branch;
  std::vector<ExperimentRecord> records;  // journaled, in order (0 = baseline)
  std::optional<report::ProblemResult> done;
  std::string infra_error;  // resume: the infrastructure error that stopped the last attempt
  // Its result is recorded, its re-measures against the reference model (eager,
  // max-autotune) are not yet: a problem finished at its baseline gets them after every
  // search (references_phase), so a run short of time spends it searching.
  bool references_pending = false;
  std::unique_ptr<ExperimentRepo> repo;
  std::unique_ptr<CandidateEvaluator> eval;
  std::unique_ptr<Agent> agent;
  double budget_s = 0;
  std::string degenerate;  // KernelBench: why the problem cannot tell wrong from right
  // Compiled mode (dispatch-aware KernelBench): torch.compile's model is the starter, each
  // Inductor Triton kernel a file under kernels/, searched one kernel at a time.
  bool compiled = false;
  json inventory;                        // the worker's inventory (inventory.json)
  std::vector<std::string> kernel_order; // kernels worth searching, attainable gain first
  std::string kernel;                    // the kernel now searched ("" = none)
  // Its pair partners (the inventory's: their every write only this kernel reads), files an
  // experiment on it may change too, each with its kept copy (OUT/state/<p>/best/kernels/).
  std::vector<gates::PartnerFile> partners;
  std::string fallback_kind;             // set at the baseline when nothing is worth searching
  std::string fallback_reason;
  int kernels_searched = 0;

  // Reverts of `k` since its last keep (compiled mode's move-on rule is per kernel). A
  // close-losing template's tuned points are not counted: the template agent bounds them
  // itself (kLoserPatience), so the kernel's own tuner still gets its turn after them.
  int kernel_reverts(const std::string& k) const {
    int n = 0;
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
      if (it->kernel != k) continue;
      if (it->verdict == ExperimentVerdict::kKeep || it->verdict == ExperimentVerdict::kBaseline) break;
      if (!is_tuned_template_point(it->point)) ++n;
    }
    return n;
  }

  const ExperimentRecord* baseline() const {
    return !records.empty() && records.front().verdict == ExperimentVerdict::kBaseline
               ? &records.front()
               : nullptr;
  }
  const ExperimentRecord& best() const {
    for (auto it = records.rbegin(); it != records.rend(); ++it)
      if (it->verdict == ExperimentVerdict::kKeep || it->verdict == ExperimentVerdict::kBaseline)
        return *it;
    return records.front();
  }
  int experiments() const { return static_cast<int>(records.size()) - (baseline() ? 1 : 0); }
  int kept() const {
    return static_cast<int>(std::count_if(records.begin(), records.end(), [](const auto& r) {
      return r.verdict == ExperimentVerdict::kKeep;
    }));
  }
  int consecutive_reverts() const {
    int n = 0;
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
      if (it->verdict == ExperimentVerdict::kKeep || it->verdict == ExperimentVerdict::kBaseline) break;
      ++n;
    }
    return n;
  }
  double spent_s() const {
    double s = 0;
    for (const auto& r : records)
      if (r.verdict != ExperimentVerdict::kBaseline) s += r.wall_s;
    return s;
  }
};

// What every phase reads and writes: the options, the journal, the problems in plan order.
struct RunState {
  SuiteRunOptions opt;
  std::vector<RunItem> items;
  EvaluatorFactory factory;
  std::string run_id;
  uint64_t seed = 0;
  std::string started_at;
  double started_s = 0;  // now_s() when this invocation began: the suite wall counts from it
  std::unique_ptr<Journal> journal;
  std::vector<Problem> problems;
  std::vector<ExperimentRecord> all_records;  // journal order, for results.tsv
  std::map<std::string, std::string> stop_reasons;  // why each search moved on
  std::string device_name;        // the first worker's device, for run.json
  protocol::HelloResult runtime;  // the first worker's hello (device, torch, triton, CUDA)

  // A worker call abandoned by a stop (Interrupted from worker::Worker::call).
  bool abandoned = false;

  bool stopped() const { return abandoned || interrupted(opt.interrupted); }
  Problem* find(const std::string& id);
  std::string exp_ref(const Problem& p, int n) const;
  std::string best_tag(const Problem& p) const;
  void rewrite_tsv();
  CandidateEvaluator& evaluator(Problem& p);
  // A/A: the reference starter searched by the reference agent (no search at all).
  bool aa_mode(const Problem& p) const;
  int max_experiments() const;
  // A failed gate while the disk is full is the disk's failure, not the candidate's (or
  // the starter's): an InfraError, so nothing is journaled and a resume evaluates it again.
  void distrust_failure_on_full_disk(const Problem& p, const ExperimentRecord& r) const;
  // The same rule for an error instead of a verdict (the baseline does not compile, the
  // worker rejects the problem): `reason` is the disk's, or OUT or the temp directory has
  // under core::kLowSpaceBytes free -> an InfraError naming the disk and saying it is not
  // charged to `whom` ("the starter"); else it returns.
  void distrust_on_full_disk(const Problem& p, const std::string& reason, const std::string& whom) const;

  // The result's fields every outcome has (run, problem, environment, candidate path).
  report::ProblemResult base_result(const Problem& p) const;
  void write_result(const report::ProblemResult& res);
  // The one emitter of a problem's end: journaled (from here on the problem is done; an
  // `infra` one is an infrastructure error a resume goes on from), then its record.
  // Journals and records the result (again, when a later phase adds to it: the journal's
  // last problem_done of a problem is its result); p.references_pending is journaled with it.
  void problem_done(Problem& p, report::ProblemResult res, bool infra = false);
  // An infrastructure error, or a problem whose own inputs are unusable (a usage error: the
  // worker rejects its file, its starter does not compile), as the problem's end.
  void error_result(Problem& p, const Error& e);
};

// ---- shared by the phases (suite_run_state.cpp) -----------------------------------------
// The starter as the candidate file: a reference starter (kernelbench_mode "reference")
// is the problem file with its Model named ModelNew too.
std::string starter_text(const Problem& p);
// The defines a file is compiled with: none when the point is already written into it
// (the tuner writes every value with apply_point). Then a kept candidate and the next
// baseline -- its copy -- are the same text with the same flags: one compile-cache entry,
// not a second nvcc run (~2 s) after every keep.
Point compile_defines(const std::string& path, const Point& point);
// A verdict into an experiment: the failure (gate, case, reason) and the timing.
void fill_from_verdict(ExperimentRecord& r, const gates::CandidateVerdict& v);

// ---- journal (suite_run_journal.cpp) ------------------------------------------------------
void init_problems(RunState& st);
// A new run's journal (an old run in OUT archived), or a resumed one replayed into the problems.
void open_journal(RunState& st);
void finish_problem_setup(RunState& st, Problem& p);
void open_workspace(Problem& p);
// Makes git and the worktree agree with the journal: the branch tip is the journaled
// best, experiment refs exist exactly for journaled experiments, nothing else lingers.
void reconcile(RunState& st, Problem& p);
// Resume: a finished problem's git evidence against the journal. A journaled experiment's
// ref, the best tag or the branch that is missing or moved (deleted by hand, a half-done
// gc) is put back at the journaled commit; a commit, or the repository, that is gone is
// an error naming it: never a result whose experiments cannot be looked at.
void check_finished_refs(RunState& st, Problem& p);

// ---- baseline (suite_run_baseline.cpp) ----------------------------------------------------
// Experiment 0: the starter through every gate, timed against itself (A/A), so the
// search has a measured starting point from this run on this machine.
void run_baseline(RunState& st, Problem& p);

// ---- search (suite_run_search.cpp) --------------------------------------------------------
// The keep/revert loop of one problem until a budget or a stop rule says to move on (why:
// st.stop_reasons); compiled mode searches the kernels in order of attainable gain.
void search_problem(RunState& st, Problem& p);
// Why a problem with a passing baseline has nothing to search ("" when it has): a compiled
// model with no kernel worth searching (its fallback reason), an A/A run. The run takes
// such a problem's result right after its baseline.
std::string nothing_to_search(const RunState& st, const Problem& p);

// ---- final (suite_run_final.cpp) ----------------------------------------------------------
// The problem's result: its outcome from the baseline and the search, the final
// interleaved re-measure in a fresh worker; journaled as problem_done, then its record.
// With `references` kLater the re-measures against the reference model are left to
// references_phase (p.references_pending).
enum class References { kNow, kLater };
void finalize(RunState& st, Problem& p, double wall_s, References references = References::kNow);
// The pending re-measures against the reference model of the problems finished at their
// baseline, each problem's result journaled and recorded again with them. Stops (without
// a throw) at a stop between problems; their records stand without those columns and a
// --resume measures them.
void references_phase(RunState& st);
// OUT/run.json: what reporters and `kgate merge` need to know of this run (or shard).
void write_run_json(RunState& st, bool finished, bool was_interrupted);

// ---- compiled mode (suite_run_compiled.cpp) -----------------------------------------------
std::string kernel_rel(const std::string& k);
// The kernel file `k` becomes the candidate: its starter copy is the file as the inventory
// wrote it (the baseline commit's), its best copy the workspace's (the branch is at the best).
void select_kernel(RunState& st, Problem& p, const std::string& k);
// The kept copies of the kernel's pair partners taken again (after a keep).
void keep_partner_copies(const Problem& p);
// Whether every pair partner's file is as kept.
bool partners_unchanged(const Problem& p);
// The pair partners' files, relative to the workspace.
std::vector<std::string> partner_rels(const Problem& p);
// Which kernels are searched, in order, and whether the problem is a fallback before any
// search: no Triton kernels at all, or kernels whose Amdahl bound (the whole model's gain
// if the kernel ran at copy bandwidth) cannot clear the keep threshold.
void plan_kernels(RunState& st, Problem& p);
// Resume: the inventory committed with the baseline, and the kernel plan it gives.
void load_inventory(RunState& st, Problem& p);
// The model as one string for the baseline's description and logs.
std::string describe_inventory(const json& inv);
// " (inventory W s with the worker's start and the problem's load: seeding a s, compile
// b s, profile c s)": where the inventory's wall time went (W from the baseline's start, so a
// worker started for it is counted), split as the worker reports it.
std::string inventory_cost(const json& inv, double wall_s);
// The templates the inventory instantiated for kernel `k` (files under the workspace's
// templates/), in the inventory's order; a listed file that is missing is an error.
std::vector<TemplateOffer> template_offers(const Problem& p, const std::string& k);
// Every kernel the search kept must be in the model a final re-measure timed: swapped in,
// or equal to that worker's own Inductor choice. Otherwise the number describes another
// model than the result, and reporting it would be a lie.
void require_kept_kernels(const Problem& p, const gates::Timing& t, const std::string& what);
// Nothing kept: torch.compile's model is the result, and the reason says which of the
// fallback kinds it is.
void compiled_fallback(const Problem& p, report::ProblemResult& res);
// The result's compiled-mode fields: the inventory's counts, the kept kernels, the best
// as the set of kernel files.
void fill_compiled(const Problem& p, report::ProblemResult& res);

}  // namespace kgate::search::suite

#include "search/suite_run.h"


#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/clock.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "verdict/speed_policy.h"
#include "gates/static_gate.h"
#include "report/record_io.h"
#include "report/summary.h"
#include "report/verdict_result.h"
#include "search/agent.h"
#include "search/budget_plan.h"
#include "search/experiment_record.h"
#include "search/experiment_repo.h"
#include "search/journal.h"
#include "search/template_agent.h"
#include "search/workspace_guard.h"

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

constexpr const char* kProblemFile = "problem.yaml";
// Written by the harness for external agents; ignored by git, still guarded.
constexpr const char* kGitignore = "task.md\nhistory.tsv\nfeedback.json\n__pycache__/\n";
// Compiled mode: the worker's inventory of torch.compile's model, committed with the baseline.
constexpr const char* kInventoryFile = "inventory.json";

std::string read_text(const std::string& path) {
  return core::read_file_or_throw<InfraError>(path, path + ": cannot read");
}

// Whole-file replace via rename, so a reader (or a crash) never sees half a file.
using report::write_file_atomic;

// A workspace or state file, replaced whole (temp + rename): a full disk or a kill -9
// mid-write leaves the old file, never a truncated candidate, and a failed write is an
// InfraError with the system's words ("No space left on device"), never silent.
void write_plain(const std::string& path, const std::string& text) { core::write_file_atomic_or_throw(path, text); }

// Free space below which a failed gate is not trusted as a verdict: the compiler, the
// worker and the harness could not write what they needed (a full disk reads as
// "baseline does not compile: collect2 ...").
constexpr std::uintmax_t kLowSpaceBytes = std::uintmax_t{4} << 20;

// Why the disk under `dir` (or the temp directory) cannot be trusted with a verdict now
// ("" = it can): the system's words in the verdict's reason (ENOSPC, EDQUOT, EFBIG), or
// too little free space.
std::string storage_trouble(const std::string& dir, const std::string& reason) {
  for (const char* words : {"No space left on device", "Disk quota exceeded", "File too large"})
    if (reason.find(words) != std::string::npos) return words;
  const char* tmp = std::getenv("TMPDIR");
  for (const std::string& d : {dir, std::string(tmp && *tmp ? tmp : "/tmp")}) {
    std::error_code ec;
    const fs::space_info sp = fs::space(d, ec);
    if (!ec && sp.available < kLowSpaceBytes)
      return d + " has " + std::to_string(sp.available / 1024) + " KiB free";
  }
  return "";
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}


uint64_t mix(uint64_t seed, const std::string& s) {
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 31;
  return h == 0 ? 1 : h;
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

bool interrupted(const std::atomic<bool>* flag) { return flag && flag->load(); }

// Failing rows only: the journal stays small and a person still sees the case.
std::vector<gates::GateResult> slim_gates(const std::vector<gates::GateResult>& in) {
  std::vector<gates::GateResult> out = in;
  for (auto& g : out) {
    std::vector<gates::CaseRow> keep;
    for (auto& r : g.rows)
      if (!r.pass) keep.push_back(r);
    if (keep.size() > 8) keep.resize(8);
    g.rows = std::move(keep);
  }
  return out;
}

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
  std::string fallback_kind;             // set at the baseline when nothing is worth searching
  std::string fallback_reason;
  int kernels_searched = 0;

  // Reverts of `k` since its last keep (compiled mode's move-on rule is per kernel).
  int kernel_reverts(const std::string& k) const {
    int n = 0;
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
      if (it->kernel != k) continue;
      if (it->verdict == ExperimentVerdict::kKeep || it->verdict == ExperimentVerdict::kBaseline) break;
      ++n;
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

}  // namespace

struct SuiteRun::Impl {
  SuiteRunOptions opt;
  std::vector<RunItem> items;
  EvaluatorFactory factory;
  std::string run_id;
  uint64_t seed = 0;
  std::unique_ptr<Journal> journal;
  std::vector<Problem> problems;
  std::vector<ExperimentRecord> all_records;  // journal order, for results.tsv

  // ---- setup ---------------------------------------------------------------------------
  void open_journal() {
    fs::create_directories(opt.out);
    std::string jp = journal_path(opt.out);
    Journal::Contents c = Journal::read(jp, /*repair=*/opt.resume);
    if (opt.resume) {
      if (c.header.is_null())
        throw UsageError(jp + ": nothing to resume (no journal in " + opt.out + ")");
      if (c.torn_tail) log::warn(jp + ": dropped a torn last line left by a crash");
      run_id = c.header.value("run_id", "");
      seed = c.header.value("seed", uint64_t{0});
      started_at = c.header.value("started_at", "");
      std::string suite = c.header.value("suite", "");
      if (suite != opt.suite.id)
        throw UsageError(jp + ": the run in " + opt.out + " is of suite '" + suite +
                         "', not '" + opt.suite.id + "'");
      std::string backend = c.header.value("backend", "");
      if (!backend.empty() && backend != opt.backend)
        throw UsageError(jp + ": the run in " + opt.out + " used backend '" + backend +
                         "'; resume it with --backend " + backend);
      replay(jp, c);
      journal = std::make_unique<Journal>(jp, json::object());
      log::info("resuming run " + run_id + " (" + std::to_string(all_records.size()) +
                " experiments journaled)");
      return;
    }
    if (!c.header.is_null()) archive_previous(c.header.value("run_id", "previous"));
    seed = opt.seed ? *opt.seed : std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
    char hex[16];
    std::snprintf(hex, sizeof hex, "%04x", static_cast<unsigned>(seed & 0xffff));
    run_id = !opt.run_id.empty() ? opt.run_id : utc_now("%Y%m%dT%H%M%SZ") + "-" + hex;
    started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    const report::Environment env = report::host_environment(opt.backend);
    json header = {{"run_id", run_id},
                   {"suite", opt.suite.id},
                   {"suite_path", opt.suite_path},
                   {"seed", seed},
                   {"backend", opt.backend},
                   {"started_at", started_at},
                   {"kgate_version", env.kgate_version},
                   {"git_sha", env.git_sha},
                   {"host", env.host}};
    journal = std::make_unique<Journal>(jp, header);
    log::info("run " + run_id + " (seed " + std::to_string(seed) + ") -> " + opt.out);
  }

  // A new run in an OUT that holds an old one: keep the old files beside, never lose them.
  void archive_previous(const std::string& old_id) {
    fs::path dir = fs::path(opt.out) / "archive" / old_id;
    fs::create_directories(dir);
    for (const char* name : {"journal.jsonl", "results.tsv", "results"}) {
      fs::path p = fs::path(opt.out) / name;
      std::error_code ec;
      if (fs::exists(p)) fs::rename(p, dir / name, ec);
      if (ec) throw InfraError(p.string() + ": cannot archive: " + ec.message());
    }
    log::info("previous run " + old_id + " archived under " + dir.string());
  }

  Problem* find(const std::string& id) {
    for (auto& p : problems)
      if (p.item->problem_id == id) return &p;
    return nullptr;
  }

  // The journal's events into the problems' state. An event that does not parse, or a
  // result with no outcome, or a finished search whose baseline was never journaled (a
  // forged or hand-edited line), is an error naming its line: a resume never guesses.
  void replay(const std::string& path, const Journal::Contents& c) {
    for (size_t i = 0; i < c.events.size(); ++i) {
      const std::string at = path + ":" + std::to_string(c.lines[i]) + ": error: ";
      try {
        replay_event(c.events[i], at);
      } catch (const json::exception& ex) {
        throw InfraError(at + c.events[i].value("event", std::string("?")) + " event does not parse (" + ex.what() +
                         "); refusing to guess");
      }
    }
  }

  void replay_event(const json& e, const std::string& at) {
    std::string kind = e.value("event", "");
    Problem* p = find(e.value("problem", ""));
    if (!p) return;  // a problem no longer in the plan: history only
    if (kind == "experiment") {
      auto r = e.get<ExperimentRecord>();
      // A duplicate number can only come from a bug; the first one is the truth.
      if (r.n != static_cast<int>(p->records.size())) {
        log::warn("journal: skipping out-of-order experiment " + std::to_string(r.n) + " of " +
                  p->item->problem_id);
        return;
      }
      p->records.push_back(r);
      all_records.push_back(r);
    } else if (kind == "problem_done") {
      const json& res = e.at("result");
      if (!res.is_object() || !res.contains("outcome"))
        throw InfraError(at + "problem_done of " + p->item->problem_id + " has no result outcome; refusing to guess");
      const std::string outcome = res.at("outcome").get<std::string>();
      if (p->records.empty() && outcome != "skipped" && outcome != "error")
        throw InfraError(at + "problem_done of " + p->item->problem_id + " (" + outcome +
                         ") comes before any experiment of it; refusing to guess");
      if (e.value("infra", false)) {
        // An infrastructure error (a full disk, a lost worker, git or I/O) is no verdict
        // on the problem: a resume goes on from its journaled experiments. A result
        // journaled before it (whose record then could not be written) stands.
        if (!p->done) p->infra_error = res.value("reason", std::string());
        return;
      }
      // The result must be the one its journal lines produced: this problem of this run,
      // with the experiments and kept count journaled before it and their best commit.
      // Anything else (forged, hand-edited, another run's) would become a record no
      // report can read, or a result the repository does not back.
      report::ProblemResult r = res.get<report::ProblemResult>();
      const std::string id = p->item->problem_id;
      std::string wrong;
      if (r.problem != id || r.level != p->item->level)
        wrong = "names problem '" + r.level + "/" + r.problem + "'";
      else if (!r.run_id.empty() && r.run_id != run_id)
        wrong = "is of run " + r.run_id;
      else if (r.experiments != p->experiments() || r.kept != p->kept())
        wrong = "claims " + std::to_string(r.experiments) + " experiments, " + std::to_string(r.kept) +
                " kept; the journal has " + std::to_string(p->experiments()) + ", " + std::to_string(p->kept());
      else if (!r.best_commit.empty() && (p->records.empty() || r.best_commit != p->records.back().best_commit))
        wrong = "names best commit " + r.best_commit + ", not the journaled best";
      if (!wrong.empty())
        throw InfraError(at + "problem_done of " + id + " " + wrong + "; refusing to guess");
      p->infra_error.clear();
      p->done = std::move(r);
    }
  }

  void init_problems() {
    for (const auto& it : items) {
      Problem p;
      p.item = &it;
      p.candidate_rel = fs::path(it.starter).filename().string();
      p.ws = fs::absolute(fs::path(opt.out) / "workspaces" / it.problem_id).string();
      fs::path state = fs::absolute(fs::path(opt.out) / "state" / it.problem_id);
      p.starter_copy = (state / "starter" / p.candidate_rel).string();
      p.best_copy = (state / "best" / p.candidate_rel).string();
      p.compiled = it.problem.kind == "kernelbench" && it.problem.kernelbench_mode == "compiled";
      if (p.compiled) {
        // Until the inventory names the kernels, the problem file stands for the model.
        p.candidate_rel = kProblemFile;
        p.starter_copy = (state / "starter" / "problem.py").string();
        p.best_copy = (state / "best" / "problem.py").string();
      }
      problems.push_back(std::move(p));
    }
  }

  void finish_problem_setup(Problem& p) {
    p.seed = mix(seed, p.item->problem_id);
    p.branch = "kgate/" + opt.suite.id + "/" + run_id + "/" + p.item->problem_id;
  }

  std::string exp_ref(const Problem& p, int n) const {
    return "refs/kgate/" + run_id + "/" + p.item->problem_id + "/" + pad4(n);
  }
  std::string best_tag(const Problem& p) const { return "kgate/" + run_id + "/" + p.item->problem_id + "/best"; }

  void rewrite_tsv() { write_file_atomic(results_tsv_path(opt.out), results_tsv(all_records)); }

  // ---- workspace -------------------------------------------------------------------------
  void open_workspace(Problem& p) {
    if (!p.repo) p.repo = std::make_unique<ExperimentRepo>(p.ws);
    // This run holds OUT's lock: a git lock file here is a killed run's.
    for (const auto& l : p.repo->remove_stale_locks()) log::warn(p.item->problem_id + ": removed a stale " + l);
    write_plain(p.starter_copy, starter_text(p));
  }

  // Makes git and the worktree agree with the journal: the branch tip is the journaled
  // best, experiment refs exist exactly for journaled experiments, nothing else lingers.
  void reconcile(Problem& p) {
    ExperimentRepo& repo = *p.repo;
    repo.use_branch(p.branch);
    std::set<std::string> journaled;
    for (const auto& r : p.records) journaled.insert(exp_ref(p, r.n));
    for (const auto& ref : repo.refs("refs/kgate/" + run_id + "/" + p.item->problem_id + "/"))
      if (!journaled.count(ref)) {
        log::warn(p.item->problem_id + ": dropping " + ref + " (committed, never journaled)");
        repo.delete_ref(ref);
      }
    if (p.records.empty()) {
      // The baseline never reached the journal: start the branch over.
      if (!repo.head().empty()) repo.delete_ref("refs/heads/" + p.branch);
      repo.use_branch(p.branch);
      return;
    }
    std::string best = p.records.back().best_commit;
    for (const auto& r : p.records) {
      if (repo.resolve(exp_ref(p, r.n)) != r.commit) require_commit(p, exp_ref(p, r.n), r.commit);
      repo.set_ref(exp_ref(p, r.n), r.commit);
    }
    if (repo.head() != best) log::info(p.item->problem_id + ": resetting the branch to the best " + best.substr(0, 12));
    repo.reset_hard(best);
    repo.tag(best_tag(p), best);
    clean_untracked(p);
    write_plain(p.best_copy, repo.file_at(best, p.candidate_rel));
  }

  // A journaled commit that the workspace's repository does not have (deleted, another
  // repository, a forged line) is an error naming it, not git's "cannot set" of a ref.
  void require_commit(const Problem& p, const std::string& ref, const std::string& commit) const {
    try {
      (void)p.repo->read(commit);
    } catch (const InfraError&) {
      throw InfraError(p.ws + ": " + ref + ": the journaled commit " + commit + " of " + p.item->problem_id +
                       " is not in the repository");
    }
  }

  // Resume: a finished problem's git evidence against the journal. A journaled experiment's
  // ref, the best tag or the branch that is missing or moved (deleted by hand, a half-done
  // gc) is put back at the journaled commit; a commit, or the repository, that is gone is
  // an error naming it: never a result whose experiments cannot be looked at.
  void check_finished_refs(Problem& p) {
    if (p.records.empty()) return;
    const std::string& id = p.item->problem_id;
    std::error_code ec;
    if (!fs::exists(fs::path(p.ws) / ".git", ec))
      throw InfraError(p.ws + ": the experiment repository of " + id + " is gone (the journal has " +
                       std::to_string(p.records.size()) + " experiments of it)");
    if (!p.repo) p.repo = std::make_unique<ExperimentRepo>(p.ws);
    ExperimentRepo& repo = *p.repo;
    for (const auto& l : repo.remove_stale_locks()) log::warn(id + ": removed a stale " + l);
    auto want = [&](const std::string& ref, const std::string& commit) {
      if (repo.resolve(ref) == commit) return;
      require_commit(p, ref, commit);
      log::warn(id + ": " + ref + " was missing or moved; restored to the journaled " + commit.substr(0, 12));
      repo.set_ref(ref, commit);
    };
    for (const auto& r : p.records) want(exp_ref(p, r.n), r.commit);
    want("refs/tags/" + best_tag(p), p.records.back().best_commit);
    want("refs/heads/" + p.branch, p.records.back().best_commit);
    // The worktree is the result's best candidate (the record names its file): edited or
    // littered since, it is put back to the best commit, as a search leaves it.
    repo.use_branch(p.branch);
    repo.reset_hard(p.records.back().best_commit);
    clean_untracked(p);
  }

  // Files that are neither committed nor the harness's own (an agent killed mid-turn).
  void clean_untracked(Problem& p) {
    std::string best = p.repo->head();
    for (auto it = fs::recursive_directory_iterator(p.ws); it != fs::recursive_directory_iterator(); ++it) {
      std::string rel = fs::relative(it->path(), p.ws).generic_string();
      if (rel == ".git") {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory()) continue;
      if (rel == "task.md" || rel == "history.tsv" || rel == "feedback.json") continue;
      try {
        (void)p.repo->file_at(best, rel);
      } catch (const InfraError&) {
        std::error_code ec;
        fs::remove(it->path(), ec);
      }
    }
  }

  // ---- compiled mode ------------------------------------------------------------------------
  // The kernel file `k` becomes the candidate: its starter copy is the file as the inventory
  // wrote it (the baseline commit's), its best copy the workspace's (the branch is at the best).
  static std::string kernel_rel(const std::string& k) {
    return (fs::path(gates::kKernelsDir) / (k + ".py")).generic_string();
  }

  void select_kernel(Problem& p, const std::string& k) {
    p.kernel = k;
    p.candidate_rel = kernel_rel(k);
    fs::path state = fs::absolute(fs::path(opt.out) / "state" / p.item->problem_id);
    p.starter_copy = (state / "starter" / p.candidate_rel).string();
    p.best_copy = (state / "best" / p.candidate_rel).string();
    const ExperimentRecord* base = p.baseline();
    write_plain(p.starter_copy, base && !base->commit.empty() ? p.repo->file_at(base->commit, p.candidate_rel)
                                                              : read_text((fs::path(p.ws) / p.candidate_rel).string()));
    write_plain(p.best_copy, read_text((fs::path(p.ws) / p.candidate_rel).string()));
  }

  // Every kernel the search kept must be in the model a final re-measure timed: swapped in,
  // or equal to that worker's own Inductor choice. Otherwise the number describes another
  // model than the result, and reporting it would be a lie.
  static void require_kept_kernels(const Problem& p, const gates::Timing& t, const std::string& what) {
    std::set<std::string> in_model(t.swapped.begin(), t.swapped.end());
    in_model.insert(t.unchanged.begin(), t.unchanged.end());
    for (const auto& r : p.records)
      if (r.verdict == ExperimentVerdict::kKeep && !r.kernel.empty() && !in_model.count(r.kernel))
        throw InfraError(p.item->problem_id + ": " + what + " did not swap in the kept kernel " + r.kernel +
                         (t.note.empty() ? "" : " (" + t.note + ")"));
  }

  // The templates the inventory instantiated for kernel `k` (files under the workspace's
  // templates/), in the inventory's order; a listed file that is missing is an error.
  static std::vector<TemplateOffer> template_offers(const Problem& p, const std::string& k) {
    std::vector<TemplateOffer> out;
    for (const auto& e : p.inventory.value("kernels", json::array())) {
      if (e.value("name", "") != k) continue;
      for (const auto& t : e.value("templates", json::array())) {
        TemplateOffer o{t.value("template", ""), (fs::path(p.ws) / t.value("file", "")).string(), t.value("why", "")};
        if (o.name.empty() || !fs::is_regular_file(o.file))
          throw InfraError(p.item->problem_id + ": inventory.json lists template '" + o.name + "' of " + k +
                           " at " + o.file + ", which is not a file");
        out.push_back(std::move(o));
      }
    }
    return out;
  }

  // Which kernels are searched, in order, and whether the problem is a fallback before any
  // search: no Triton kernels at all, or kernels whose Amdahl bound (the whole model's gain
  // if the kernel ran at copy bandwidth) cannot clear the keep threshold.
  void plan_kernels(Problem& p) {
    const json& inv = p.inventory;
    p.kernel_order.clear();
    p.fallback_kind.clear();
    p.fallback_reason.clear();
    struct K { std::string name; double bound; };
    std::vector<K> ks;  // call order; the stable sort below keeps it among equal bounds
    bool profiled = false;
    for (const auto& k : inv.value("kernels", json::array())) {
      if (k.value("device_us", 0.0) > 0) profiled = true;
      ks.push_back({k.value("name", ""), k.value("amdahl_bound", 0.0)});
    }
    const double threshold = opt.suite.gates.keep_threshold;
    if (ks.empty()) {
      p.fallback_kind = "no-triton";
      std::string why = inv.value("no_triton_reason", std::string());
      p.fallback_reason = why.empty() ? "torch.compile generated no Triton kernels" : why;
      return;
    }
    std::stable_sort(ks.begin(), ks.end(), [](const K& a, const K& b) { return a.bound > b.bound; });
    for (const auto& k : ks)
      if (!profiled || k.bound <= 0 || k.bound >= threshold) p.kernel_order.push_back(k.name);
    if (p.kernel_order.empty()) {
      // Two reasons a bound stays under the threshold: the kernels are too small a share of
      // the model (even at zero time they could not clear it), or they already run near
      // copy bandwidth.
      double zero_time_bound = 1;
      for (const auto& k : inv.value("kernels", json::array()))
        zero_time_bound = std::max(zero_time_bound, 1 / std::max(1e-9, 1 - k.value("share", 0.0)));
      const std::string share = fmt(inv.value("triton_share", 0.0) * 100, "%.1f");
      const std::string gain = "even at copy bandwidth they would gain at most " + fmt(ks.front().bound, "%.3f") +
                               "x (keep threshold " + fmt(threshold, "%.2f") + "x)";
      if (zero_time_bound < threshold) {
        p.fallback_kind = "extern-dominated";
        p.fallback_reason = "extern-dominated: Triton kernels are " + share + "% of the compiled model's GPU time; " + gain;
      } else {
        p.fallback_kind = "at-roofline";
        p.fallback_reason = "at roofline: Triton kernels are " + share +
                            "% of the compiled model's GPU time and already near copy bandwidth; " + gain;
      }
    }
  }

  // The model as one string for the baseline's description and logs.
  static std::string describe_inventory(const json& inv) {
    const size_t nk = inv.value("kernels", json::array()).size();
    const size_t ne = inv.value("externs", json::array()).size();
    std::string s = "torch.compile's model: " + std::to_string(nk) + " Triton kernel" + (nk == 1 ? "" : "s") + ", " +
                    std::to_string(ne) + " extern call" + (ne == 1 ? "" : "s");
    if (inv.value("model_device_us", 0.0) > 0)
      s += ", Triton " + fmt(inv.value("triton_share", 0.0) * 100, "%.1f") + "% of " +
           fmt(inv.value("model_device_us", 0.0), "%.1f") + " us GPU time";
    size_t seeded = 0;
    for (const auto& k : inv.value("kernels", json::array())) seeded += k.contains("seed_launch") ? 1 : 0;
    if (seeded) s += ", " + std::to_string(seeded) + " seeded by " + inv.value("seed_mode", std::string("another compile"));
    return s;
  }

  // Resume: the inventory committed with the baseline, and the kernel plan it gives.
  void load_inventory(Problem& p) {
    std::string path = (fs::path(p.ws) / kInventoryFile).string();
    try {
      p.inventory = json::parse(read_text(path));
    } catch (const json::exception& e) {
      throw InfraError(path + ": unreadable inventory: " + e.what());
    }
    plan_kernels(p);
  }

  // The candidate path the worker gets: a kernel file, or the problem file itself (the
  // compiled model with the kernel files in the workspace, none of its own).
  std::string candidate_path(const Problem& p) const {
    if (p.compiled && p.kernel.empty()) return p.item->problem.path;
    return (fs::path(p.ws) / p.candidate_rel).string();
  }

  // ---- evaluation helpers -----------------------------------------------------------------
  // The defines a file is compiled with: none when the point is already written into it
  // (the tuner writes every value with apply_point). Then a kept candidate and the next
  // baseline -- its copy -- are the same text with the same flags: one compile-cache entry,
  // not a second nvcc run (~2 s) after every keep.
  static Point compile_defines(const std::string& path, const Point& point) {
    if (point.empty()) return point;
    const std::string text = read_text(path);
    return apply_point(text, point) == text ? Point{} : point;
  }

  // A failed gate while the disk is full is the disk's failure, not the candidate's (or
  // the starter's): an InfraError, so nothing is journaled and a resume evaluates it again.
  void distrust_failure_on_full_disk(const Problem& p, const ExperimentRecord& r) const {
    if (r.passed) return;
    const std::string why = storage_trouble(opt.out, r.reason);
    if (why.empty()) return;
    throw InfraError(p.item->problem_id + ": the disk is full (" + why + "); '" + r.reason.substr(0, 160) +
                     "' is not charged to " + (r.n == 0 ? "the starter" : "the candidate") +
                     ": free space and run again with --resume");
  }

  CandidateEvaluator& evaluator(Problem& p) {
    if (!p.eval) p.eval = factory(*p.item, p.ws, p.seed);
    return *p.eval;
  }

  static void fill_from_verdict(ExperimentRecord& r, const gates::CandidateVerdict& v) {
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

  void commit_and_journal(Problem& p, ExperimentRecord& r) {
    r.commit = p.repo->commit(commit_message(r, run_id));
    p.repo->set_ref(exp_ref(p, r.n), r.commit);
    bool kept = r.verdict == ExperimentVerdict::kKeep || r.verdict == ExperimentVerdict::kBaseline;
    r.best_commit = kept ? r.commit : p.records.back().best_commit;
    json e = r;
    e["event"] = "experiment";
    e["time"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
    journal->append(e);  // from here on the experiment exists
    p.records.push_back(r);
    all_records.push_back(r);
    if (kept) {
      p.repo->tag(best_tag(p), r.commit);
      write_plain(p.best_copy, read_text((fs::path(p.ws) / p.candidate_rel).string()));
    } else {
      p.repo->reset_hard(r.best_commit);
    }
    rewrite_tsv();
  }

  // ---- baseline -------------------------------------------------------------------------
  // A reference starter (kernelbench_mode "reference") is the problem file with its Model
  // named ModelNew too: the reference as its own candidate, every gate applied to it.
  static bool reference_starter(const Problem& p) { return p.item->problem.kernelbench_mode == "reference"; }
  bool aa_mode(const Problem& p) const { return reference_starter(p) && opt.suite.agent.kind == "reference"; }
  static std::string starter_text(const Problem& p) {
    std::string text = read_text(p.item->starter);
    if (!reference_starter(p)) return text;
    if (!text.empty() && text.back() != '\n') text += '\n';
    return text + "\n\n# kgate: the reference model as its own candidate (starter: reference).\nModelNew = Model\n";
  }

  // Experiment 0: the starter through every gate, timed against itself (A/A), so the
  // search has a measured starting point from this run on this machine.
  void run_baseline(Problem& p) {
    fs::path ws(p.ws);
    if (!p.compiled) write_plain((ws / p.candidate_rel).string(), starter_text(p));
    if (!p.item->problem_file.empty())
      write_plain((ws / kProblemFile).string(), read_text(p.item->problem_file));
    write_plain((ws / ".gitignore").string(), kGitignore);
    std::error_code ec;
    if (fs::exists(ws / kProblemFile))
      fs::permissions(ws / kProblemFile, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                      fs::perm_options::replace, ec);
    double t0 = now_s();
    ExperimentRecord r;
    r.problem = p.item->problem_id;
    r.n = 0;
    r.verdict = ExperimentVerdict::kBaseline;
    r.description = "baseline: starter " + p.candidate_rel;
    std::string baseline_path = p.starter_copy;
    if (p.compiled) {
      // torch.compile's model taken apart: one file per Triton kernel under kernels/.
      fs::path kdir = ws / gates::kKernelsDir;
      std::error_code ec;
      fs::remove_all(kdir, ec);
      fs::remove_all(ws / "templates", ec);  // the inventory writes them again
      fs::create_directories(kdir);
      p.inventory = evaluator(p).inventory(kdir.string());
      write_plain((ws / kInventoryFile).string(), p.inventory.dump(2) + "\n");
      plan_kernels(p);
      const json ks = p.inventory.value("kernels", json::array());
      if (!ks.empty()) {
        p.kernel = ks.front().value("name", "");
        p.candidate_rel = kernel_rel(p.kernel);
      }
      r.kernel = p.kernel;
      r.description = "baseline: " + describe_inventory(p.inventory);
      baseline_path.clear();  // the compiled model itself
      log::info(p.item->problem_id + ": " + describe_inventory(p.inventory) +
                (p.fallback_kind.empty() ? "" : "; fallback: " + p.fallback_reason));
    }
    gates::CandidateVerdict v = evaluator(p).evaluate(candidate_path(p), {}, baseline_path);
    if (interrupted(opt.interrupted)) return;
    if (device_name.empty()) {
      device_name = evaluator(p).device_name();
      runtime = evaluator(p).runtime();
    }
    fill_from_verdict(r, v);
    distrust_failure_on_full_disk(p, r);
    if (v.passed) evaluator(p).promote_last_candidate();  // the starter is the first best
    p.degenerate = v.degenerate;
    r.speedup_vs_starter = 1;
    // The starter timed against itself can only "fail" performance by noise; it is the
    // baseline by definition, so only static, correctness and oracle failures count.
    // Noise needs a measurement: a timing that crashed or took no samples is no A/A, and a
    // starter without a time is no baseline (never a "passed" 0 us one).
    const bool timed = v.timing && v.timing->candidate_us > 0 && v.timing->baseline_us > 0;
    if (!v.passed && v.failed_gate == gates::Gate::kPerformance && timed) {
      r.passed = true;
      r.failed_gate.clear();
      r.reason = "A/A timing noise flagged by the performance gate: " + r.reason;
    } else if (!v.passed && v.failed_gate == gates::Gate::kPerformance) {
      r.reason = "the starter could not be timed: " + (r.reason.empty() ? std::string("no samples") : r.reason);
    } else if (v.passed && !timed && !aa_mode(p)) {
      r.passed = false;
      r.failed_gate = "performance";
      r.reason = "the starter passed the gates without a timing (no samples): no baseline to search from";
    }
    if (!r.passed && r.reason.empty()) r.reason = "the starter failed the gates";
    r.wall_s = now_s() - t0;
    // The baseline commit is the root of this run's branch.
    p.records.clear();
    r.commit = p.repo->commit(commit_message(r, run_id));
    p.repo->set_ref(exp_ref(p, 0), r.commit);
    r.best_commit = r.commit;
    json e = r;
    e["event"] = "experiment";
    e["time"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
    journal->append(e);
    p.records.push_back(r);
    all_records.push_back(r);
    p.repo->tag(best_tag(p), r.commit);
    if (p.compiled && !p.kernel.empty()) select_kernel(p, p.kernel);
    else write_plain(p.best_copy, read_text((ws / p.candidate_rel).string()));
    rewrite_tsv();
    if (r.passed)
      log::info(p.item->problem_id + ": baseline " + fmt(r.latency_us, "%.2f") + " us" +
                (r.pct_roofline > 0 ? " (" + fmt(r.pct_roofline * 100, "%.1f") + "% of roofline)" : ""));
    else
      log::error(p.item->problem_id + ": the starter fails the " + r.failed_gate + " gate: " + r.reason);
  }

  // ---- search -----------------------------------------------------------------------------
  AgentContext context(const Problem& p, int n) const {
    AgentContext c;
    c.problem = p.item->problem_id;
    c.problem_title = p.item->problem.title;
    c.op = p.item->problem.op;
    c.backend = opt.backend;
    c.workspace = p.ws;
    c.candidate = p.candidate_rel;
    c.kernel = p.kernel;
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
    c.keep_threshold = opt.suite.gates.keep_threshold;
    c.log_path = (fs::absolute(fs::path(opt.out)) / "logs" / p.item->problem_id /
                  ("experiment-" + pad4(n) + ".log")).string();
    c.interrupted = opt.interrupted;
    return c;
  }

  int max_experiments() const {
    return opt.max_experiments ? *opt.max_experiments : opt.suite.budget.max_experiments;
  }

  // Why the search of `p` should move on now ("" = keep going). In compiled mode the
  // consecutive-revert rule is per kernel (search_compiled applies it).
  std::string stop_reason(const Problem& p) const {
    const auto& b = opt.suite.budget;
    if (p.experiments() >= max_experiments())
      return "experiment budget spent (" + std::to_string(max_experiments()) + ")";
    if (!p.compiled && p.consecutive_reverts() >= b.max_consecutive_reverts)
      return std::to_string(p.consecutive_reverts()) + " consecutive reverts";
    const ExperimentRecord& best = p.best();
    if (b.roofline_stop > 0 && best.pct_roofline >= b.roofline_stop)
      return "at " + fmt(best.pct_roofline * 100, "%.1f") + "% of roofline";
    if (b.target_speedup > 0 && best.speedup_vs_starter >= b.target_speedup)
      return "target speedup reached (" + fmt(best.speedup_vs_starter, "%.2f") + "x)";
    if (p.spent_s() >= p.budget_s) return "wall-time budget spent (" + fmt(p.budget_s, "%.0f") + " s)";
    return "";
  }

  // One experiment. Returns false when the agent has nothing left or the run stops.
  bool run_experiment(Problem& p, log::Progress& progress) {
    int n = static_cast<int>(p.records.size());
    AgentContext ctx = context(p, n);
    p.agent->prepare(ctx);
    WorkspaceSnapshot snap = snapshot_workspace(p.ws, p.candidate_rel);
    double t0 = now_s();
    Proposal prop = p.agent->propose(ctx);
    std::vector<Violation> violations = find_violations(snap);
    if (!violations.empty()) restore_workspace(snap);
    std::string best = p.records.back().best_commit;
    if (interrupted(opt.interrupted)) {
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
      r.reason = "only " + p.candidate_rel + " may change; undone: " + r.violations.front() +
                 (r.violations.size() > 1 ? " (+" + std::to_string(r.violations.size() - 1) + " more)" : "");
    } else if (prop.status == Proposal::Status::kTimeout) {
      r.verdict = ExperimentVerdict::kTimeout;
      r.reason = prop.error;
    } else if (prop.status == Proposal::Status::kFailed) {
      r.verdict = ExperimentVerdict::kAgentError;
      r.reason = prop.error;
    } else if (prop.defines.empty() && read_text(cand) == read_text(p.best_copy)) {
      r.verdict = ExperimentVerdict::kRevert;
      r.reason = "the candidate is unchanged";
    } else {
      gates::CandidateVerdict v = evaluator(p).evaluate(cand, compile_defines(cand, prop.defines), p.best_copy);
      if (interrupted(opt.interrupted)) {
        p.repo->reset_hard(best);
        return false;
      }
      fill_from_verdict(r, v);
      distrust_failure_on_full_disk(p, r);
      const double threshold = opt.suite.gates.keep_threshold;
      bool keep = v.passed && v.timing && gates::SpeedPolicy::of(opt.suite.gates).clears_keep(*v.timing);
      r.verdict = keep ? ExperimentVerdict::kKeep : ExperimentVerdict::kRevert;
      if (keep) evaluator(p).promote_last_candidate();
      if (v.timing && v.timing->speedup > 0)
        r.speedup_vs_starter = p.best().speedup_vs_starter * v.timing->speedup;
      if (v.passed && !keep)
        r.reason = v.timing ? "not faster: speedup " + fmt(r.speedup, "%.3f") + "x, lower bound " +
                                  fmt(r.speedup_lo, "%.3f") + "x < keep threshold " +
                                  fmt(threshold, "%.2f") + "x"
                            : "no timing";
    }
    r.wall_s = now_s() - t0;
    commit_and_journal(p, r);
    std::optional<double> cost;
    if (r.passed && r.latency_us > 0) cost = r.latency_us;
    p.agent->observe(r.point, r.verdict == ExperimentVerdict::kKeep, cost);
    std::string line = p.item->problem_id + " #" + std::to_string(n) + " " + to_string(r.verdict);
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
  void search_compiled(Problem& p) {
    const std::string id = p.item->problem_id;
    if (!p.fallback_kind.empty()) {
      stop_reasons[id] = p.fallback_reason;
      return;
    }
    // Resume: go on with the kernel of the last journaled experiment.
    size_t start = 0;
    for (const auto& r : p.records)
      for (size_t i = 0; i < p.kernel_order.size(); ++i)
        if (r.n > 0 && r.kernel == p.kernel_order[i]) start = i;
    log::Progress progress(id, max_experiments());
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
      select_kernel(p, k);
      const std::string text = read_text(p.best_copy);
      const std::vector<TemplateOffer> offers =
          opt.suite.agent.kind == "template" ? template_offers(p, k) : std::vector<TemplateOffer>{};
      if (tunes_declared_space(opt.suite.agent.kind) && offers.empty() &&
          parse_tune_space(text, p.candidate_rel).empty()) {
        log::warn(id + ": " + k + " declares no launch-config tunables" +
                  (opt.suite.agent.kind == "template" ? " and matches no template" : "") + "; not searched");
        continue;
      }
      p.agent = make_agent(opt.suite.agent, read_text(p.starter_copy), p.starter_copy, p.seed + i, offers);
      // The kernel's starting point is its file as written; kept edits of it since replay.
      p.agent->replay(Point{}, true, p.best().latency_us > 0 ? std::optional<double>(p.best().latency_us) : std::nullopt);
      for (const auto& r : p.records) {
        if (r.n == 0 || r.kernel != k) continue;
        std::optional<double> cost;
        if (r.passed && r.latency_us > 0) cost = r.latency_us;
        p.agent->replay(r.point, r.verdict == ExperimentVerdict::kKeep, cost);
      }
      ++p.kernels_searched;
      log::info(id + ": searching " + k);
      while (true) {
        if (!(why = stop_reason(p)).empty()) break;
        if (interrupted(opt.interrupted)) return;
        if (p.kernel_reverts(k) >= opt.suite.budget.max_consecutive_reverts) {
          log::info(id + ": " + k + ": moving on after " + std::to_string(p.kernel_reverts(k)) + " consecutive reverts");
          break;
        }
        if (!run_experiment(p, progress)) {
          if (interrupted(opt.interrupted)) return;
          log::info(id + ": " + k + ": the agent has nothing left to try");
          break;
        }
      }
    }
    progress.finish();
    if (why.empty()) why = "every kernel worth searching was searched (" + std::to_string(p.kernels_searched) + ")";
    log::info(id + ": moving on: " + why);
    stop_reasons[id] = why;
  }

  void search(Problem& p) {
    if (p.compiled) return search_compiled(p);
    if (aa_mode(p)) {
      stop_reasons[p.item->problem_id] = "A/A (agent: reference): the reference against itself, no search";
      return;
    }
    const ExperimentRecord& base = *p.baseline();
    if (tunes_declared_space(opt.suite.agent.kind) &&
        parse_tune_space(read_text(p.starter_copy), p.item->starter).empty() &&
        p.item->problem.kind == "kernelbench") {
      // A KernelBench solution without a `# kgate:tune` space: the starter is the result.
      const std::string why = "the starter declares no tunables (# kgate:tune) for the tuner";
      log::warn(p.item->problem_id + ": " + why);
      stop_reasons[p.item->problem_id] = why;
      return;
    }
    p.agent = make_agent(opt.suite.agent, read_text(p.starter_copy), p.item->starter, p.seed);
    for (const auto& r : p.records) {
      std::optional<double> cost;
      if (r.passed && r.latency_us > 0) cost = r.latency_us;
      bool kept = r.verdict == ExperimentVerdict::kKeep || r.verdict == ExperimentVerdict::kBaseline;
      p.agent->replay(r.point.empty() && r.n == 0 ? Point{} : r.point, kept, cost);
    }
    (void)base;
    log::Progress progress(p.item->problem_id, max_experiments());
    for (int i = 0; i < p.experiments(); ++i) progress.step("(journaled)");
    std::string why;
    while ((why = stop_reason(p)).empty()) {
      if (interrupted(opt.interrupted)) return;
      if (!run_experiment(p, progress)) {
        if (interrupted(opt.interrupted)) return;
        why = "the agent has nothing left to try";
        break;
      }
    }
    progress.finish();
    log::info(p.item->problem_id + ": moving on: " + why);
    stop_reasons[p.item->problem_id] = why;
  }
  std::map<std::string, std::string> stop_reasons;

  // ---- final ----------------------------------------------------------------------------
  report::ProblemResult base_result(const Problem& p) const {
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

  void finalize(Problem& p, double wall_s) {
    report::ProblemResult res = base_result(p);
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
      const bool unjudged = base && base->reason.rfind("cannot judge", 0) == 0;
      res.reason = !base      ? "no baseline"
                   : unjudged ? "kgate cannot judge this problem: " + base->reason
                   : (aa_mode(p) ? "A/A false reject: the reference itself fails the " : "the starter fails the ") +
                         base->failed_gate + " gate: " + base->reason;
      res.baseline_us = base ? base->latency_us : 0;
    } else if (aa_mode(p)) {
      aa_result(*base, res);
    } else if (res.kept == 0) {
      bool any_passed = std::any_of(p.records.begin() + 1, p.records.end(),
                                    [](const ExperimentRecord& r) { return r.passed; });
      res.outcome = any_passed ? report::Outcome::kMatched : report::Outcome::kFallback;
      res.reason = any_passed ? "no candidate was faster than the starter"
                              : "no candidate passed every gate; the starter is kept";
      if (p.compiled) compiled_fallback(p, res);
      res.baseline_us = res.best_us = base->latency_us;
      res.speedup = res.speedup_lo = res.speedup_hi = 1;
      res.pct_roofline = base->pct_roofline;
    } else {
      // Compiled mode: the workspace's kernel set (the branch is at the best) against
      // torch.compile's own model.
      gates::Timing t = p.compiled ? evaluator(p).remeasure(p.item->problem.path, {}, "")
                                   : evaluator(p).remeasure(p.best_copy, compile_defines(p.best_copy, best.point), p.starter_copy);
      if (p.compiled) require_kept_kernels(p, t, "the final re-measure");
      report::take_timing(report::timing_fields(res), t);
      res.outcome = gates::SpeedPolicy::of(opt.suite.gates).clears_keep(t) ? report::Outcome::kImproved
                                                                            : report::Outcome::kMatched;
      if (res.outcome == report::Outcome::kMatched)
        res.reason = "the final re-measure did not confirm the speedup (lower bound " +
                     fmt(t.speedup_lo, "%.3f") + "x" + (t.note.empty() ? "" : "; " + t.note) + ")";
    }
    if (!p.degenerate.empty() && res.outcome == report::Outcome::kImproved) {
      res.outcome = report::Outcome::kMatched;
      res.reason = "degenerate problem (" + p.degenerate + "): never counted as improved";
    }
    if (p.item->problem.kind == "kernelbench" && base && base->passed && res.best_us > 0 && !aa_mode(p)) {
      // KernelBench: the final best against the reference model, interleaved; the ratio is
      // kept by expressing the reference in the best's measured time. (A problem that
      // moved on without a search has no evaluator since the baseline phase: start one.)
      auto timings = p.compiled ? evaluator(p).reference_timings(p.item->problem.path, {})
                                : evaluator(p).reference_timings(p.best_copy, compile_defines(p.best_copy, best.point));
      for (const auto& [mode, t] : timings) {
        if (t.candidate_us <= 0) continue;
        if (p.compiled) require_kept_kernels(p, t, "the re-measure against " + mode);
        double ref_us = res.best_us * t.speedup;
        if (mode == "eager") res.eager_us = ref_us;
        if (mode == "compile") res.compile_us = ref_us;
        if (mode == "compile-max-autotune") res.compile_max_autotune_us = ref_us;
      }
    }
    if (p.compiled) fill_compiled(p, res);
    res.env.gpu = p.eval ? p.eval->device_name() : device_name;
    // the software the problem's worker ran (the run's first worker's once it is released)
    const protocol::HelloResult h = p.eval ? p.eval->runtime() : runtime;
    res.env.set_software(h.device.driver, h.cuda, h.torch, h.triton);
    auto sr = stop_reasons.find(p.item->problem_id);
    if (sr != stop_reasons.end() && res.reason.empty()) res.reason = "moved on: " + sr->second;
    problem_done(p, std::move(res));
  }

  // A/A: the reference through every gate against itself. Passing with a timing verdict of
  // no difference is `matched`; a difference the keep or regression rule would act on is a
  // false alarm of this runner, an error (the pipeline must not trust its verdicts). Other
  // performance-gate flags of the A/A (a time under the roofline floor, as cache-resident
  // sizes read on a CPU) concern both sides alike and are kept in the reason.
  void aa_result(const ExperimentRecord& base, report::ProblemResult& res) const {
    const auto& g = opt.suite.gates;
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

  // Compiled mode, nothing kept: torch.compile's model is the result, and the reason says
  // which of the fallback kinds it is.
  void compiled_fallback(const Problem& p, report::ProblemResult& res) const {
    res.outcome = report::Outcome::kFallback;
    if (!p.fallback_kind.empty()) {
      res.fallback_kind = p.fallback_kind;
      res.reason = p.fallback_reason;
      return;
    }
    std::map<std::string, int> failed;
    int evaluated = 0, passed = 0;
    for (const auto& r : p.records) {
      if (r.n == 0) continue;
      if (r.passed) ++passed;
      if (!r.failed_gate.empty()) ++failed[r.failed_gate];
      if (r.passed || !r.failed_gate.empty()) ++evaluated;
    }
    if (passed > 0 || evaluated == 0) {
      res.fallback_kind = "not-faster";
      res.reason = evaluated == 0 ? "not faster: no kernel edit was evaluated (" + std::to_string(p.experiments()) +
                                        " experiments)"
                                  : "not faster: " + std::to_string(passed) + " of " + std::to_string(evaluated) +
                                        " kernel edits passed every gate, none beat torch.compile's kernels";
      return;
    }
    res.fallback_kind = "gate-failed";
    std::string list;
    for (const auto& [g, n] : failed) list += (list.empty() ? "" : ", ") + g + " " + std::to_string(n);
    res.reason = failed.size() == 1 ? "every candidate failed the " + failed.begin()->first + " gate (" +
                                          std::to_string(evaluated) + ")"
                                    : "every candidate failed a gate (" + list + ")";
  }

  void fill_compiled(const Problem& p, report::ProblemResult& res) const {
    res.mode = "compiled";
    res.baseline_kind = p.item->problem.kernelbench_baseline;
    res.triton_share = p.inventory.value("triton_share", 0.0);
    res.triton_kernels = static_cast<int>(p.inventory.value("kernels", json::array()).size());
    res.extern_calls = static_cast<int>(p.inventory.value("externs", json::array()).size());
    res.kernels_searched = p.kernels_searched;
    std::set<std::string> kept, templated;
    for (const auto& r : p.records)
      if (r.verdict == ExperimentVerdict::kKeep) {
        kept.insert(r.kernel);
        if (r.point.count(kTemplatePointKey)) templated.insert(r.kernel);
      }
    res.kernels_kept = static_cast<int>(kept.size());
    res.templates_kept = static_cast<int>(templated.size());
    res.best_candidate = (fs::path(p.ws) / gates::kKernelsDir).string();
    // The best is a set of kernel files: hash their names and contents together.
    std::string manifest;
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(fs::path(p.ws) / gates::kKernelsDir, ec))
      if (e.path().extension() == ".py") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) manifest += fs::path(f).filename().string() + " " + gates::hash_file(f) + "\n";
    res.best_hash = gates::hash_bytes(manifest);
  }

  void write_result(const report::ProblemResult& res) {
    report::write_result(opt.out, res);
  }

  // The one emitter of a problem's end: journaled (from here on the problem is done; an
  // `infra` one is an infrastructure error a resume goes on from), then its record.
  void problem_done(Problem& p, report::ProblemResult res, bool infra = false) {
    json e = {{"event", "problem_done"}, {"problem", p.item->problem_id}, {"result", res},
              {"time", utc_now("%Y-%m-%dT%H:%M:%SZ")}};
    if (infra) e["infra"] = true;
    journal->append(e);
    p.done = std::move(res);
    write_result(*p.done);
  }

  void error_result(Problem& p, const std::string& why) {
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
    res.reason = why;
    res.experiments = p.experiments();
    res.kept = p.kept();
    problem_done(p, std::move(res), /*infra=*/true);
  }

  // ---- run.json ---------------------------------------------------------------------------
  std::string started_at;
  std::string device_name;  // the first worker's device, for run.json
  protocol::HelloResult runtime;  // the first worker's hello (device, torch, triton, CUDA)

  // OUT/run.json: what reporters and `kgate merge` need to know of this run (or shard).
  void write_run_json(bool finished, bool was_interrupted) {
    report::RunInfo info;
    info.kind = report::RunKind::kRun;
    info.suite = opt.suite.id;
    info.run_id = run_id;
    info.config_hash = opt.config_hash;
    info.seed = seed;
    info.started_at = started_at;
    info.finished_at = finished ? utc_now("%Y-%m-%dT%H:%M:%SZ") : "";
    info.interrupted = was_interrupted;
    info.env = report::host_environment(opt.backend);
    if (!items.empty()) info.env.gpu_target = items.front().gpu_target;
    info.env.gpu = device_name;
    info.env.set_software(runtime.device.driver, runtime.cuda, runtime.torch, runtime.triton);
    info.shard = opt.shard;
    info.planned = opt.planned;
    if (info.planned.empty())
      for (const auto& it : items) info.planned.push_back(it.level + "/" + it.problem_id);
    info.fail_on_performance = opt.suite.fail_on.performance;
    info.regression_threshold = opt.suite.gates.regression_threshold;
    try {
      report::write_run_info(opt.out, info);
    } catch (const Error& e) {
      log::warn(std::string("run.json: ") + e.what());
    }
  }

  // ---- the run ----------------------------------------------------------------------------
  RunSummary run() {
    RunSummary summary;
    init_problems();
    open_journal();
    // Under OUT's lock every temp file of a writer that is gone is garbage: a record, the
    // TSV, a report or a compile-cache entry that a kill -9 or a full disk interrupted.
    const std::vector<std::string> stale = core::remove_stale_temps(opt.out);
    if (!stale.empty())
      log::info("removed " + std::to_string(stale.size()) + " temp file" + (stale.size() == 1 ? "" : "s") +
                " left by an interrupted run (e.g. " + stale.front() + ")");
    summary.run_id = run_id;
    write_run_json(false, false);
    for (auto& p : problems) finish_problem_setup(p);
    rewrite_tsv();
    for (auto& p : problems)
      if (p.done) write_result(*p.done);

    // 1. Baselines, in plan order. One worker is kept: the last baseline's, in case the
    // plan searches its problem first (a PR check's single problem) -- its cached check
    // cases spare that search's first experiment the inputs and the float64 truth. Others
    // would each hold a process (and, on a GPU, memory) until their turn.
    Problem* kept = nullptr;
    for (auto& p : problems) {
      if (p.done) {
        if (!opt.resume) continue;
        try {
          check_finished_refs(p);
        } catch (const Error& e) {
          log::error(p.item->problem_id + ": " + e.what());
          error_result(p, e.what());
        }
        p.repo.reset();
        continue;
      }
      if (!p.infra_error.empty())
        log::info(p.item->problem_id + ": going on after an infrastructure error: " + p.infra_error);
      if (!p.item->skip_reason.empty()) {
        report::ProblemResult res = base_result(p);
        res.outcome = report::Outcome::kSkipped;
        res.reason = p.item->skip_reason;
        problem_done(p, std::move(res));
        continue;
      }
      if (interrupted(opt.interrupted)) break;
      if (kept != nullptr) kept->eval.reset();  // before this problem's worker starts
      kept = nullptr;
      try {
        open_workspace(p);
        reconcile(p);
        if (p.compiled && p.baseline()) load_inventory(p);
        if (!p.baseline()) run_baseline(p);
        if (p.baseline() && !p.baseline()->passed) finalize(p, 0);
      } catch (const Interrupted&) {
        throw;
      } catch (const Error& e) {
        // Infrastructure or a problem its worker rejects (a KernelBench file that fails
        // to load, a device out of memory): this problem's error, not the run's end.
        log::error(p.item->problem_id + ": " + e.what());
        error_result(p, e.what());
      }
      if (p.done) p.eval.reset();
      else if (p.eval) kept = &p;
    }
    // 2. The Amdahl plan over the problems that have a passing baseline.
    std::vector<PlanInput> inputs;
    for (auto& p : problems)
      if (p.baseline() && p.baseline()->passed)
        inputs.push_back({p.item->problem_id, p.baseline()->latency_us, p.baseline()->roofline_floor_us});
    const auto& b = opt.suite.budget;
    BudgetPlan plan = plan_budgets(inputs, b.suite_wall_s, b.problem_floor_s, b.problem_wall_s);
    if (!inputs.empty() && !interrupted(opt.interrupted)) log::info("search plan (Amdahl order):\n" + plan.table());
    if (kept != nullptr && (plan.entries.empty() || plan.entries.front().problem != kept->item->problem_id))
      kept->eval.reset();
    // 3. Search each problem, highest expected gain first, then its final re-measure.
    for (const auto& entry : plan.entries) {
      Problem& p = *find(entry.problem);
      p.budget_s = entry.budget_s;
      if (p.done) continue;
      if (interrupted(opt.interrupted)) break;
      try {
        double t0 = now_s();
        search(p);
        if (interrupted(opt.interrupted)) break;
        finalize(p, now_s() - t0);
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
        error_result(p, e.what());
      }
      p.eval.reset();  // one worker at a time on a small machine
    }

    // A worker killed mid-compile (the OOM killer; the request went to a fresh worker)
    // left its compile-cache temp behind: no live process writes it now.
    for (const auto& t : core::remove_stale_temps(opt.out)) log::debug("removed the stale temp file " + t);
    summary.interrupted = interrupted(opt.interrupted);
    std::vector<report::FailureKind> kinds;
    for (auto& p : problems) {
      if (!p.done) continue;
      summary.results.push_back(*p.done);
      kinds.push_back(report::classify(*p.done, report::RunKind::kRun));
    }
    // The reports' own policy: the exit code and every report tell the same story.
    summary.code = summary.interrupted ? ExitCode::kInterrupted
                                       : report::exit_code_of(kinds, opt.suite.fail_on.performance);
    if (!summary.interrupted) journal->append({{"event", "run_done"}, {"exit", to_int(summary.code)},
                                               {"time", utc_now("%Y-%m-%dT%H:%M:%SZ")}});
    for (const auto& r : summary.results)
      if (device_name.empty() && !r.env.gpu.empty()) device_name = r.env.gpu;
    write_run_json(!summary.interrupted, summary.interrupted);
    return summary;
  }
};

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

RunSummary SuiteRun::run() { return impl_->run(); }

}  // namespace kgate::search

// The journal phase of a suite run: a new journal or a resumed one replayed into the
// problems, and each workspace's git made to agree with it.
#include "search/suite_run_phases.h"

#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "report/record_io.h"

namespace kgate::search::suite {

namespace fs = std::filesystem;

namespace {

uint64_t mix(uint64_t seed, const std::string& s) {
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 31;
  return h == 0 ? 1 : h;
}

// A new run in an OUT that holds an old one: keep the old files beside, never lose them.
void archive_previous(RunState& st, const std::string& old_id) {
  fs::path dir = fs::path(st.opt.out) / "archive" / old_id;
  fs::create_directories(dir);
  for (const char* name : {"journal.jsonl", "results.tsv", "results"}) {
    fs::path p = fs::path(st.opt.out) / name;
    std::error_code ec;
    if (fs::exists(p)) fs::rename(p, dir / name, ec);
    if (ec) throw InfraError(p.string() + ": cannot archive: " + ec.message());
  }
  log::info("previous run " + old_id + " archived under " + dir.string());
}

void replay_event(RunState& st, const json& e, const std::string& at) {
  std::string kind = e.value("event", "");
  Problem* p = st.find(e.value("problem", ""));
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
    st.all_records.push_back(r);
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
    else if (!r.run_id.empty() && r.run_id != st.run_id)
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
    p->references_pending = e.value("references_pending", false);
  }
}

// The journal's events into the problems' state. An event that does not parse, or a
// result with no outcome, or a finished search whose baseline was never journaled (a
// forged or hand-edited line), is an error naming its line: a resume never guesses.
void replay(RunState& st, const std::string& path, const Journal::Contents& c) {
  for (size_t i = 0; i < c.events.size(); ++i) {
    const std::string at = path + ":" + std::to_string(c.lines[i]) + ": error: ";
    try {
      replay_event(st, c.events[i], at);
    } catch (const json::exception& ex) {
      throw InfraError(at + c.events[i].value("event", std::string("?")) + " event does not parse (" + ex.what() +
                       "); refusing to guess");
    }
  }
}

}  // namespace

void open_journal(RunState& st) {
  fs::create_directories(st.opt.out);
  std::string jp = journal_path(st.opt.out);
  Journal::Contents c = Journal::read(jp, /*repair=*/st.opt.resume);
  if (st.opt.resume) {
    if (c.header.is_null())
      throw UsageError(jp + ": nothing to resume (no journal in " + st.opt.out + ")");
    if (c.torn_tail) log::warn(jp + ": dropped a torn last line left by a crash");
    st.run_id = c.header.value("run_id", "");
    st.seed = c.header.value("seed", uint64_t{0});
    st.started_at = c.header.value("started_at", "");
    std::string suite = c.header.value("suite", "");
    if (suite != st.opt.suite.id)
      throw UsageError(jp + ": the run in " + st.opt.out + " is of suite '" + suite +
                       "', not '" + st.opt.suite.id + "'");
    std::string backend = c.header.value("backend", "");
    if (!backend.empty() && backend != st.opt.backend)
      throw UsageError(jp + ": the run in " + st.opt.out + " used backend '" + backend +
                       "'; resume it with --backend " + backend);
    replay(st, jp, c);
    st.journal = std::make_unique<Journal>(jp, json::object());
    log::info("resuming run " + st.run_id + " (" + std::to_string(st.all_records.size()) +
              " experiments journaled)");
    return;
  }
  if (!c.header.is_null()) archive_previous(st, c.header.value("run_id", "previous"));
  st.seed = st.opt.seed ? *st.opt.seed : std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%04x", static_cast<unsigned>(st.seed & 0xffff));
  st.run_id = !st.opt.run_id.empty() ? st.opt.run_id : utc_now("%Y%m%dT%H%M%SZ") + "-" + hex;
  st.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  const report::Environment env = report::host_environment(st.opt.backend);
  json header = {{"run_id", st.run_id},
                 {"suite", st.opt.suite.id},
                 {"suite_path", st.opt.suite_path},
                 {"seed", st.seed},
                 {"backend", st.opt.backend},
                 {"started_at", st.started_at},
                 {"kgate_version", env.kgate_version},
                 {"git_sha", env.git_sha},
                 {"host", env.host}};
  st.journal = std::make_unique<Journal>(jp, header);
  log::info("run " + st.run_id + " (seed " + std::to_string(st.seed) + ") -> " + st.opt.out);
}

void init_problems(RunState& st) {
  for (const auto& it : st.items) {
    Problem p;
    p.item = &it;
    p.candidate_rel = fs::path(it.starter).filename().string();
    p.ws = fs::absolute(fs::path(st.opt.out) / "workspaces" / it.problem_id).string();
    fs::path state = fs::absolute(fs::path(st.opt.out) / "state" / it.problem_id);
    p.starter_copy = (state / "starter" / p.candidate_rel).string();
    p.best_copy = (state / "best" / p.candidate_rel).string();
    p.compiled = it.problem.kind == "kernelbench" && it.problem.kernelbench_mode == "compiled";
    if (p.compiled) {
      // Until the inventory names the kernels, the problem file stands for the model.
      p.candidate_rel = kProblemFile;
      p.starter_copy = (state / "starter" / "problem.py").string();
      p.best_copy = (state / "best" / "problem.py").string();
    }
    st.problems.push_back(std::move(p));
  }
}

void finish_problem_setup(RunState& st, Problem& p) {
  p.seed = mix(st.seed, p.item->problem_id);
  p.branch = "kgate/" + st.opt.suite.id + "/" + st.run_id + "/" + p.item->problem_id;
}

void open_workspace(Problem& p) {
  if (!p.repo) p.repo = std::make_unique<ExperimentRepo>(p.ws);
  // This run holds OUT's lock: a git lock file here is a killed run's.
  for (const auto& l : p.repo->remove_stale_locks()) log::warn(p.item->problem_id + ": removed a stale " + l);
  write_plain(p.starter_copy, starter_text(p));
}

namespace {

// A journaled commit that the workspace's repository does not have (deleted, another
// repository, a forged line) is an error naming it, not git's "cannot set" of a ref.
void require_commit(const Problem& p, const std::string& ref, const std::string& commit) {
  try {
    (void)p.repo->read(commit);
  } catch (const InfraError&) {
    throw InfraError(p.ws + ": " + ref + ": the journaled commit " + commit + " of " + p.item->problem_id +
                     " is not in the repository");
  }
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

}  // namespace

void reconcile(RunState& st, Problem& p) {
  ExperimentRepo& repo = *p.repo;
  repo.use_branch(p.branch);
  std::set<std::string> journaled;
  for (const auto& r : p.records) journaled.insert(st.exp_ref(p, r.n));
  for (const auto& ref : repo.refs("refs/kgate/" + st.run_id + "/" + p.item->problem_id + "/"))
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
    if (repo.resolve(st.exp_ref(p, r.n)) != r.commit) require_commit(p, st.exp_ref(p, r.n), r.commit);
    repo.set_ref(st.exp_ref(p, r.n), r.commit);
  }
  if (repo.head() != best) log::info(p.item->problem_id + ": resetting the branch to the best " + best.substr(0, 12));
  repo.reset_hard(best);
  repo.tag(st.best_tag(p), best);
  clean_untracked(p);
  write_plain(p.best_copy, repo.file_at(best, p.candidate_rel));
}

void check_finished_refs(RunState& st, Problem& p) {
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
  for (const auto& r : p.records) want(st.exp_ref(p, r.n), r.commit);
  want("refs/tags/" + st.best_tag(p), p.records.back().best_commit);
  want("refs/heads/" + p.branch, p.records.back().best_commit);
  // The worktree is the result's best candidate (the record names its file): edited or
  // littered since, it is put back to the best commit, as a search leaves it.
  repo.use_branch(p.branch);
  repo.reset_hard(p.records.back().best_commit);
  clean_untracked(p);
}

}  // namespace kgate::search::suite

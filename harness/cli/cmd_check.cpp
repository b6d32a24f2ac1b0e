// `kgate check`: the PR check. Finds the changed kernel files against the merge-base of
// --base and HEAD (libgit2), maps them to problems, runs the four gates on each and times
// it interleaved against its base version (the file as it was at the merge-base) on this
// machine; with a history (--db, else $KGATE_HISTORY) it is also compared with the accepted
// results, as a run is. Writes one record per problem and every report into --out.
// Exit: 0 pass (or nothing to check) · 1 a gate failed, a significant slowdown against the
// base, or a performance regression against the accepted results ·
// 2 usage (unknown ref, not a repository, bad config) · 3 infrastructure.
#include <git2.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>

#include "cli/check_map.h"
#include "cli/commands.h"
#include "cli/history_step.h"
#include "config/catalog.h"
#include "config/loader.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/paths.h"
#include "core/git_owned.h"
#include "core/log.h"
#include "gates/evaluator.h"
#include "gates/static_gate.h"
#include "report/history.h"
#include "report/record_io.h"
#include "report/report_writer.h"
#include "report/verdict_result.h"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;
using check::ChangeMap;
using check::Target;

// ---- git (libgit2) ------------------------------------------------------------------------

using git::Commit;
using git::Obj;
using git::Owned;
using git::Tree;
using git::TreeEntry;
using Repo = Owned<git_repository, git_repository_free>;
using Diff = Owned<git_diff, git_diff_free>;

std::string oid_str(const git_oid* oid, size_t n = GIT_OID_HEXSZ) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, std::min<size_t>(n, GIT_OID_HEXSZ) + 1, oid);
  return buf;
}

class GitView {
 public:
  explicit GitView(const std::string& dir) : dir_(dir) {
    static std::once_flag once;
    std::call_once(once, [] { git_libgit2_init(); });
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw UsageError(dir + ": error: --repo: no such directory");
    if (git_repository_open_ext(repo_.out(), dir.c_str(), 0, nullptr) != 0)
      throw UsageError(dir + ": error: not a git repository (" + git::last_error() + ")");
    const char* wd = git_repository_workdir(repo_.p);
    if (!wd) throw UsageError(dir + ": error: a bare repository has no working tree to check");
    workdir_ = fs::path(wd).lexically_normal().string();
    if (workdir_.size() > 1 && workdir_.back() == '/') workdir_.pop_back();
  }

  const std::string& workdir() const { return workdir_; }

  // A revision (branch, tag, sha, origin/main, HEAD~2) as a commit id.
  git_oid resolve(const std::string& rev) {
    Obj obj, peeled;
    if (git_revparse_single(obj.out(), repo_.p, rev.c_str()) != 0)
      throw UsageError(dir_ + ": error: unknown ref '" + rev + "' (" + git::last_error() + ")");
    if (git_object_peel(peeled.out(), obj.p, GIT_OBJECT_COMMIT) != 0)
      throw UsageError(dir_ + ": error: '" + rev + "' does not name a commit");
    return *git_object_id(peeled.p);
  }

  git_oid merge_base(const git_oid& a, const git_oid& b) {
    git_oid out;
    int rc = git_merge_base(&out, repo_.p, &a, &b);
    if (rc == GIT_ENOTFOUND)
      throw UsageError(dir_ + ": error: " + oid_str(&a, 12) + " and " + oid_str(&b, 12) +
                       " have no common ancestor");
    if (rc != 0) throw InfraError(dir_ + ": git: merge-base: " + git::last_error());
    return out;
  }

  void open_base(const git_oid& commit) {
    Commit c;
    if (git_commit_lookup(c.out(), repo_.p, &commit) != 0)
      throw InfraError(dir_ + ": git: commit " + oid_str(&commit) + ": " + git::last_error());
    if (git_commit_tree(base_tree_.out(), c.p) != 0)
      throw InfraError(dir_ + ": git: tree of " + oid_str(&commit) + ": " + git::last_error());
  }

  // Paths (relative to the work tree) that differ between the base tree and the working
  // tree as the index sees it (committed, staged and unstaged changes; not untracked
  // files), deleted files included (by their path at the base).
  std::vector<std::string> changed_paths() {
    git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
    Diff diff;
    if (git_diff_tree_to_workdir_with_index(diff.out(), repo_.p, base_tree_.p, &opts) != 0)
      throw InfraError(dir_ + ": git: diff: " + git::last_error());
    std::vector<std::string> out;
    for (size_t i = 0, n = git_diff_num_deltas(diff.p); i < n; ++i) {
      const git_diff_delta* d = git_diff_get_delta(diff.p, i);
      if (!d) continue;
      const char* path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
      if (path) out.push_back(path);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Whether `rel` (a file or a directory) exists in the base tree.
  bool in_base(const std::string& rel) {
    TreeEntry entry;
    int rc = git_tree_entry_bypath(entry.out(), base_tree_.p, rel.c_str());
    if (rc == GIT_ENOTFOUND) return false;
    if (rc != 0) throw InfraError(dir_ + ": git: " + rel + " at the base: " + git::last_error());
    return true;
  }

  // The file's content at the base, or nullopt when it did not exist there.
  std::optional<std::string> base_blob(const std::string& rel) {
    TreeEntry entry;
    int rc = git_tree_entry_bypath(entry.out(), base_tree_.p, rel.c_str());
    if (rc == GIT_ENOTFOUND) return std::nullopt;
    if (rc != 0) throw InfraError(dir_ + ": git: " + rel + " at the base: " + git::last_error());
    if (git_tree_entry_type(entry.p) != GIT_OBJECT_BLOB) return std::nullopt;
    Obj obj;
    if (git_tree_entry_to_object(obj.out(), repo_.p, entry.p) != 0)
      throw InfraError(dir_ + ": git: blob of " + rel + ": " + git::last_error());
    auto* blob = reinterpret_cast<git_blob*>(obj.p);
    const char* data = static_cast<const char*>(git_blob_rawcontent(blob));
    return std::string(data, static_cast<size_t>(git_blob_rawsize(blob)));
  }

 private:
  std::string dir_;
  std::string workdir_;
  Repo repo_;
  Tree base_tree_;
};

// ---- helpers --------------------------------------------------------------------------------


std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string word(const auto& e) { return nlohmann::json(e).template get<std::string>(); }

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

void print_verdict(const gates::CandidateVerdict& v) {
  for (const auto& g : v.gates) {
    std::printf("  %-12s %-7s %6.2f s", word(g.gate).c_str(), word(g.status).c_str(), g.elapsed_s);
    if (g.status == gates::GateStatus::kFail || g.status == gates::GateStatus::kError) {
      if (!g.failed_case.empty()) std::printf("  case %s", g.failed_case.c_str());
      if (!g.reason.empty()) std::printf("  -> %s", g.reason.c_str());
      std::printf("\n");
      int shown = 0;
      for (const auto& r : g.rows) {
        if (r.pass) continue;
        if (++shown > 5) {
          std::printf("      ...\n");
          break;
        }
        std::printf("      %s FAIL: %s\n", r.case_id.c_str(), r.detail.c_str());
      }
    } else {
      std::printf("\n");
    }
  }
  if (v.timing) {
    const auto& t = *v.timing;
    std::printf("  timing: base %s us  candidate %s us  speedup %.3fx [%.3f, %.3f]  p=%.2g  %s  (%d samples per side)\n",
                num(t.baseline_us).c_str(), num(t.candidate_us).c_str(), t.speedup, t.speedup_lo,
                t.speedup_hi, t.p_value, word(t.verdict).c_str(), t.samples);
  }
}

// A record names its problem within its level, as `kgate run` does ("softmax" in level
// "native"): the check map's ids are "<level>/<name>".
std::string name_in_level(const std::string& level, const std::string& id) {
  return id.starts_with(level + "/") ? id.substr(level.size() + 1) : id;
}

// The reason of a problem whose candidate file the change under check deletes.
constexpr const char* kDeletedWhy = "its candidate file was deleted by this change";

struct Row {
  std::string problem;
  std::string baseline;
  double base_us = 0, cand_us = 0, speedup = 0, lo = 0, hi = 0;
  bool timed = false;
  std::string outcome;
  std::string reason;
  bool failed = false;
};

// The PR check as its named steps, in the order cmd_check takes them.
class PrCheck {
 public:
  explicit PrCheck(const CheckOptions& o) : o_(o), git_(open_repository(o)) {}

  ExitCode run() {
    resolve_refs();
    load_config();
    map_changes();
    print_plan();
    start_records();
    if (map_.targets.empty() && map_.deleted.empty() && map_.other_backend.empty()) return nothing_to_check();
    for (const auto& s : map_.other_backend) skip(s);
    for (const Target& t : map_.deleted) deleted(t);
    for (const Target& t : map_.targets) gate(t);
    info_.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    report::write_run_info(o_.out, info_);
    const report::WrittenReports written = compare_and_report();
    print_table(written);
    return verdict(written);
  }

 private:
  // The options that need no repository, then the repository itself.
  static GitView open_repository(const CheckOptions& o) {
    if (o.out.empty()) throw UsageError("--out: an output directory is required");
    paths::require_output_dir(o.out);
    if (!o.backend.empty() && o.backend != "host" && o.backend != "cuda")
      throw UsageError("--backend " + o.backend + ": host or cuda");
    return GitView(o.repo);
  }

  // ---- repository, refs, merge-base ----
  void resolve_refs() {
    const git_oid head = git_.resolve("HEAD");
    const git_oid base_tip = git_.resolve(o_.base);
    const git_oid mb = git_.merge_base(base_tip, head);
    git_.open_base(mb);
    mb_sha_ = oid_str(&mb);
    head_sha_ = oid_str(&head);
  }

  // ---- configuration: the catalog, the suite's thresholds and measurement, backend, seed ----
  void load_config() {
    std::error_code ec;
    const std::string cfg_root = fs::is_directory(fs::path(o_.repo) / "configs", ec)
                                     ? fs::absolute(o_.repo).lexically_normal().string()
                                     : git_.workdir();
    config::Diagnostics diags;
    cat_ = config::load_repo_catalog(cfg_root, diags);
    if (diags.has_errors()) throw UsageError(diags.str());
    std::string suite_backend;
    if (!o_.suite.empty()) {
      std::optional<config::Suite> suite;
      if (fs::is_regular_file(o_.suite, ec)) suite = config::load_suite(o_.suite);
      else if (const config::Suite* s = cat_.suite(o_.suite)) suite = *s;
      else throw UsageError("--suite " + o_.suite + ": error: no such suite file or suite id");
      thresholds_ = suite->gates;
      measurement_ = suite->measurement;
      suite_id_ = suite->id;
      suite_gpus_ = suite->gpus;
      if (suite->backend == "host" || suite->backend == "cuda") suite_backend = suite->backend;
    }
    backend_ = !o_.backend.empty() ? o_.backend : !suite_backend.empty() ? suite_backend : "host";
    seed_ = o_.seed ? *o_.seed : std::random_device{}() % 1000000000ULL;
  }

  // ---- changed files -> problems ----
  void map_changes() {
    const bool explicit_changed = !o_.changed.empty();
    if (explicit_changed) {
      std::vector<std::string> unknown;
      for (const auto& c : o_.changed) {
        fs::path p(c);
        std::string rel;
        if (p.is_absolute()) {
          rel = check::detail::below(check::detail::canon(p), check::detail::canon(git_.workdir()));
          if (rel.empty()) {
            log::warn(c + ": outside the repository " + git_.workdir() + "; ignored");
            continue;
          }
        } else {
          rel = p.lexically_normal().generic_string();
        }
        // A path in neither the working tree nor the base is a typo, never "nothing changed";
        // one only at the base is a file this change deletes.
        std::error_code ec;
        if (!fs::exists(fs::path(git_.workdir()) / rel, ec) && !git_.in_base(rel)) {
          unknown.push_back(c);
          continue;
        }
        changed_.push_back(rel);
      }
      if (!unknown.empty()) {
        std::string list;
        for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
        throw UsageError("--changed " + list + ": no such file in the working tree of " + git_.workdir() +
                         " nor at the merge-base " + mb_sha_.substr(0, 12) + " of " + o_.base +
                         " (paths are relative to the repository root)");
      }
    } else {
      changed_ = git_.changed_paths();
    }
    map_ = check::map_changed_files(cat_, git_.workdir(), changed_, backend_);
    if (explicit_changed)
      for (const auto& u : map_.unmapped)
        log::warn(u + ": maps to no problem (not a native starter for backend " + backend_ +
                  " nor a KernelBench solution); ignored");
  }

  void print_plan() const {
    std::printf("kgate check: base %s (merge-base %s), HEAD %s, backend %s\n", o_.base.c_str(),
                mb_sha_.substr(0, 12).c_str(), head_sha_.substr(0, 12).c_str(), backend_.c_str());
    std::printf("seed %llu (reproduce with --seed %llu)\n", static_cast<unsigned long long>(seed_),
                static_cast<unsigned long long>(seed_));
    const size_t n = map_.targets.size() + map_.deleted.size();
    std::printf("%zu changed file%s, %zu problem%s to check\n", changed_.size(), changed_.size() == 1 ? "" : "s",
                n, n == 1 ? "" : "s");
    for (const auto& t : map_.targets) std::printf("  %s -> %s\n", t.rel.c_str(), t.problem.c_str());
    for (const auto& t : map_.deleted)
      std::printf("  %s (deleted) -> %s: %s\n", t.rel.c_str(), t.problem.c_str(), kDeletedWhy);
    for (const auto& s : map_.other_backend)
      std::printf("  %s -> %s (starter for backend %s: skipped; check with --backend %s)\n", s.rel.c_str(),
                  s.problem.c_str(), s.backend.c_str(), s.backend.c_str());
    std::fflush(stdout);
  }

  // ---- the run's records: OUT emptied of a previous check's, run.json started ----
  void start_records() {
    std::error_code ec;
    fs::create_directories(o_.out, ec);
    if (ec) throw InfraError(o_.out + ": cannot create: " + ec.message());
    fs::remove_all(fs::path(o_.out) / "results", ec);  // a previous check's records are not ours
    info_.kind = report::RunKind::kCheck;
    info_.suite = suite_id_;
    if (const char* env = std::getenv("KGATE_RUN_ID"); env && *env) info_.run_id = env;
    else info_.run_id = "check-" + utc_now("%Y%m%dT%H%M%SZ") + "-" + head_sha_.substr(0, 12);
    info_.config_hash = gates::hash_bytes(mb_sha_ + "\n" + head_sha_ + "\n" + suite_id_ + "\n" + backend_);
    info_.seed = seed_;
    info_.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    info_.env = report::host_environment(backend_);
    for (const auto& t : map_.targets) info_.planned.push_back(t.problem);
    for (const auto& t : map_.deleted) info_.planned.push_back(t.problem);
    for (const auto& s : map_.other_backend) info_.planned.push_back(s.problem);
    info_.fail_on_performance = true;  // a PR check fails on a significant slowdown
    info_.regression_threshold = thresholds_.regression_threshold;
    report::write_run_info(o_.out, info_);
  }

  ExitCode nothing_to_check() {
    info_.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    report::write_run_info(o_.out, info_);
    try {
      report::write_reports(report::RunRecords{info_, {}}, o_.out);  // an empty JUnit for CI
    } catch (const Error& e) {
      log::warn(std::string("reports: ") + e.what());
    }
    std::printf("\nnothing to check: no changed kernel file against %s (%s)\n", o_.base.c_str(),
                mb_sha_.substr(0, 12).c_str());
    std::printf("verdict: PASS (nothing to check)\n");
    return ExitCode::kPass;
  }

  // A result of this check for problem `id` of `level`, before any gate.
  report::ProblemResult result_for(const std::string& level, const std::string& id) const {
    report::ProblemResult r;
    r.run_id = info_.run_id;
    r.suite = suite_id_;
    r.level = level;
    r.problem = name_in_level(level, id);
    r.seed = seed_;
    r.env = info_.env;
    return r;
  }

  // The result's record written and its row of the table.
  void record(const std::string& id, const report::ProblemResult& r, bool timed, bool failed) {
    report::write_result(o_.out, r);
    Row row;
    row.problem = id;
    row.baseline = r.baseline_kind.empty() ? "-" : r.baseline_kind;
    row.base_us = r.baseline_us;
    row.cand_us = r.best_us;
    row.speedup = r.speedup;
    row.lo = r.speedup_lo;
    row.hi = r.speedup_hi;
    row.timed = timed;
    row.outcome = word(r.outcome);
    row.reason = r.reason;
    row.failed = failed;
    rows_.push_back(row);
  }

  // ---- a starter of the other backend: recorded as skipped ----
  void skip(const check::OtherBackend& s) {
    report::ProblemResult r = result_for(s.level, s.problem);
    r.outcome = report::Outcome::kSkipped;
    r.reason = s.rel + " is the starter for backend " + s.backend + "; this check ran backend " + backend_;
    record(s.problem, r, false, false);
  }

  // ---- a problem whose candidate the change deletes: a failure, nothing to gate ----
  // Not an infrastructure error (rerunning changes nothing) nor a pass (the problem would
  // lose its kernel unseen): the change under test fails the problem, as a rejected
  // candidate does (outcome fallback, in a check a gate failure: exit 1, a JUnit <failure>).
  void deleted(const Target& t) {
    std::printf("\n%s  (%s, deleted)\n  -> %s\n", t.problem.c_str(), t.rel.c_str(), kDeletedWhy);
    report::ProblemResult r = result_for(t.level, t.problem);
    r.best_commit = head_sha_;
    r.baseline_commit = mb_sha_;
    r.outcome = report::Outcome::kFallback;
    r.reason = std::string(kDeletedWhy) + " (" + t.rel + ")";
    std::error_code ec;
    if (fs::is_regular_file(t.source, ec)) r.config_key = config_key_of(t.source, backend_);
    record(t.problem, r, false, true);
  }

  // The base version: the changed file's blob at the merge-base, under its own name
  // ("" = the file is new); the result's baseline kind says what it is timed against.
  std::string write_base_version(const Target& t, const config::NativeProblem& problem, report::ProblemResult& r) {
    std::optional<std::string> blob = git_.base_blob(t.rel);
    if (blob) {
      fs::path dir = fs::path(o_.out) / "base" / fs::path(report::record_file_name(t.level, r.problem)).stem();
      std::error_code ec;
      fs::create_directories(dir, ec);
      const std::string base_file = (dir / fs::path(t.rel).filename()).string();
      std::ofstream f(base_file, std::ios::binary | std::ios::trunc);
      f << *blob;
      if (!f.flush()) throw InfraError(base_file + ": cannot write the base version");
      r.baseline_kind = "base";
      std::printf("  baseline: the base version (%s at %s)\n", t.rel.c_str(), mb_sha_.substr(0, 12).c_str());
      return base_file;
    }
    if (t.kind == "kernelbench") {
      r.baseline_kind = problem.kernelbench_baseline;
      std::printf("  baseline: new file, timed against the reference model (%s)\n", r.baseline_kind.c_str());
    } else {
      r.baseline_kind = problem.baselines.count(backend_) ? "reference" : "starter";
      std::printf("  baseline: new file, timed against the problem's default (%s)\n", r.baseline_kind.c_str());
    }
    return "";
  }

  // The base version through the static, correctness and oracle gates (no timing), judged
  // as the change was (the same seed and cases; its own numbers anchor the oracle). An
  // error while judging it leaves it unverified: the change is then a gate failure.
  static bool base_passes(const config::NativeProblem& problem, gates::EvalOptions opt, const std::string& base_file) {
    opt.run_performance = false;
    try {
      gates::Evaluator ev(problem, opt);
      const gates::CandidateVerdict v = ev.evaluate(base_file, {}, base_file);
      if (v.passed) {
        std::printf("  base version: passes the static, correctness and oracle gates: the change regressed\n");
        return true;
      }
      const check::Conclusion c = check::check_outcome(v, {});
      std::printf("  base version: fails too (%s): not a regression of this change\n", c.reason.c_str());
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      std::printf("  base version: not judged (%s)\n", e.what());
    }
    return false;
  }

  // ---- one changed problem through the four gates, timed against its base version ----
  void gate(const Target& t) {
    std::printf("\n%s  (%s)\n", t.problem.c_str(), t.rel.c_str());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    report::ProblemResult r = result_for(t.level, t.problem);
    r.best_candidate = t.candidate;
    r.best_commit = head_sha_;
    r.baseline_commit = mb_sha_;
    bool timed = false, failed = false;
    std::error_code src_ec;
    if (fs::is_regular_file(t.source, src_ec)) r.config_key = config_key_of(t.source, backend_);
    try {
      r.best_hash = gates::hash_file(t.candidate);
      config::NativeProblem problem = t.kind == "kernelbench"
                                          ? config::kernelbench_problem(t.problem, t.source, t.baseline_mode)
                                          : *t.native;
      const std::string base_file = write_base_version(t, problem, r);
      std::fflush(stdout);

      gates::EvalOptions opt;
      opt.backend = backend_;
      opt.seed = seed_;
      opt.thresholds = thresholds_;
      opt.measurement = measurement_;
      gates::Evaluator ev(problem, opt);
      r.env.gpu = ev.device().name;
      r.env.set_software(ev.device().driver, ev.runtime().cuda, ev.runtime().torch, ev.runtime().triton);
      r.env.gpu_target = check::gpu_target_for(cat_, suite_gpus_, backend_, ev.device().name, ev.device().cc);
      if (info_.env.gpu.empty()) info_.env = r.env;  // the run's device: the reports' header names it
      gates::CandidateVerdict v = ev.evaluate(t.candidate, {}, base_file);
      print_verdict(v);
      check::Conclusion c = check::check_outcome(v, thresholds_);
      r.outcome = c.outcome;
      r.reason = c.reason;
      // A static/correctness/oracle failure: was the base version correct? Then this change
      // is a correctness regression.
      if (!v.passed && v.failed_gate && *v.failed_gate != gates::Gate::kPerformance && !base_file.empty()) {
        r.base_correct = base_passes(problem, opt, base_file);
        if (r.base_correct) r.reason += " (the base version passes the static, correctness and oracle gates)";
      }
      if (base_file.empty())
        r.reason = "new file: no base version, baseline is the problem's default (" + r.baseline_kind + ")" +
                   (r.reason.empty() ? "" : "; " + r.reason);
      r.gates = v.gates;
      r.experiments = 1;
      r.kept = c.failed ? 0 : 1;
      timed = report::take_timing(report::timing_fields(r), v);
      failed = c.failed;
    } catch (const InfraError& e) {
      r.outcome = report::Outcome::kError;
      r.reason = std::string("infrastructure: ") + e.what();
      log::error(t.problem + ": " + e.what());
    } catch (const UsageError& e) {
      r.outcome = report::Outcome::kError;
      r.error_kind = report::kProblemErrorKind;
      r.reason = e.what();
      log::error(t.problem + ": " + e.what());
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    record(t.problem, r, timed, failed);
    std::printf("  -> %s%s%s\n", rows_.back().outcome.c_str(), r.reason.empty() ? "" : ": ", r.reason.c_str());
    std::fflush(stdout);
  }

  // ---- against the accepted results of the history, then the reports ----
  // As a run is: a change that matches its base may still be slower than what the pipeline
  // accepted (a slow kernel merged since). The records are rewritten before any report
  // reads them, so every report, the JUnit, the table and the exit code say the same. The
  // check is recorded (kind check: kept for the record, never accepted, not in the weekly
  // trend or the shard costs) before the reports are written: a history that cannot be
  // read or written is an infrastructure error that every report states
  // (RunInfo::history_errors).
  report::WrittenReports compare_and_report() {
    const std::string db = history_db(o_.db);
    if (!db.empty()) {
      try {
        report::RunRecords run = report::load_run_dir(o_.out);
        (void)compare_and_record(run, db, /*record=*/true);
        rewrite_records(o_.out, run);
        for (const auto& r : run.results) {
          if (!r.vs_accepted || !r.vs_accepted->regressed) continue;
          for (Row& row : rows_)
            if (row.problem == report::problem_key(r)) {
              row.outcome = word(r.outcome);
              row.reason = r.reason;
              row.failed = true;
            }
        }
      } catch (const Error& e) {
        (void)history_error_in_run_json(o_.out, db, e);
      }
    }
    return report::write_reports(o_.out);
  }

  // ---- summary table ----
  void print_table(const report::WrittenReports& written) const {
    size_t w = 8;
    for (const auto& r : rows_) w = std::max(w, r.problem.size() + 2);
    std::printf("\n%s%-10s %10s %10s  %-22s %s\n", pad("problem", w).c_str(), "baseline", "base us", "cand us",
                "speedup [CI]", "outcome");
    for (const auto& r : rows_) {
      char sp[64] = "-";
      if (r.timed) std::snprintf(sp, sizeof sp, "%.3fx [%.3f, %.3f]", r.speedup, r.lo, r.hi);
      std::printf("%s%-10s %10s %10s  %-22s %s%s\n", pad(r.problem, w).c_str(), r.baseline.c_str(),
                  r.timed ? num(r.base_us).c_str() : "-", r.timed ? num(r.cand_us).c_str() : "-", sp,
                  r.outcome.c_str(), r.failed ? "  FAIL" : "");
    }
    std::printf("\nreports:");
    for (const auto& f : written.files) std::printf(" %s", f.c_str());
    std::printf("\n");
  }

  // ---- the verdict and the exit code: the reports' own (report::exit_code_of over the
  // records and run.json, in worse()'s order: infrastructure -- a history that could not be
  // read or written included --, a problem's unusable inputs, a failed gate) ----
  ExitCode verdict(const report::WrittenReports& written) const {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start_).count();
    const int failed = static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.failed; }));
    const size_t n = map_.targets.size() + map_.deleted.size();
    const ExitCode code = written.exit_code;
    const std::string also = failed > 0 ? "; " + std::to_string(failed) + " of " + std::to_string(n) +
                                              " problem" + (n == 1 ? "" : "s") + " failed a gate too"
                                        : "";
    switch (code) {
      case ExitCode::kPass:
        std::printf("verdict: PASS (%zu problem%s checked, %.1f s)\n", n, n == 1 ? "" : "s", wall);
        return code;
      case ExitCode::kInfra:
        std::printf("verdict: ERROR (infrastructure%s; see the records in %s)\n", also.c_str(), o_.out.c_str());
        return code;
      case ExitCode::kUsage:
        std::printf("verdict: ERROR (configuration: a problem's own files are unusable%s; see the records in %s)\n",
                    also.c_str(), o_.out.c_str());
        return code;
      default: break;
    }
    std::printf("verdict: FAIL (%d of %zu problem%s failed", failed, n, n == 1 ? "" : "s");
    for (const auto& r : rows_)
      if (r.failed) {
        std::printf("; %s: %s", r.problem.c_str(), r.reason.c_str());
        break;
      }
    std::printf(")\n");
    std::printf("reproduce: kgate check --base %s --repo %s --seed %llu --backend %s%s%s\n", o_.base.c_str(),
                o_.repo.c_str(), static_cast<unsigned long long>(seed_), backend_.c_str(),
                o_.suite.empty() ? "" : " --suite ", o_.suite.c_str());
    return code;
  }

  const CheckOptions& o_;
  const std::chrono::steady_clock::time_point t_start_ = std::chrono::steady_clock::now();
  GitView git_;
  std::string mb_sha_, head_sha_;
  config::Catalog cat_;
  config::GateThresholds thresholds_;
  config::MeasurementConfig measurement_;
  std::string suite_id_ = "check";
  std::vector<std::string> suite_gpus_;
  std::string backend_;
  uint64_t seed_ = 0;
  std::vector<std::string> changed_;
  ChangeMap map_;
  report::RunInfo info_;
  std::vector<Row> rows_;
};

}  // namespace

ExitCode cmd_check(const CheckOptions& o) { return PrCheck(o).run(); }

}  // namespace kgate::cli

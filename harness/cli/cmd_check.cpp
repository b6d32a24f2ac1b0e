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
  // tree as the index sees it (committed, staged and unstaged changes; not untracked files).
  std::vector<std::string> changed_paths() {
    git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
    Diff diff;
    if (git_diff_tree_to_workdir_with_index(diff.out(), repo_.p, base_tree_.p, &opts) != 0)
      throw InfraError(dir_ + ": git: diff: " + git::last_error());
    std::vector<std::string> out;
    for (size_t i = 0, n = git_diff_num_deltas(diff.p); i < n; ++i) {
      const git_diff_delta* d = git_diff_get_delta(diff.p, i);
      if (!d || d->status == GIT_DELTA_DELETED) continue;
      if (d->new_file.path) out.push_back(d->new_file.path);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
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

struct Row {
  std::string problem;
  std::string baseline;
  double base_us = 0, cand_us = 0, speedup = 0, lo = 0, hi = 0;
  bool timed = false;
  std::string outcome;
  std::string reason;
  bool failed = false;
};

}  // namespace

ExitCode cmd_check(const CheckOptions& o) {
  const auto t_start = std::chrono::steady_clock::now();
  if (o.out.empty()) throw UsageError("--out: an output directory is required");
  if (!o.backend.empty() && o.backend != "host" && o.backend != "cuda")
    throw UsageError("--backend " + o.backend + ": host or cuda");

  // ---- repository, refs, merge-base ----
  GitView git(o.repo);
  const git_oid head = git.resolve("HEAD");
  const git_oid base_tip = git.resolve(o.base);
  const git_oid mb = git.merge_base(base_tip, head);
  git.open_base(mb);
  const std::string mb_sha = oid_str(&mb), head_sha = oid_str(&head);

  // ---- configuration ----
  std::error_code ec;
  const std::string cfg_root = fs::is_directory(fs::path(o.repo) / "configs", ec)
                                   ? fs::absolute(o.repo).lexically_normal().string()
                                   : git.workdir();
  config::Diagnostics diags;
  config::Catalog cat = config::load_repo_catalog(cfg_root, diags);
  if (diags.has_errors()) throw UsageError(diags.str());

  config::GateThresholds thresholds;
  config::MeasurementConfig measurement;
  std::string suite_id = "check";
  std::string suite_backend;
  std::vector<std::string> suite_gpus;
  if (!o.suite.empty()) {
    std::optional<config::Suite> suite;
    if (fs::is_regular_file(o.suite, ec)) suite = config::load_suite(o.suite);
    else if (const config::Suite* s = cat.suite(o.suite)) suite = *s;
    else throw UsageError("--suite " + o.suite + ": error: no such suite file or suite id");
    thresholds = suite->gates;
    measurement = suite->measurement;
    suite_id = suite->id;
    suite_gpus = suite->gpus;
    if (suite->backend == "host" || suite->backend == "cuda") suite_backend = suite->backend;
  }
  const std::string backend = !o.backend.empty() ? o.backend : !suite_backend.empty() ? suite_backend : "host";
  const uint64_t seed = o.seed ? *o.seed : std::random_device{}() % 1000000000ULL;

  // ---- changed files -> problems ----
  std::vector<std::string> changed;
  const bool explicit_changed = !o.changed.empty();
  if (explicit_changed) {
    for (const auto& c : o.changed) {
      fs::path p(c);
      if (p.is_absolute()) {
        std::string rel = check::detail::below(check::detail::canon(p), check::detail::canon(git.workdir()));
        if (rel.empty()) {
          log::warn(c + ": outside the repository " + git.workdir() + "; ignored");
          continue;
        }
        changed.push_back(rel);
      } else {
        changed.push_back(p.lexically_normal().generic_string());
      }
    }
  } else {
    changed = git.changed_paths();
  }
  ChangeMap map = check::map_changed_files(cat, git.workdir(), changed, backend);
  if (explicit_changed)
    for (const auto& u : map.unmapped)
      log::warn(u + ": maps to no problem (not a native starter for backend " + backend +
                " nor a KernelBench solution); ignored");

  std::printf("kgate check: base %s (merge-base %s), HEAD %s, backend %s\n", o.base.c_str(),
              mb_sha.substr(0, 12).c_str(), head_sha.substr(0, 12).c_str(), backend.c_str());
  std::printf("seed %llu (reproduce with --seed %llu)\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::printf("%zu changed file%s, %zu problem%s to check\n", changed.size(), changed.size() == 1 ? "" : "s",
              map.targets.size(), map.targets.size() == 1 ? "" : "s");
  for (const auto& t : map.targets) std::printf("  %s -> %s\n", t.rel.c_str(), t.problem.c_str());
  for (const auto& s : map.other_backend)
    std::printf("  %s -> %s (starter for backend %s: skipped; check with --backend %s)\n", s.rel.c_str(),
                s.problem.c_str(), s.backend.c_str(), s.backend.c_str());
  std::fflush(stdout);

  // ---- the run's records ----
  fs::create_directories(o.out, ec);
  if (ec) throw InfraError(o.out + ": cannot create: " + ec.message());
  fs::remove_all(fs::path(o.out) / "results", ec);  // a previous check's records are not ours
  report::RunInfo info;
  info.kind = report::RunKind::kCheck;
  info.suite = suite_id;
  if (const char* env = std::getenv("KGATE_RUN_ID"); env && *env) info.run_id = env;
  else info.run_id = "check-" + utc_now("%Y%m%dT%H%M%SZ") + "-" + head_sha.substr(0, 12);
  info.config_hash = gates::hash_bytes(mb_sha + "\n" + head_sha + "\n" + suite_id + "\n" + backend);
  info.seed = seed;
  info.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  info.env = report::host_environment(backend);
  for (const auto& t : map.targets) info.planned.push_back(t.problem);
  for (const auto& s : map.other_backend) info.planned.push_back(s.problem);
  info.fail_on_performance = true;  // a PR check fails on a significant slowdown
  info.regression_threshold = thresholds.regression_threshold;
  report::write_run_info(o.out, info);

  if (map.targets.empty() && map.other_backend.empty()) {
    info.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    report::write_run_info(o.out, info);
    try {
      report::write_reports(report::RunRecords{info, {}}, o.out);  // an empty JUnit for CI
    } catch (const Error& e) {
      log::warn(std::string("reports: ") + e.what());
    }
    std::printf("\nnothing to check: no changed kernel file against %s (%s)\n", o.base.c_str(),
                mb_sha.substr(0, 12).c_str());
    std::printf("verdict: PASS (nothing to check)\n");
    return ExitCode::kPass;
  }

  // ---- gate every changed problem ----
  std::vector<Row> rows;
  bool infra_error = false, usage_error = false;
  for (const auto& s : map.other_backend) {
    report::ProblemResult r;
    r.run_id = info.run_id;
    r.suite = suite_id;
    r.level = s.level;
    r.problem = name_in_level(s.level, s.problem);
    r.outcome = report::Outcome::kSkipped;
    r.reason = s.rel + " is the starter for backend " + s.backend + "; this check ran backend " + backend;
    r.seed = seed;
    r.env = info.env;
    report::write_result(o.out, r);
    rows.push_back({s.problem, "-", 0, 0, 0, 0, 0, false, "skipped", r.reason, false});
  }

  for (const Target& t : map.targets) {
    std::printf("\n%s  (%s)\n", t.problem.c_str(), t.rel.c_str());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    report::ProblemResult r;
    r.run_id = info.run_id;
    r.suite = suite_id;
    r.level = t.level;
    r.problem = name_in_level(t.level, t.problem);
    r.seed = seed;
    r.env = info.env;
    r.best_candidate = t.candidate;
    r.best_commit = head_sha;
    r.baseline_commit = mb_sha;
    Row row;
    std::error_code src_ec;
    if (fs::is_regular_file(t.source, src_ec)) r.config_key = config_key_of(t.source, backend);
    row.problem = t.problem;
    try {
      r.best_hash = gates::hash_file(t.candidate);
      config::NativeProblem problem = t.kind == "kernelbench"
                                          ? config::kernelbench_problem(t.problem, t.source, t.baseline_mode)
                                          : *t.native;
      // The base version: the changed file's blob at the merge-base, under its own name.
      std::string base_file;
      std::optional<std::string> blob = git.base_blob(t.rel);
      if (blob) {
        fs::path dir = fs::path(o.out) / "base" /
                       fs::path(report::record_file_name(t.level, r.problem)).stem();
        fs::create_directories(dir, ec);
        base_file = (dir / fs::path(t.rel).filename()).string();
        std::ofstream f(base_file, std::ios::binary | std::ios::trunc);
        f << *blob;
        if (!f.flush()) throw InfraError(base_file + ": cannot write the base version");
        r.baseline_kind = "base";
        std::printf("  baseline: the base version (%s at %s)\n", t.rel.c_str(), mb_sha.substr(0, 12).c_str());
      } else if (t.kind == "kernelbench") {
        r.baseline_kind = problem.kernelbench_baseline;
        std::printf("  baseline: new file, timed against the reference model (%s)\n", r.baseline_kind.c_str());
      } else {
        r.baseline_kind = problem.baselines.count(backend) ? "reference" : "starter";
        std::printf("  baseline: new file, timed against the problem's default (%s)\n", r.baseline_kind.c_str());
      }
      std::fflush(stdout);

      gates::EvalOptions opt;
      opt.backend = backend;
      opt.seed = seed;
      opt.thresholds = thresholds;
      opt.measurement = measurement;
      gates::Evaluator ev(problem, opt);
      r.env.gpu = ev.device().name;
      r.env.set_software(ev.device().driver, ev.runtime().cuda, ev.runtime().torch, ev.runtime().triton);
      r.env.gpu_target = check::gpu_target_for(cat, suite_gpus, backend, ev.device().name, ev.device().cc);
      gates::CandidateVerdict v = ev.evaluate(t.candidate, {}, base_file);
      print_verdict(v);
      check::Conclusion c = check::check_outcome(v, thresholds);
      r.outcome = c.outcome;
      r.reason = c.reason;
      if (!blob) r.reason = "new file: no base version, baseline is the problem's default (" + r.baseline_kind +
                            ")" + (r.reason.empty() ? "" : "; " + r.reason);
      r.gates = v.gates;
      r.experiments = 1;
      r.kept = c.failed ? 0 : 1;
      row.timed = report::take_timing(report::timing_fields(r), v);
      row.failed = c.failed;
    } catch (const InfraError& e) {
      infra_error = true;
      r.outcome = report::Outcome::kError;
      r.reason = std::string("infrastructure: ") + e.what();
      log::error(t.problem + ": " + e.what());
    } catch (const UsageError& e) {
      usage_error = true;
      r.outcome = report::Outcome::kError;
      r.reason = e.what();
      log::error(t.problem + ": " + e.what());
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report::write_result(o.out, r);
    row.baseline = r.baseline_kind.empty() ? "-" : r.baseline_kind;
    row.base_us = r.baseline_us;
    row.cand_us = r.best_us;
    row.speedup = r.speedup;
    row.lo = r.speedup_lo;
    row.hi = r.speedup_hi;
    row.outcome = word(r.outcome);
    row.reason = r.reason;
    rows.push_back(row);
    std::printf("  -> %s%s%s\n", row.outcome.c_str(), r.reason.empty() ? "" : ": ", r.reason.c_str());
    std::fflush(stdout);
  }

  info.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  report::write_run_info(o.out, info);
  // Against the accepted results of the history, as a run is: a change that matches its
  // base may still be slower than what the pipeline accepted (a slow kernel merged since).
  // The records are rewritten before any report reads them, so every report, the JUnit,
  // the table below and the exit code say the same. The check is then recorded (kind
  // check: kept for the record, never accepted, not in the weekly trend or the shard
  // costs). A history that cannot be read or written is an infrastructure error; a failed
  // gate still takes precedence.
  const std::string db = history_db(o.db);
  std::optional<report::History> history;
  if (!db.empty()) {
    try {
      history.emplace(db);
      report::RunRecords run = report::load_run_dir(o.out);
      compare_with_history(run, *history);
      rewrite_records(o.out, run);
      for (const auto& r : run.results) {
        if (!r.vs_accepted || !r.vs_accepted->regressed) continue;
        for (Row& row : rows)
          if (row.problem == report::problem_key(r)) {
            row.outcome = word(r.outcome);
            row.reason = r.reason;
            row.failed = true;
          }
      }
    } catch (const Error& e) {
      log::error(std::string("history ") + db + ": " + e.what());
      infra_error = true;
      history.reset();
    }
  }
  report::WrittenReports written = report::write_reports(o.out);
  if (history) {
    try {
      history->record_run_dir(o.out);
      log::info("recorded the check in " + db);
    } catch (const Error& e) {
      log::error(std::string("history ") + db + ": " + e.what());
      infra_error = true;
    }
  }

  // ---- summary table ----
  size_t w = 8;
  for (const auto& r : rows) w = std::max(w, r.problem.size() + 2);
  std::printf("\n%s%-10s %10s %10s  %-22s %s\n", pad("problem", w).c_str(), "baseline", "base us", "cand us",
              "speedup [CI]", "outcome");
  int failed = 0;
  for (const auto& r : rows) {
    char sp[64] = "-";
    if (r.timed) std::snprintf(sp, sizeof sp, "%.3fx [%.3f, %.3f]", r.speedup, r.lo, r.hi);
    std::printf("%s%-10s %10s %10s  %-22s %s%s\n", pad(r.problem, w).c_str(), r.baseline.c_str(),
                r.timed ? num(r.base_us).c_str() : "-", r.timed ? num(r.cand_us).c_str() : "-", sp,
                r.outcome.c_str(), r.failed ? "  FAIL" : "");
    if (r.failed) ++failed;
  }
  std::printf("\nreports:");
  for (const auto& f : written.files) std::printf(" %s", f.c_str());
  std::printf("\n");

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  const bool gate_failed = failed > 0 || written.pipeline_failed;
  if (gate_failed) {
    std::printf("verdict: FAIL (%d of %zu problem%s failed", failed, map.targets.size(),
                map.targets.size() == 1 ? "" : "s");
    for (const auto& r : rows)
      if (r.failed) {
        std::printf("; %s: %s", r.problem.c_str(), r.reason.c_str());
        break;
      }
    std::printf(")\n");
    std::printf("reproduce: kgate check --base %s --repo %s --seed %llu --backend %s%s%s\n", o.base.c_str(),
                o.repo.c_str(), static_cast<unsigned long long>(seed), backend.c_str(),
                o.suite.empty() ? "" : " --suite ", o.suite.c_str());
    return ExitCode::kGateFailure;
  }
  if (infra_error) {
    std::printf("verdict: ERROR (infrastructure; see the records in %s)\n", o.out.c_str());
    return ExitCode::kInfra;
  }
  if (usage_error) {
    std::printf("verdict: ERROR (configuration; see the records in %s)\n", o.out.c_str());
    return ExitCode::kUsage;
  }
  std::printf("verdict: PASS (%zu problem%s checked, %.1f s)\n", map.targets.size(),
              map.targets.size() == 1 ? "" : "s", wall);
  return ExitCode::kPass;
}

}  // namespace kgate::cli

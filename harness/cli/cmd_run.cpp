// `kgate run SUITE`: resolve the suite's plan, pick the problems this machine runs, and
// hand them to search::SuiteRun with the real gate evaluator. Exit codes: docs/reports.md, ci/README.md.
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <random>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/history_step.h"
#include "config/catalog.h"
#include "core/clock.h"
#include "core/dir_lock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/paths.h"
#include "core/subprocess.h"
#include "protocol/messages.h"
#include "worker/worker.h"
#include "gates/evaluator.h"
#include "gates/static_gate.h"
#include "report/history.h"
#include "report/merge.h"
#include "report/partition.h"
#include "report/record_io.h"
#include "report/report_writer.h"
#include "search/suite_run.h"

namespace fs = std::filesystem;

namespace kgate::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int sig) {
  g_interrupted.store(true);
  // A second signal kills at once: the default action.
  std::signal(sig, SIG_DFL);
}

// The run's own compile caches: OUT/cache, absolute (the workers' sandbox names it writable).
std::string own_cache_dir(const RunOptions& o) { return paths::absolute((fs::path(o.out) / "cache").string()); }

// The compile caches the run was told to keep across runs (Inductor's and Triton's, the
// native builds, the torch forms): --cache, else $KGATE_CACHE_DIR, absolute; "" when neither.
std::string given_cache_dir(const RunOptions& o) {
  return !o.cache.empty() ? paths::absolute(o.cache) : paths::kept_cache_dir();
}

// That directory when it is not the run's own OUT/cache; "" when the run uses OUT/cache.
std::string kept_cache_dir(const RunOptions& o) {
  const std::string given = given_cache_dir(o);
  return given == own_cache_dir(o) ? std::string() : given;
}

// The search's view of the gates, over the real Evaluator (one kgate-native worker).
class GatesEvaluator : public search::CandidateEvaluator {
 public:
  // torch_modes: the suite's torch_references, when it gives them (nullopt: not given).
  GatesEvaluator(config::NativeProblem problem, gates::EvalOptions options,
                 std::optional<std::vector<std::string>> torch_modes = std::nullopt)
      : baseline_is_compile_(problem.baseline_is_default_compile()),
        torch_modes_(std::move(torch_modes)),
        eval_(std::move(problem), std::move(options)) {}
  gates::CandidateVerdict evaluate(const std::string& candidate, const search::Point& defines,
                                   const std::string& baseline) override {
    return eval_.evaluate(candidate, defines, baseline);
  }
  gates::Timing remeasure(const std::string& candidate, const search::Point& defines,
                          const std::string& baseline) override {
    return eval_.remeasure(candidate, defines, baseline);
  }
  void anchor_oracle(const std::string& starter) override { eval_.anchor_oracle(starter); }
  void set_partners(const std::string& candidate, std::vector<gates::PartnerFile> partners) override {
    eval_.set_partners(candidate, std::move(partners));
  }
  std::string device_name() const override { return eval_.device().name; }
  protocol::HelloResult runtime() const override { return eval_.runtime(); }
  // The kernel files a search starts from carry Inductor's coordinate-descent choice as
  // the tuner's first point (so the search starts where torch.compile's own extra search
  // ends).
  nlohmann::json inventory(const std::string& dir) override { return eval_.inventory(dir, "coordinate-descent"); }
  std::map<std::string, gates::Timing> reference_timings(const std::string& candidate,
                                                         const search::Point& defines) override {
    std::map<std::string, gates::Timing> out;
    if (!eval_.kernelbench()) {
      // A native problem: against its op's PyTorch form, in the suite's torch_references.
      if (!torch_modes_ || torch_modes_->empty()) return out;
      std::map<std::string, gates::ReferenceTiming> refs;
      try {
        refs = eval_.torch_references(candidate, defines, *torch_modes_, [] { return g_interrupted.load(); });
      } catch (const Interrupted&) {
        throw;
      } catch (const Error& e) {
        // Optional columns: the machine's trouble here (the library not built again, no
        // Python worker) leaves them empty, never the problem without its result.
        log::warn(std::string("vs PyTorch: not measured: ") + e.what());
        for (const auto& mode : *torch_modes_) out[mode] = unmeasured(e.what());
      }
      for (auto& [mode, rt] : refs) {
        if (!rt.error.empty()) log::warn(std::string("vs PyTorch ") + mode + ": " + rt.error);
        out[mode] = rt.error.empty() ? rt.timing : unmeasured(rt.error);
      }
      return out;
    }
    std::vector<std::string> modes = {"eager"};
    // Compiled mode against torch.compile's default model: that model is the search's own
    // baseline, which the final re-measure has just timed the kernel set against, so it is
    // not timed again (search::finalize takes its vs-compile number from there).
    if (!baseline_is_compile_) modes.push_back("compile");
    // Dispatch-aware results are also set beside Inductor's own extra search.
    if (eval_.compiled()) modes.push_back("compile-max-autotune");
    // A suite that gives torch_references narrows these to the modes it lists.
    if (torch_modes_)
      modes.erase(std::remove_if(modes.begin(), modes.end(),
                                 [&](const std::string& mo) {
                                   return std::find(torch_modes_->begin(), torch_modes_->end(), mo) == torch_modes_->end();
                                 }),
                  modes.end());
    if (modes.empty()) return out;
    // One fresh worker for them all; the run obeys a stop between them (search::finalize
    // records nothing then).
    for (auto& [mode, rt] : eval_.remeasure_references(candidate, defines, modes, [] { return g_interrupted.load(); })) {
      // torch.compile can fail on a machine (no compiler, unsupported op): the report then
      // has no vs-compile number rather than no result.
      if (!rt.error.empty()) log::warn(std::string("vs ") + mode + ": " + rt.error);
      out[mode] = rt.error.empty() ? rt.timing : unmeasured(rt.error);
    }
    return out;
  }

  // A mode whose re-measure gave no time: no candidate time, the error as its note (the
  // record says why that column is empty).
  static gates::Timing unmeasured(const std::string& why) {
    gates::Timing t;  // candidate_us stays 0
    t.note = why;
    return t;
  }

 private:
  bool baseline_is_compile_;
  std::optional<std::vector<std::string>> torch_modes_;
  gates::Evaluator eval_;
};

// The hash every shard of one run must agree on: the suite file and, per planned problem
// (all of them, before sharding), its id, problem file and starter contents.
std::string config_hash(const std::string& suite_path, const std::vector<const config::PlanItem*>& items) {
  std::string manifest = "suite " + gates::hash_file(suite_path) + "\n";
  for (const config::PlanItem* it : items)
    manifest += it->problem + " " + it->gpu.id + " " + gates::hash_file(it->source) + " " +
                (it->starter.empty() ? "-" : gates::hash_file(it->starter)) + "\n";
  return gates::hash_bytes(manifest);
}

// OUT/results/*.json -> JUnit, Markdown, JSON, HTML (the reports module owns the formats).
// A report that cannot be written never hides the run's own exit status.
// A report that cannot be written is an infrastructure error, never a warning behind exit
// 0: a pipeline reading the JUnit or the Markdown would find nothing, or last night's.
ExitCode write_reports_hook(const std::string& out, bool* written = nullptr) {
  try {
    report::WrittenReports w = report::write_reports(out);
    if (written != nullptr) *written = true;
    return w.exit_code;
  } catch (const Error& e) {
    log::error(std::string("reports: ") + e.what());
    return ExitCode::kInfra;
  } catch (const std::exception& e) {
    log::error(std::string("reports: ") + e.what());
    return ExitCode::kInfra;
  }
}



// An interrupted run's reports (a CI job's timeout: SIGTERM): the finished problems' results,
// and every planned problem without one as an error "(interrupted)", so the job still
// publishes its JUnit. The exit stays 130 whatever they say, and no history is written (a
// partial run is not a night's result); `--resume` rewrites them whole.
void write_interrupted_reports(const std::string& out, const search::RunSummary& summary) {
  if (summary.results.empty()) {  // finished ones, this run's and those it resumed
    log::info("interrupted before any problem finished: no reports");
    return;
  }
  bool written = false;
  (void)write_reports_hook(out, &written);
  if (written)
    log::info("interrupted: the reports in " + out + " hold the finished problems; the others are errors there "
              "until --resume finishes them");
}

// The history step of a finished run or shard, before its reports are written: each record
// in OUT stamped with its config key, the run compared with the accepted results of the
// history and, a whole run, recorded there (a shard is recorded once merged: its records
// alone would stand for the whole run; it only reads a database that exists, where a whole
// run creates it). The records and run.json are rewritten, so every report, the JUnit and
// the exit code read the comparison, and a history that cannot be read or written (an
// infrastructure error: the results are in OUT, but a nightly that silently stops
// recording loses its trend), from them.
ExitCode apply_history(const RunOptions& o, const std::vector<const config::PlanItem*>& items,
                       const std::string& backend) {
  const std::string db = history_db(o.db);
  try {
    report::RunRecords run = report::load_run_dir(o.out);
    std::map<std::string, std::string> keys;
    for (const config::PlanItem* it : items)
      keys[report::planned_record_key(it->problem)] = config_key_of(it->source, backend);
    for (auto& r : run.results)
      if (auto k = keys.find(report::problem_key(r)); k != keys.end()) r.config_key = k->second;
    std::error_code ec;
    if (!db.empty() && (o.shard.empty() || fs::is_regular_file(db, ec)))
      (void)compare_and_record(run, db, /*record=*/o.shard.empty());
    rewrite_records(o.out, run);
    return run.info.history_errors.empty() ? ExitCode::kPass : ExitCode::kInfra;
  } catch (const Error& e) {
    if (db.empty()) {
      log::warn(std::string("records: ") + e.what());
      return ExitCode::kPass;
    }
    return history_error_in_run_json(o.out, db, e);
  }
}

ExitCode from_status(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM ? ExitCode::kInterrupted : ExitCode::kInfra;
  if (!WIFEXITED(status)) return ExitCode::kInfra;
  switch (WEXITSTATUS(status)) {
    case 0: return ExitCode::kPass;
    case 1: return ExitCode::kGateFailure;
    case 2: return ExitCode::kUsage;
    case 130: return ExitCode::kInterrupted;
    default: return ExitCode::kInfra;
  }
}

// What the lock on OUT says about this run to one that finds OUT taken.
std::string lock_note(const RunOptions& o) {
  std::string s = "kgate run " + o.suite;
  if (!o.shard.empty()) s += " --shard " + o.shard;
  if (!o.gpus.empty()) s += " --gpus " + o.gpus;
  if (o.resume) s += " --resume";
  return s;
}

// `--gpus 0,1,...`: shard k of n runs as a child `kgate run` with CUDA_VISIBLE_DEVICES set
// to the k-th GPU (its worker sees that GPU as device 0), all with one run id; their
// outputs (OUT/gpu-<id>/) are merged into OUT as `kgate merge` does.
ExitCode run_on_gpus(const RunOptions& o) {
  std::vector<std::string> gpus;
  std::string cur;
  for (char c : o.gpus + ",") {
    if (c == ',') {
      if (!cur.empty()) gpus.push_back(cur);
      cur.clear();
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      throw UsageError("--gpus " + o.gpus + ": expected GPU indices like 0,1,2");
    }
  }
  if (gpus.empty()) throw UsageError("--gpus " + o.gpus + ": no GPU index given");
  if (std::set<std::string>(gpus.begin(), gpus.end()).size() != gpus.size())
    throw UsageError("--gpus " + o.gpus + ": a GPU is listed twice");
  if (!o.shard.empty()) throw UsageError("--gpus and --shard cannot be combined (--gpus shards the run itself)");
  config::plan_suite_file(o.suite);  // configuration errors before anything starts
  DirLock lock(o.out, lock_note(o));  // the shards' own directories have their own locks

  std::string run_id = o.run_id;
  if (run_id.empty())
    if (const char* env = std::getenv("KGATE_RUN_ID"); env && *env) run_id = env;
  if (run_id.empty() && o.resume) {
    // Resuming: the children find their run ids in their own journals.
  } else if (run_id.empty()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-g%04x", static_cast<unsigned>(std::random_device{}() & 0xffff));
    run_id = utc_now("%Y%m%dT%H%M%SZ") + buf;
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InfraError("--gpus: cannot find this kgate executable: " + ec.message());
  fs::create_directories(o.out, ec);

  // One correctness seed for the whole run, as one run id: every shard checks its
  // problems from the same root, and the merged report names one seed to reproduce with.
  std::optional<uint64_t> seed = o.seed;
  if (!seed && !o.resume) {
    std::random_device rd;
    seed = (static_cast<uint64_t>(rd()) << 32) | rd();
  }
  const int n = static_cast<int>(gpus.size());
  std::vector<pid_t> pids;
  std::vector<std::string> dirs;
  for (int k = 0; k < n; ++k) {
    const std::string dir = (fs::path(o.out) / ("gpu-" + gpus[k])).string();
    dirs.push_back(dir);
    std::vector<std::string> args = {self.string(), "run", o.suite, "--out", dir, "--shard",
                                     std::to_string(k + 1) + "/" + std::to_string(n)};
    if (!run_id.empty()) args.insert(args.end(), {"--run-id", run_id});
    if (!o.gpu.empty()) args.insert(args.end(), {"--gpu", o.gpu});
    if (!o.backend.empty()) args.insert(args.end(), {"--backend", o.backend});
    if (o.resume) args.push_back("--resume");
    if (o.max_experiments) args.insert(args.end(), {"--max-experiments", std::to_string(*o.max_experiments)});
    if (seed) args.insert(args.end(), {"--seed", std::to_string(*seed)});
    if (!o.db.empty()) args.insert(args.end(), {"--db", o.db});
    // One cache for every shard when the run keeps one; else each shard's OUT/cache.
    if (const std::string given = given_cache_dir(o); !given.empty()) args.insert(args.end(), {"--cache", given});
    log::info("gpu " + gpus[k] + ": kgate run --shard " + std::to_string(k + 1) + "/" + std::to_string(n) +
              " -> " + dir);
    core::SpawnSpec spec;
    spec.argv = args;
    spec.env["CUDA_VISIBLE_DEVICES"] = gpus[k];
    spec.stdin_mode = core::SpawnSpec::Stdin::kNull;
    spec.group = core::SpawnSpec::Group::kInherit;  // the terminal's Ctrl-C reaches every shard
    pid_t pid = -1;
    try {
      pid = core::spawn(spec).pid;
    } catch (const InfraError&) {
      for (pid_t p : pids) {  // no shard runs on without the others
        core::ExitStatus gone;
        core::kill_and_reap(p, 10, &gone);
      }
      throw;
    }
    pids.push_back(pid);
  }
  // SIGINT/SIGTERM reach the children through the terminal's process group or are
  // forwarded; each child finishes or abandons its experiment and exits 130.
  ExitCode code = ExitCode::kPass;
  bool forwarded = false;
  for (int k = 0; k < n; ++k) {
    core::ExitStatus status;
    while (!core::try_wait(pids[k], &status)) {
      if (g_interrupted.load() && !forwarded) {
        for (pid_t p : pids) kill(p, SIGINT);
        forwarded = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ExitCode c = from_status(status.raw);
    log::info("gpu " + gpus[k] + ": shard exited " + std::to_string(to_int(c)));
    code = worse(code, c);
  }
  try {
    // The merged run against the accepted results (the shards compared only when the
    // database existed when they ended), and recorded, before its reports are written.
    const std::string db = history_db(o.db);
    report::WrittenReports w = report::merge_dirs(
        dirs, o.out, [&](report::RunRecords& run) { (void)compare_and_record(run, db, /*record=*/true); });
    code = worse(code, w.exit_code);
    log::info("merged " + std::to_string(n) + " GPU shards into " + o.out);
  } catch (const Error& e) {
    log::error(std::string("--gpus: merging the shards failed: ") + e.what());
    code = worse(code, ExitCode::kInfra);
  }
  return code;
}

// Which of the suite's targets for `backend` this machine is, when the suite has several
// and --gpu was not given: the device a kgate-native worker reports at hello, matched by
// the targets' rules (config::matching_gpus). A device that matches none, or several
// equally, or no device at all is a usage error naming the targets and --gpu.
std::string detect_target(const std::string& suite_path, const config::Plan& plan,
                          const std::set<std::string>& targets, const std::string& backend) {
  std::vector<const config::GpuTarget*> mine;
  std::string list;
  for (const std::string& id : targets)
    for (const auto& it : plan.items)
      if (it.gpu.id == id) {
        mine.push_back(&it.gpu);
        list += (list.empty() ? "" : ", ") + id;
        break;
      }
  const std::string what = suite_path + ": the suite targets several GPUs for backend " + backend + " (" + list + ")";
  protocol::DeviceInfo dev;
  try {
    worker::Worker w(worker::native_worker_spec(backend));
    protocol::HelloParams hp;
    hp.backend = backend;
    const worker::Reply r = w.call("hello", nlohmann::json(hp), 120);
    if (!r.good()) throw InfraError(r.describe());
    dev = r.result.get<protocol::HelloResult>().device;
  } catch (const std::exception& e) {
    throw UsageError(what + " and this machine's device could not be asked which it is (" + e.what() +
                     "); choose one with --gpu");
  }
  const std::string device = dev.name + (dev.cc.empty() ? "" : ", cc " + dev.cc);
  const std::vector<const config::GpuTarget*> m = config::matching_gpus(mine, dev.name, dev.cc);
  const bool tie = m.size() > 1 && m[0]->match_cc.empty() == m[1]->match_cc.empty();
  if (m.empty() || tie) {
    std::string which;
    for (const auto* g : m) which += (which.empty() ? "" : ", ") + g->id;
    throw UsageError(what + "; this machine's device (" + device + ") matches " +
                     (m.empty() ? "none of them" : "several of them equally (" + which + ")") +
                     "; choose one with --gpu");
  }
  log::info("GPU target " + m[0]->id + ": this machine's device (" + device + ") matches it (" +
            m[0]->loc.str() + "), of the suite's " + list);
  return m[0]->id;
}

}  // namespace

ExitCode cmd_run(const RunOptions& o) {
  if (!o.gpus.empty()) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return run_on_gpus(o);
  }
  config::Plan plan = config::plan_suite_file(o.suite);
  DirLock lock(o.out, lock_note(o));  // one run per OUT, for the whole command
  const config::Suite& suite = plan.suite;
  std::string backend = !o.backend.empty() ? o.backend
                        : suite.backend != "auto" ? suite.backend
                                                  : "host";

  // The GPU target this machine plays: --gpu, else the only one the suite has for this
  // backend, else the one whose match rules accept this machine's device.
  std::set<std::string> targets;
  for (const auto& it : plan.items)
    if (it.gpu.backend.empty() || it.gpu.backend == backend) targets.insert(it.gpu.id);
  if (targets.empty() && !plan.items.empty()) {
    // Every target is another backend's: selecting none of them would plan each problem
    // once per target.
    std::set<std::string> theirs;
    for (const auto& it : plan.items) theirs.insert(it.gpu.id + " (" + it.gpu.backend + ")");
    std::string list;
    for (const auto& t : theirs) list += (list.empty() ? "" : ", ") + t;
    throw UsageError(o.suite + ": suite '" + suite.id + "' has no GPU target for backend " + backend +
                     " (its targets: " + list + "); run it with the backend of one of them");
  }
  std::string gpu = o.gpu;
  if (gpu.empty()) {
    if (targets.size() > 1) gpu = detect_target(o.suite, plan, targets, backend);
    else if (!targets.empty()) gpu = *targets.begin();
  } else if (!targets.count(gpu) && !plan.items.empty()) {
    throw UsageError(o.suite + ": --gpu " + gpu + " is not a target of suite '" + suite.id + "'");
  }

  std::vector<search::RunItem> items;
  std::vector<const config::PlanItem*> selected;
  for (const auto& it : plan.items)
    if (gpu.empty() || it.gpu.id == gpu) selected.push_back(&it);
  const std::string hash = config_hash(o.suite, selected);
  report::ShardInfo shard;
  std::vector<std::vector<std::string>> shard_plans;
  if (!o.shard.empty()) {
    // A deterministic partition, the same on every shard runner: by expected cost from the
    // history database when one is given (longest first onto the least-loaded shard), else
    // round-robin over the sorted ids.
    shard = report::parse_shard(o.shard);
    std::vector<std::string> ids;
    for (const auto* it : selected) ids.push_back(it->problem);
    std::map<std::string, double> costs;
    if (const std::string db = history_db(o.db); !db.empty()) {
      std::error_code ec;
      if (!fs::is_regular_file(db, ec)) {
        log::warn("history " + db + ": no such database; sharding round-robin by id");
      } else {
        costs = report::History(db).expected_cost_s(gpu);
        log::info("shard " + o.shard + ": balanced by the past wall time of " + std::to_string(costs.size()) +
                  " problems from " + db);
      }
    }
    // Every shard's plan goes into run.json: `kgate merge` names a missing shard's problems.
    shard_plans = report::partition(ids, shard.count, costs);
    const std::vector<std::string>& mine_ids = shard_plans[static_cast<size_t>(shard.index - 1)];
    std::set<std::string> mine_set(mine_ids.begin(), mine_ids.end());
    std::vector<const config::PlanItem*> mine;
    for (const auto* it : selected)
      if (mine_set.count(it->problem)) mine.push_back(it);
    selected = mine;
    if (selected.empty()) log::warn("shard " + o.shard + " has no problems of suite '" + suite.id + "'");
  }
  for (const config::PlanItem* it : selected) {
    search::RunItem ri;
    ri.level = it->level;
    ri.problem_id = it->problem.substr(it->problem.rfind('/') + 1);
    ri.gpu_target = it->gpu.id;
    ri.problem_file = it->source;
    if (!it->skip_reason.empty()) {
      ri.skip_reason = it->skip_reason;
    } else if (!it->native) {
      ri.skip_reason = "only native problems are searched by this build";
    } else {
      ri.problem = *it->native;
      auto st = it->native->starters.find(backend);
      if (st != it->native->starters.end()) ri.starter = st->second;
      else if (it->backend == backend) ri.starter = it->starter;
      if (ri.starter.empty()) ri.skip_reason = "no starter for the " + backend + " backend";
    }
    if (!ri.skip_reason.empty()) log::warn(it->problem + ": skipped: " + ri.skip_reason);
    items.push_back(std::move(ri));
  }
  if (items.empty() && o.shard.empty()) throw UsageError(o.suite + ": nothing to run on backend " + backend);

  search::SuiteRunOptions so;
  so.out = o.out;
  so.suite = suite;
  so.suite_path = o.suite;
  so.backend = backend;
  so.resume = o.resume;
  so.max_experiments = o.max_experiments;
  so.seed = o.seed;
  so.interrupted = &g_interrupted;
  so.run_id = o.run_id;
  if (so.run_id.empty())
    if (const char* env = std::getenv("KGATE_RUN_ID"); env && *env) so.run_id = env;
  for (char c : so.run_id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw UsageError("run id '" + so.run_id + "': use letters, digits, '-', '_' and '.' only (it names git refs)");
  so.shard = shard;
  if (shard.count > 1) so.shard_plans = shard_plans;
  so.config_hash = hash;
  so.cache_dir = kept_cache_dir(o);
  if (!so.cache_dir.empty()) log::info("compile caches: " + so.cache_dir + " (kept across runs)");
  const std::string cache_dir = so.cache_dir.empty() ? own_cache_dir(o) : so.cache_dir;
  for (const auto* it : selected) so.planned.push_back(it->problem);

  auto factory = [&](const search::RunItem& item, const std::string& workspace, uint64_t seed)
      -> std::unique_ptr<search::CandidateEvaluator> {
    gates::EvalOptions eo;
    eo.backend = backend;
    eo.cache_dir = cache_dir;
    // The search's own guard snapshots and restores the workspace around every agent
    // turn (and rewrites the agent files between turns), so the gate's hash is not used.
    eo.workspace = "";
    // Compiled mode: every slot swaps in the workspace's kernel files (kept kernels compose;
    // the final re-measure times the whole set).
    if (item.problem.kernelbench_mode == "compiled") {
      eo.kernels_dir = (fs::path(workspace) / gates::kKernelsDir).string();
      eo.screen_slack = suite.budget.screen_slack;
    }
    eo.seed = seed;
    eo.interrupted = &g_interrupted;  // a stop abandons the worker call in flight
    eo.thresholds = suite.gates;
    eo.measurement = suite.measurement;
    return std::make_unique<GatesEvaluator>(item.problem, eo, suite.torch_references);
  };

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  search::SuiteRun run(so, std::move(items), factory);
  search::RunSummary summary = run.run();
  if (!summary.interrupted) {
    // The reports come last: they state a history that could not be read or written, as
    // the exit code does.
    summary.code = worse(summary.code, apply_history(o, selected, backend));
    summary.code = worse(summary.code, write_reports_hook(o.out));
  } else {
    write_interrupted_reports(o.out, summary);
  }

  int improved = 0;
  for (const auto& r : summary.results)
    if (r.outcome == report::Outcome::kImproved) ++improved;
  log::info("run " + summary.run_id + ": " + std::to_string(summary.results.size()) +
            " problems finished, " + std::to_string(improved) + " improved; results in " + o.out +
            " (exit " + std::to_string(to_int(summary.code)) + ")");
  return summary.code;
}

}  // namespace kgate::cli

// `kgate run SUITE`: resolve the suite's plan, pick the problems this machine runs, and
// hand them to search::SuiteRun with the real gate evaluator. Exit codes: DESIGN.md §6.
#include <csignal>
#include <cctype>
#include <cstdlib>

#include <atomic>
#include <filesystem>
#include <set>

#include "cli/commands.h"
#include "config/catalog.h"
#include "core/error.h"
#include "core/log.h"
#include "gates/evaluator.h"
#include "gates/static_gate.h"
#include "report/partition.h"
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

// The search's view of the gates, over the real Evaluator (one kgate-native worker).
class GatesEvaluator : public search::CandidateEvaluator {
 public:
  GatesEvaluator(config::NativeProblem problem, gates::EvalOptions options)
      : eval_(std::move(problem), std::move(options)) {}
  gates::CandidateVerdict evaluate(const std::string& candidate, const search::Point& defines,
                                   const std::string& baseline) override {
    return eval_.evaluate(candidate, defines, baseline);
  }
  gates::Timing remeasure(const std::string& candidate, const search::Point& defines,
                          const std::string& baseline) override {
    return eval_.remeasure(candidate, defines, baseline);
  }
  std::string device_name() const override { return eval_.device().name; }
  std::map<std::string, gates::Timing> reference_timings(const std::string& candidate,
                                                         const search::Point& defines) override {
    std::map<std::string, gates::Timing> out;
    if (!eval_.kernelbench()) return out;
    for (const char* mode : {"eager", "compile"}) {
      try {
        out[mode] = eval_.remeasure_reference(candidate, defines, mode);
      } catch (const Error& e) {
        // torch.compile can fail on a machine (no compiler, unsupported op): the report
        // then has no vs-compile number rather than no result.
        log::warn(std::string("vs ") + mode + ": " + e.what());
      }
    }
    return out;
  }

 private:
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
ExitCode write_reports_hook(const std::string& out) {
  try {
    report::WrittenReports w = report::write_reports(out);
    return w.exit_code;
  } catch (const Error& e) {
    log::warn(std::string("reports: ") + e.what());
    return ExitCode::kPass;
  }
}

}  // namespace

ExitCode cmd_run(const RunOptions& o) {
  config::Plan plan = config::plan_suite_file(o.suite);
  const config::Suite& suite = plan.suite;
  std::string backend = !o.backend.empty() ? o.backend
                        : suite.backend != "auto" ? suite.backend
                                                  : "host";

  // The GPU target this machine plays: --gpu, else the only one the suite has for this
  // backend.
  std::set<std::string> targets;
  for (const auto& it : plan.items)
    if (it.gpu.backend.empty() || it.gpu.backend == backend) targets.insert(it.gpu.id);
  std::string gpu = o.gpu;
  if (gpu.empty()) {
    if (targets.size() > 1) {
      std::string list;
      for (const auto& t : targets) list += (list.empty() ? "" : ", ") + t;
      throw UsageError(o.suite + ": the suite targets several GPUs for backend " + backend +
                       " (" + list + "); choose one with --gpu");
    }
    if (!targets.empty()) gpu = *targets.begin();
  } else if (!targets.count(gpu) && !plan.items.empty()) {
    throw UsageError(o.suite + ": --gpu " + gpu + " is not a target of suite '" + suite.id + "'");
  }

  std::vector<search::RunItem> items;
  std::vector<const config::PlanItem*> selected;
  for (const auto& it : plan.items)
    if (gpu.empty() || it.gpu.id == gpu) selected.push_back(&it);
  const std::string hash = config_hash(o.suite, selected);
  report::ShardInfo shard;
  if (!o.shard.empty()) {
    // A deterministic partition by problem id (round-robin over the sorted ids), the same
    // on every shard runner.
    shard = report::parse_shard(o.shard);
    std::vector<std::string> ids;
    for (const auto* it : selected) ids.push_back(it->problem);
    std::vector<std::string> mine_ids = report::shard_problems(ids, shard);
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
  so.config_hash = hash;
  for (const auto* it : selected) so.planned.push_back(it->problem);

  auto factory = [&](const search::RunItem& item, const std::string& /*workspace*/, uint64_t seed)
      -> std::unique_ptr<search::CandidateEvaluator> {
    gates::EvalOptions eo;
    eo.backend = backend;
    eo.cache_dir = (fs::absolute(fs::path(o.out)) / "cache").string();
    // The search's own guard snapshots and restores the workspace around every agent
    // turn (and rewrites the agent files between turns), so the gate's hash is not used.
    eo.workspace = "";
    eo.seed = seed;
    eo.thresholds = suite.gates;
    eo.measurement = suite.measurement;
    return std::make_unique<GatesEvaluator>(item.problem, eo);
  };

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  search::SuiteRun run(so, std::move(items), factory);
  search::RunSummary summary = run.run();
  if (!summary.interrupted) {
    ExitCode reports = write_reports_hook(o.out);
    if (summary.code == ExitCode::kPass) summary.code = reports;
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

// kgate: the orchestrator CLI. Parses the command line into an options struct per
// subcommand and maps escaping errors to the one exit-code enum.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "config/suggest.h"
#include "core/error.h"
#include "core/log.h"
#include "core/subprocess.h"
#include "kgate/build_info.h"

using kgate::ExitCode;

namespace {

// A duration in seconds that must be more than zero (CLI11's PositiveNumber prints its
// whole double range): every option that takes one.
const CLI::Validator kSeconds(
    [](const std::string& v) -> std::string {
      try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used == v.size() && d > 0) return "";
      } catch (const std::exception&) {
      }
      return "'" + v + "' is not a positive number of seconds";
    },
    "SECONDS");

}  // namespace

int main(int argc, char** argv) {
  using namespace kgate::cli;
  CLI::App app{"kgate: CI regression and benchmark harness for agent-optimized GPU kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kgate ") + kgate::build::kVersion + " (" +
                                        kgate::build::kGitSha + ")");
  bool quiet = false, verbose = false;
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
  app.add_flag("-v,--verbose", verbose, "Debug output");
  app.fallthrough();  // -q / -v after the subcommand too: `kgate run SUITE -q`

  RunOptions run;
  auto* c_run = app.add_subcommand("run", "Run a suite: bounded agent search per problem, all gates");
  c_run->add_option("suite", run.suite, "Suite YAML (suites/demo.yaml)")->required();
  c_run->add_option("--out", run.out, "Output directory")->capture_default_str();
  c_run->add_option("--gpu", run.gpu, "GPU target id from configs/gpus (default: detect)");
  c_run->add_option("--backend", run.backend, "host or cuda (default: the suite's)")
      ->check(CLI::IsMember({"host", "cuda"}));
  c_run->add_flag("--resume", run.resume, "Continue an interrupted run in --out");
  c_run->add_option("--max-experiments", run.max_experiments, "Cap experiments per problem (>= 0)")
      ->check(CLI::Range(0, 1000000));
  c_run->add_option("--seed", run.seed, "Run seed (default: random, recorded)");
  c_run->add_option("--shard", run.shard, "Run shard k of n (k/n)");
  c_run->add_option("--gpus", run.gpus,
                    "Run on several GPUs of this host: one shard per GPU (its own kgate-native, "
                    "CUDA_VISIBLE_DEVICES), merged into --out");
  c_run->add_option("--db", run.db,
                    "History database (SQLite; default $KGATE_HISTORY): a whole run records itself "
                    "there, --shard balances problems by their past wall time");
  c_run->add_option("--run-id", run.run_id,
                    "Run id shared by every shard of one run (default: $KGATE_RUN_ID, else generated)");
  c_run->add_option("--cache", run.cache,
                    "Compile caches (torch.compile's models, Triton and native builds) to keep across runs, "
                    "e.g. a nightly runner's (default: $KGATE_CACHE_DIR, else OUT/cache, the run's own)");

  CheckOptions check;
  auto* c_check = app.add_subcommand("check", "PR check: gate changed kernels, A/B against the base");
  c_check->add_option("--base", check.base, "Base ref")->capture_default_str();
  c_check->add_option("--changed", check.changed, "Changed files (default: from git)");
  c_check->add_option("--out", check.out, "Output directory")->capture_default_str();
  c_check->add_option("--suite", check.suite, "Suite YAML for thresholds");
  c_check->add_option("--repo", check.repo, "Repository")->capture_default_str();
  c_check->add_option("--backend", check.backend, "host | cuda (default: the suite's, else host)")
      ->check(CLI::IsMember({"host", "cuda"}));
  c_check->add_option("--seed", check.seed, "Correctness seed (default: random, printed)");
  c_check->add_option("--db", check.db, "History database (SQLite; default $KGATE_HISTORY): record the check");

  BenchOptions bench;
  auto* c_bench = app.add_subcommand("bench", "Run one candidate through the four gates");
  c_bench->add_option("--problem", bench.problem, "Problem: native YAML or KernelBench .py")->required();
  c_bench->add_option("--candidate", bench.candidate,
                      "Candidate source (.cpp host, .cu cuda, .py KernelBench ModelNew)")
      ->required();
  c_bench->add_option("--baseline", bench.baseline,
                      "Baseline source (default: the problem's); KernelBench: eager, compile or "
                      "compile-max-autotune (default eager)");
  c_bench->add_option("--backend", bench.backend, "host or cuda (default: from the extension)")
      ->check(CLI::IsMember({"host", "cuda"}));
  c_bench->add_option("--device", bench.device,
                      "KernelBench: cpu or cuda (default: cuda when this machine has an NVIDIA GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  c_bench->add_option("--json", bench.json_out, "Write the versioned verdict JSON here");
  c_bench->add_option("--gbench-json", bench.gbench_out,
                      "Write the timing samples as Google Benchmark JSON (for compare.py, "
                      "github-action-benchmark)");
  c_bench->add_option("--seed", bench.seed, "Correctness seed (default: random, printed)");
  c_bench->add_option("--gpu", bench.gpu, "GPU target id (default: detect)");
  c_bench->add_option("--timeout", bench.timeout_s, "Per-request deadline in seconds")
      ->capture_default_str()
      ->check(kSeconds);
  c_bench->add_option("--min-time", bench.min_time_s, "Minimum timing per side in seconds")->check(kSeconds);
  c_bench->add_option("--max-time", bench.max_time_s, "Maximum timing per side in seconds")->check(kSeconds);
  c_bench->add_option("--torch", bench.torch_modes,
                      "Native problems: after a pass, also time the candidate against its op's PyTorch form "
                      "in these modes (eager, compile, compile-max-autotune; comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"eager", "compile", "compile-max-autotune"}));

  ReportOptions report;
  auto* c_report = app.add_subcommand("report", "Regenerate reports from result records or history");
  c_report->add_option("--from", report.from, "Run output directory");
  c_report->add_option("--db", report.db, "History database (SQLite)");
  c_report->add_flag("--weekly", report.weekly, "Weekly trend report from --db");
  c_report->add_option("--since", report.since, "Start date (YYYY-MM-DD)");
  c_report->add_option("--out", report.out, "Output directory (default: the --from directory)");

  MergeOptions merge;
  auto* c_merge = app.add_subcommand("merge", "Combine shard outputs into one report");
  c_merge->add_option("dirs", merge.dirs, "Shard output directories")->required();
  c_merge->add_option("--out", merge.out, "Output directory")->capture_default_str();
  c_merge->add_flag("--latest", merge.latest,
                    "Runs of one suite over different problems (nightly shards, sessions of a sweep): each "
                    "problem's record from the run that started last; not recorded in the history");
  c_merge->add_option("--db", merge.db,
                      "History database (SQLite; default $KGATE_HISTORY): compare with the accepted "
                      "results, record the merged run");

  AcceptOptions accept;
  auto* c_accept = app.add_subcommand("accept", "Promote a run's results to the accepted results of the history");
  // One of the two, said once each in --help (a combined "run_dir,--from" prints REQUIRED
  // under both); cmd_accept refuses neither.
  auto* accept_dir = c_accept->add_option("run_dir", accept.from, "Run output directory (or --from DIR)");
  c_accept->add_option("--from", accept.from, "Run output directory (as run_dir)")->excludes(accept_dir);
  c_accept->add_option("--db", accept.db, "History database (SQLite; default $KGATE_HISTORY)");
  c_accept->add_option("--problem", accept.problems, "Only these problems (<level>/<problem> or <problem>)");

  ProfileOptions profile;
  auto* c_profile = app.add_subcommand(
      "profile", "Take a KernelBench problem's torch.compile model apart: Triton kernels, extern calls, time shares");
  c_profile->add_option("problem", profile.problem, "KernelBench problem (.py)")->required();
  c_profile->add_option("--baseline", profile.baseline, "compile or compile-max-autotune")
      ->capture_default_str()->check(CLI::IsMember({"compile", "compile-max-autotune"}));
  c_profile->add_option("--device", profile.device, "cpu or cuda (default: cuda when a GPU is present)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  c_profile->add_option("--json", profile.json_out, "Write the versioned inventory JSON here");
  c_profile->add_option("--kernels-dir", profile.kernels_dir, "Write one editable file per Triton kernel here");
  c_profile->add_option("--timeout", profile.timeout_s, "Deadline for the compile and profile, seconds")
      ->capture_default_str()
      ->check(kSeconds);

  ValidateOptions validate;
  auto* c_validate = app.add_subcommand("validate", "Check config, level, suite and problem files");
  c_validate->add_option("paths", validate.paths,
                         "Files or directories (default: configs suites kernelbench/native)");
  c_validate->add_flag("--plan", validate.plan, "Print what each suite would run");

  DoctorOptions doctor;
  auto* c_doctor = app.add_subcommand("doctor", "Measure the runner: bandwidth, timer, A/A noise");
  c_doctor->add_option("--backend", doctor.backend, "host or cuda")->capture_default_str()
      ->check(CLI::IsMember({"host", "cuda"}));
  c_doctor->add_option("--gpu", doctor.gpu, "GPU target id");
  c_doctor->add_option("--out", doctor.out, "Write the calibration JSON here");

  InitOptions init;
  auto* c_init = app.add_subcommand(
      "init", "Scaffold a kernel repository that uses this kgate: suites, levels, kernels, CI workflows");
  c_init->add_option("dir", init.dir, "Repository directory (created when missing)")->capture_default_str();
  c_init->add_option("--kgate-ref", init.kgate_ref,
                     "kgate tag or commit the CI workflows install (default: v<this version>)");
  c_init->add_option("--kgate-git", init.kgate_git,
                     "git URL the CI workflows install kgate from (default: $KGATE_GIT)");

  // An unknown command is named as such (CLI11 would say "A subcommand is required").
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    if (std::find(names.begin(), names.end(), a) != names.end()) break;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "kgate: unknown command '%s'%s (commands: %s; kgate --help)\n", a.c_str(),
                 kgate::config::did_you_mean(a, names).c_str(), list.c_str());
    return kgate::to_int(ExitCode::kUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // --help and --version are successes; anything else is a usage error (2).
    return rc == 0 ? 0 : kgate::to_int(ExitCode::kUsage);
  }
  kgate::log::configure(kgate::log::detect(quiet, verbose));
  // What a candidate double-forks away from its worker is kgate's to find and kill
  // (core/subprocess.h), never init's.
  kgate::core::adopt_orphans();

  try {
    ExitCode rc = ExitCode::kUsage;
    if (*c_run) rc = cmd_run(run);
    else if (*c_check) rc = cmd_check(check);
    else if (*c_bench) rc = cmd_bench(bench);
    else if (*c_report) rc = cmd_report(report);
    else if (*c_merge) rc = cmd_merge(merge);
    else if (*c_accept) rc = cmd_accept(accept);
    else if (*c_validate) rc = cmd_validate(validate);
    else if (*c_profile) rc = cmd_profile(profile);
    else if (*c_doctor) rc = cmd_doctor(doctor);
    else if (*c_init) rc = cmd_init(init);
    kgate::core::kill_strays(0);  // nothing a worker left behind outlives kgate
    return kgate::to_int(rc);
  } catch (const kgate::Error& e) {
    kgate::log::error(e.what());
    return kgate::to_int(e.code());
  } catch (const std::exception& e) {
    kgate::log::error(std::string("internal error: ") + e.what());
    return kgate::to_int(ExitCode::kInfra);
  }
}

#pragma once
// Options and entry points of every kgate subcommand. main.cpp fills the options from the
// command line (CLI11); each cmd_<name>.cpp implements one command and returns an ExitCode.
// Errors escape as kgate::Error and are mapped to exit codes by main() alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/exit_code.h"

namespace kgate::cli {

struct RunOptions {
  std::string suite;                 // path to suites/*.yaml
  std::string out = "out";
  std::string gpu;                   // gpu target id; "" = detect
  std::string backend;               // "" = suite's; host | cuda
  bool resume = false;
  std::optional<int> max_experiments;
  std::optional<uint64_t> seed;
  std::string shard;                 // "k/n"
  std::string run_id;                // "" = $KGATE_RUN_ID, else generated
  std::string db;                    // history database (else $KGATE_HISTORY): shards by
                                     // expected cost; a whole run records itself there
  std::string gpus;                  // "0,1,...": one child run per GPU, merged into --out
  std::string cache;                 // compile caches kept across runs (else $KGATE_CACHE_DIR,
                                     // else OUT/cache: the run's own)
};
ExitCode cmd_run(const RunOptions& o);

struct CheckOptions {
  std::string base = "origin/main";
  std::vector<std::string> changed;
  std::string out = "out";
  std::string suite;
  std::string repo = ".";
  std::string backend;               // "" = suite's, else host; host | cuda
  std::optional<uint64_t> seed;      // correctness seed (default: random, printed)
  std::string db;                    // history database (else $KGATE_HISTORY): the check is recorded
};
ExitCode cmd_check(const CheckOptions& o);

struct BenchOptions {
  std::string problem;      // native problem YAML (or id)
  std::string candidate;    // .cpp / .cu
  std::string baseline;     // "" = the problem's baseline
  std::string backend;      // "" = from the candidate's extension
  std::string device;       // KernelBench: "cpu" | "cuda" | "" = cuda when a GPU is present
  std::string json_out;
  std::string gbench_out;   // timing samples as Google Benchmark JSON
  std::optional<uint64_t> seed;
  std::string gpu;
  double timeout_s = 120;
  std::optional<double> min_time_s;  // measurement overrides (default: config defaults)
  std::optional<double> max_time_s;
  // Native problems: after a pass, the candidate also timed against its op's PyTorch form
  // in these modes (eager | compile | compile-max-autotune).
  std::vector<std::string> torch_modes;
};
ExitCode cmd_bench(const BenchOptions& o);

struct ProfileOptions {
  std::string problem;        // KernelBench .py
  std::string baseline = "compile";  // compile | compile-max-autotune
  std::string device;         // cpu | cuda | "" = cuda when a GPU is present
  std::string json_out;       // versioned inventory JSON
  std::string kernels_dir;    // write one editable file per Triton kernel here
  double timeout_s = 600;
};
ExitCode cmd_profile(const ProfileOptions& o);

// An NVIDIA GPU is present when the driver lists one (kgate itself never touches CUDA).
bool have_nvidia_gpu();

struct ReportOptions {
  std::string from;
  std::string db;
  bool weekly = false;
  std::string since;
  std::string out;  // "" = the --from directory
};
ExitCode cmd_report(const ReportOptions& o);

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out = "out";
  std::string db;  // history database (else $KGATE_HISTORY): compare with accepted, record
  bool latest = false;  // runs of one suite over different problems: each problem's newest record
};
ExitCode cmd_merge(const MergeOptions& o);

struct AcceptOptions {
  std::string from;                   // run output directory (positional or --from)
  std::string db;                     // history database (else $KGATE_HISTORY)
  std::vector<std::string> problems;  // "<level>/<problem>" or "<problem>"; empty = all
};
ExitCode cmd_accept(const AcceptOptions& o);

struct ValidateOptions {
  std::vector<std::string> paths;  // files or directories; empty = configs suites kernelbench/native
  bool plan = false;               // print what each suite would run
};
ExitCode cmd_validate(const ValidateOptions& o);

struct DoctorOptions {
  std::string backend = "host";
  std::string gpu;
  std::string out;
};
ExitCode cmd_doctor(const DoctorOptions& o);

struct InitOptions {
  std::string dir = ".";      // the repository to scaffold (created when missing)
  std::string kgate_ref;      // the kgate the CI installs: a tag or commit ("" = v<version>)
  std::string kgate_git;      // where from ("" = $KGATE_GIT, else the templates' placeholder)
};
ExitCode cmd_init(const InitOptions& o);

}  // namespace kgate::cli

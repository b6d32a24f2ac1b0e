#pragma once
// Typed configuration: what configs/, suites/ and kernelbench/native/ YAML files become.
// Loading and validation live in config/loader.h; every struct remembers its source file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ops/dtype.h"
#include "ops/op.h"

namespace kgate::config {

struct SourceLoc {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  std::string str() const;  // "file:line:col"
};

// configs/gpus/*.yaml
struct GpuTarget {
  std::string id;            // "h200"
  std::string name;          // "NVIDIA H200"
  std::string backend;       // "cuda" | "host"
  std::string match_name;    // regex on the device name reported by the worker
  std::string match_cc;      // "9.0"; "" = any
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  double peak_bandwidth_gbps = 0;
  std::map<std::string, double> peak_tflops;  // dtype name -> dense TFLOP/s
  SourceLoc loc;
};

// configs/levels/*.yaml
struct LevelConfig {
  std::string id;     // "level1", "native"
  std::string title;
  std::string kind;   // "kernelbench" | "native"
  std::string root;   // directory, resolved against the file's directory
  std::string select = "all";           // "all" | "list" | "glob"
  std::vector<std::string> problems;    // select == list
  std::string glob;                     // select == glob
  std::string baseline = "reference";   // native: reference | starter; kernelbench: eager | compile | compile-max-autotune
  std::string solutions;  // kernelbench: directory of starting candidates (<name>.py, a ModelNew)
  // kernelbench: where a search starts. "compiled": torch.compile's own model, its Triton
  // kernels the candidates (dispatch-aware search); "solutions": the level's hand-written
  // ModelNew starters only (a problem without one is skipped); "auto" (the default): the
  // problem's solution when the level has one for it, else compiled.
  std::string starter;
  // Non-empty: the level cannot be used here (why), e.g. its root names an environment
  // variable that is not set. Suites that select it fail at plan time with this reason.
  std::string unavailable;
  SourceLoc loc;
};

// kernelbench/native/*.yaml
struct NativeProblem {
  std::string id;
  std::string title;
  std::string op;
  ops::Dims bench;                       // the shape timed by the performance gate (GPU)
  ops::Dims host_bench;                  // the shape timed on the host backend (empty = bench)
  std::vector<ops::Dims> sweep;          // shapes checked by the correctness gate
  std::vector<DType> dtypes;             // every dtype checked
  DType bench_dtype = DType::kF32;       // the dtype timed
  std::map<DType, ops::Tolerance> tolerance;  // overrides of the op defaults
  std::map<std::string, std::string> starters;  // backend -> candidate file (absolute)
  std::map<std::string, std::string> baselines; // backend -> baseline file; missing = reference
  std::string reference_source;          // user float64 reference (absolute), "" = built-in
  SourceLoc loc;
  SourceLoc bench_loc, host_bench_loc;   // where 'bench' and 'host_bench' are written
  // A KernelBench problem (a PyTorch `Model` in a .py file, run by the Python worker) has
  // kind "kernelbench", the file in `path` and no op; its baseline is a mode of the
  // reference model: eager | compile | compile-max-autotune.
  std::string kind = "native";
  std::string path;
  std::string kernelbench_baseline = "eager";
  // "model": candidates are ModelNew files; "compiled": the baseline is torch.compile's model
  // and a candidate is that model with some of its Inductor Triton kernels replaced.
  std::string kernelbench_mode = "model";
  double atol = 1e-2;  // kernelbench: correctness tolerance (KernelBench's float32 default)
  double rtol = 1e-2;

  // Compiled mode against torch.compile's default model: that model is the search's
  // baseline, so the final re-measure is also the vs-compile number (never timed twice).
  bool baseline_is_default_compile() const {
    return kind == "kernelbench" && kernelbench_mode == "compiled" && kernelbench_baseline == "compile";
  }
};

// A KernelBench problem from its file: id "<level>/<name>" (or the file stem).
NativeProblem kernelbench_problem(const std::string& id, const std::string& py_path,
                                  const std::string& baseline_mode);

struct GateThresholds {
  int seeds = 3;
  double rho = 10.0;           // float64 oracle: err(candidate) <= rho * max(err(baseline), floor)
  double rho_floor_ulps = 4;   // floor of the baseline error, in units of the dtype's epsilon
  double keep_threshold = 1.01;        // minimum speedup (lower CI bound) to keep
  double regression_threshold = 1.03;  // slowdown that counts as a regression
  double gamma = 1.03;                 // model-level: candidate <= gamma * baseline
  double confidence = 0.95;
  double roofline_slack = 0.8;  // reject times below slack * (min_bytes / bandwidth)
};

struct Budget {
  int max_experiments = 20;        // per problem
  double problem_wall_s = 600;     // per problem
  double suite_wall_s = 3600;      // per suite
  double problem_floor_s = 30;     // Amdahl split never gives a problem less
  int max_consecutive_reverts = 5;
  double target_speedup = 2.0;
  double roofline_stop = 0.9;      // move on at >= 90% of roofline
  // Compiled mode on a GPU: an edited kernel timed more than this fraction slower than the
  // copy it replaces, alone on its call-site arguments, is reverted before the model-level
  // gates run (0: every edit goes through every gate).
  double screen_slack = 0.05;
};

struct AgentConfig {
  std::string kind = "tuner";  // "tuner" | "template" | "command" | "http" | "reference"
  std::string command;         // command agent
  double timeout_s = 600;
  std::string url;             // http agent
  std::string model;
  std::string api_key_env;     // name of the environment variable holding the key
  uint64_t seed = 0;           // tuner restarts; 0 = from the run seed
};

struct MeasurementConfig {
  double min_time_s = 0.5;
  double max_time_s = 5.0;
  int min_samples = 30;
  double target_rse = 0.005;
  bool flush_l2 = true;
};

struct FailOn {
  bool correctness = true;  // always true; a suite cannot turn it off
  bool performance = false;
};

// suites/*.yaml
struct Suite {
  std::string id;
  std::string title;
  std::vector<std::string> levels;    // level ids
  std::vector<std::string> problems;  // extra problem ids ("native/softmax_4096")
  std::vector<std::string> gpus;      // gpu target ids
  std::string backend = "auto";       // "auto" | "host" | "cuda"
  // The reference columns (eager | compile | compile-max-autotune: vs eager, vs
  // torch.compile, vs max-autotune) each problem's final best is timed against.
  // Native problems: against its op's PyTorch form in these modes; none when not given.
  // KernelBench problems: against their model, by default in eager, torch.compile (unless
  // that is the search's baseline, already timed) and, dispatch-aware, max-autotune; a
  // suite that gives the key narrows them to the modes it lists ([] = none).
  // nullopt: the key is not given.
  std::optional<std::vector<std::string>> torch_references;
  Budget budget;
  AgentConfig agent;
  GateThresholds gates;
  MeasurementConfig measurement;
  FailOn fail_on;
  SourceLoc loc;
};

}  // namespace kgate::config

#pragma once
// One result record per problem per run (docs/reports.md), versioned JSON written by
// `kgate run` / `kgate check` into OUT/results/<problem>.json. Reporters read only these.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/verdict.h"

namespace kgate::report {

enum class Outcome { kImproved, kMatched, kFallback, kRegressed, kError, kSkipped };
NLOHMANN_JSON_SERIALIZE_ENUM(Outcome, {{Outcome::kImproved, "improved"},
                                       {Outcome::kMatched, "matched"},
                                       {Outcome::kFallback, "fallback"},
                                       {Outcome::kRegressed, "regressed"},
                                       {Outcome::kError, "error"},
                                       {Outcome::kSkipped, "skipped"}})

struct Environment {
  std::string gpu;       // device name as reported by the worker
  std::string gpu_target;  // configs/gpus id it matched
  std::string backend;
  std::string driver;
  std::string cuda;
  std::string torch;
  std::string triton;
  std::string kgate_version;
  std::string git_sha;
  std::string host;

  // The worker's account of what ran (its hello); an empty value keeps what is there.
  void set_software(const std::string& driver_, const std::string& cuda_,
                    const std::string& torch_, const std::string& triton_) {
    if (!driver_.empty()) driver = driver_;
    if (!cuda_.empty()) cuda = cuda_;
    if (!torch_.empty()) torch = torch_;
    if (!triton_.empty()) triton = triton_;
  }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Environment, gpu, gpu_target, backend, driver, cuda,
                                                torch, triton, kgate_version, git_sha, host)

// This result against the accepted result of its (problem, GPU, config) in the history
// (report/regression.h, compare_with_accepted): filled by every command that reads records
// with a history (`kgate run`, `merge`, `report --from` with --db or $KGATE_HISTORY).
struct AcceptedComparison {
  std::string run_id;        // the run the accepted result came from
  std::string accepted_at;   // ISO 8601 UTC
  std::string content_hash;  // the accepted kernel's content hash
  double accepted_us = 0;    // the accepted best time
  double accepted_speedup = 0;
  double ratio = 1;          // accepted_us / best_us: < 1 is slower than accepted
  double ratio_lo = 1;       // its confidence interval (from both records' speedup CIs)
  double ratio_hi = 1;
  double p_value = 1;
  bool regressed = false;    // a significant drop: the record's outcome is `regressed` for it
  Outcome prior_outcome = Outcome::kMatched;  // the outcome before (restored on a re-compare)
  std::string prior_reason;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AcceptedComparison, run_id, accepted_at,
                                                content_hash, accepted_us, accepted_speedup,
                                                ratio, ratio_lo, ratio_hi, p_value, regressed,
                                                prior_outcome, prior_reason)

// ProblemResult::error_kind of a problem whose own inputs are unusable.
inline constexpr const char* kProblemErrorKind = "problem";

struct ProblemResult {
  int version = 1;
  std::string run_id;
  std::string suite;
  std::string level;
  std::string problem;
  std::string baseline_kind;       // "reference" | "starter" | "eager" | "compile" | "history"
  double baseline_us = 0;
  double best_us = 0;
  double speedup = 1;              // baseline / best, from the final interleaved re-measure
  double speedup_lo = 1;
  double speedup_hi = 1;
  double eager_us = 0;             // 0 when not measured
  double compile_us = 0;
  double compile_max_autotune_us = 0;  // torch.compile(mode="max-autotune-no-cudagraphs")
  double pct_roofline = 0;
  Outcome outcome = Outcome::kSkipped;
  std::string reason;              // for fallback / error / regressed / skipped
  // outcome error: "problem" when the problem's own inputs are unusable (the worker rejects
  // its file, its starter or base does not compile): a usage error, exit 2, JUnit
  // ProblemError, which no rerun fixes; "" for infrastructure (the reason says which)
  std::string error_kind;
  // kgate check: the base version passed the static, correctness and oracle gates when the
  // change failed one of them (checked then only), so the change is a correctness regression
  // rather than a gate failure of a kernel that was failing already
  bool base_correct = false;
  int experiments = 0;
  int kept = 0;
  std::string best_commit;
  std::string baseline_commit;
  std::string best_candidate;      // path of the best candidate source in the workspace
  std::string best_hash;           // content hash (git blob id) of the best candidate source
  std::vector<gates::GateResult> gates;  // the best candidate's gate table (or the failing one)
  double wall_s = 0;
  uint64_t seed = 0;
  Environment env;
  // KernelBench in dispatch-aware mode ("compiled": torch.compile's model is the baseline,
  // its Triton kernels the candidates); "" otherwise.
  std::string mode;
  // compiled mode, outcome fallback: "no-triton" | "extern-dominated" | "at-roofline" | "gate-failed" |
  // "not-faster" (the reason says more)
  std::string fallback_kind;
  double triton_share = 0;   // compiled: fraction of the compiled model's GPU time in Triton kernels
  int triton_kernels = 0;    // compiled: Triton kernels in the compiled model
  int extern_calls = 0;      // compiled: cuBLAS/cuDNN/ATen calls left alone
  int kernels_searched = 0;
  int kernels_kept = 0;
  int templates_kept = 0;    // compiled: kept kernels that are one of kgate's templates
  // compiled: each experiment's wall time after the baseline (agent turn and gates), s, and
  // how many of them the kernel-level screen reverted before the model-level gates
  std::vector<double> experiment_wall_s;
  int experiments_screened = 0;
  // What the accepted results of the history are keyed by besides problem and GPU: a hash
  // of what makes two results' times comparable (the problem file, the backend). "" = unknown.
  std::string config_key;
  std::optional<AcceptedComparison> vs_accepted;
  // A re-measure against the reference model that gave no time ("eager", "compile",
  // "compile-max-autotune"; "references" when none of them ran) -> why: the report says
  // why its column is empty.
  std::map<std::string, std::string> references_missing;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProblemResult, version, run_id, suite, level,
                                                problem, baseline_kind, baseline_us, best_us,
                                                speedup, speedup_lo, speedup_hi, eager_us,
                                                compile_us, pct_roofline, outcome, reason, error_kind, base_correct,
                                                experiments, kept, best_commit, baseline_commit,
                                                best_candidate, best_hash, gates, wall_s, seed, env,
                                                compile_max_autotune_us, mode, fallback_kind,
                                                triton_share, triton_kernels, extern_calls,
                                                kernels_searched, kernels_kept, templates_kept, config_key,
                                                vs_accepted, experiment_wall_s, experiments_screened,
                                                references_missing)

}  // namespace kgate::report

#pragma once
// What the gate cascade says about one candidate (docs/gates.md). Plain data: gates fill
// it, the search keeps or reverts on it, reporters format it.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// std::optional support for nlohmann (null <-> nullopt). Declared before any type below
// uses it, or the generated to_json/from_json would not see it.
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) {
    if (o) j = *o; else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null()) o.reset(); else o = j.get<T>();
  }
};
}  // namespace nlohmann

namespace kgate::gates {

// Compiled mode (dispatch-aware KernelBench): the workspace folder holding one file per
// Inductor Triton kernel of torch.compile's model.
inline constexpr const char* kKernelsDir = "kernels";


enum class Gate { kStatic, kCorrectness, kOracle, kPerformance };
NLOHMANN_JSON_SERIALIZE_ENUM(Gate, {{Gate::kStatic, "static"},
                                    {Gate::kCorrectness, "correctness"},
                                    {Gate::kOracle, "oracle"},
                                    {Gate::kPerformance, "performance"}})

enum class GateStatus { kPass, kFail, kError, kSkipped };
NLOHMANN_JSON_SERIALIZE_ENUM(GateStatus, {{GateStatus::kPass, "pass"},
                                          {GateStatus::kFail, "fail"},
                                          {GateStatus::kError, "error"},
                                          {GateStatus::kSkipped, "skipped"}})

// Why a worker-side failure happened, when it did.
// kCannotJudge: no case could be judged on this machine (a GPU-sized case whose float64
// truth fits nowhere): the gate is an error of kgate's reach, not a verdict on the code.
enum class Fault { kNone, kTimeout, kCrash, kWorkerError, kCannotJudge };
NLOHMANN_JSON_SERIALIZE_ENUM(Fault, {{Fault::kNone, "none"},
                                     {Fault::kTimeout, "timeout"},
                                     {Fault::kCrash, "crash"},
                                     {Fault::kWorkerError, "worker_error"},
                                     {Fault::kCannotJudge, "cannot_judge"}})

// One row of a gate's table: a case (seed/shape/dtype/dist) and its numbers.
struct CaseRow {
  std::string case_id;
  bool pass = true;
  std::string detail;     // "max_abs_err 3.1e-2 > atol 1e-3 at [17] (got 0.5, want 0.53)"
  double error = 0;       // the number compared
  double limit = 0;       // what it was compared against
  bool not_judged = false;  // the worker could not judge the case (detail says why)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CaseRow, case_id, pass, detail, error, limit, not_judged)

struct GateResult {
  Gate gate = Gate::kStatic;
  GateStatus status = GateStatus::kSkipped;
  std::string reason;     // one line a person can act on; "" when passed
  std::string failed_case;
  Fault fault = Fault::kNone;
  double elapsed_s = 0;
  std::vector<CaseRow> rows;
  // How many rows (cases; a static gate's checks; the performance verdict) the gate
  // judged: records keep the failing rows alone (slim_gates), so a passing gate with no
  // rows left still says what it ran on. -1: not counted (a verdict not yet recorded).
  int judged = -1;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GateResult, gate, status, reason, failed_case,
                                                fault, elapsed_s, rows, judged)

// How every report and log names a problem kgate cannot judge on the machine at hand.
inline constexpr const char* kCannotJudgeProblem = "kgate cannot judge this problem";

// Compiled mode, a pair experiment: a kernel file an experiment may change with its
// candidate (the inventory's partner of the candidate's kernel: its every write is read
// only by the candidate's kernel), and the copy of it as kept (what the baseline slot runs).
struct PartnerFile {
  std::string workspace_path;
  std::string best_path;
};

// Whether one of these gates could judge no case (Fault::kCannotJudge).
inline bool not_judged(const std::vector<GateResult>& gates) {
  for (const auto& g : gates)
    if (g.fault == Fault::kCannotJudge) return true;
  return false;
}

// Speed of a candidate against its baseline (from interleaved samples).
enum class SpeedVerdict { kFaster, kSame, kSlower, kUnknown };
NLOHMANN_JSON_SERIALIZE_ENUM(SpeedVerdict, {{SpeedVerdict::kFaster, "faster"},
                                            {SpeedVerdict::kSame, "same"},
                                            {SpeedVerdict::kSlower, "slower"},
                                            {SpeedVerdict::kUnknown, "unknown"}})

struct Timing {
  double baseline_us = 0;   // median
  double candidate_us = 0;  // median
  double speedup = 0;       // baseline / candidate (ratio of medians)
  double speedup_lo = 0;    // confidence interval of the speedup
  double speedup_hi = 0;
  double p_value = 1;       // Mann-Whitney U, two-sided
  SpeedVerdict verdict = SpeedVerdict::kUnknown;
  double roofline_floor_us = 0;  // min_bytes / bandwidth
  double pct_roofline = 0;       // floor / candidate
  int samples = 0;               // per side
  std::string timer;
  std::vector<double> baseline_samples_us;
  std::vector<double> candidate_samples_us;
  // What was measured, when it is not plain (compiled mode: which kernel files the worker
  // swapped in, and which it found equal to its own Inductor choice).
  std::string note;
  std::vector<std::string> swapped;    // compiled mode: kernels replaced in the timed model
  std::vector<std::string> unchanged;  // compiled mode: kernel files equal to Inductor's own
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Timing, baseline_us, candidate_us, speedup,
                                                speedup_lo, speedup_hi, p_value, verdict,
                                                roofline_floor_us, pct_roofline, samples, timer,
                                                baseline_samples_us, candidate_samples_us, note,
                                                swapped, unchanged)

struct CandidateVerdict {
  int version = 1;
  std::string problem;
  std::string candidate;   // path
  std::string backend;
  uint64_t seed = 0;       // reproduce with --seed
  bool passed = false;     // every gate passed
  std::optional<Gate> failed_gate;
  std::vector<GateResult> gates;
  std::optional<Timing> timing;
  double wall_s = 0;
  // The problem's reference output cannot tell a wrong candidate from a right one
  // (KernelBench: constant, seed-invariant or near-zero output): never counted as improved.
  std::string degenerate;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CandidateVerdict, version, problem, candidate,
                                                backend, seed, passed, failed_gate, gates, timing,
                                                wall_s, degenerate)

}  // namespace kgate::gates

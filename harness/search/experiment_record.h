#pragma once
// One experiment as the journal holds it (and the TSV, the commit trailers and the
// agents' history are derived from). Plain data.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/verdict_result.h"
#include "search/tune_space.h"
#include "verdict/verdict.h"

namespace kgate::search {

enum class ExperimentVerdict {
  kBaseline,    // experiment 0: the starter, measured in this run
  kKeep,        // every gate passed and the speedup cleared the keep threshold
  kRevert,      // a gate failed or it was not faster: reset to the best
  kViolation,   // the agent changed a file other than the candidate
  kAgentError,  // the agent failed (exit status, unusable reply)
  kTimeout,     // the agent was killed at its timeout
};
NLOHMANN_JSON_SERIALIZE_ENUM(ExperimentVerdict, {{ExperimentVerdict::kBaseline, "baseline"},
                                                 {ExperimentVerdict::kKeep, "keep"},
                                                 {ExperimentVerdict::kRevert, "revert"},
                                                 {ExperimentVerdict::kViolation, "violation"},
                                                 {ExperimentVerdict::kAgentError, "agent_error"},
                                                 {ExperimentVerdict::kTimeout, "timeout"}})

struct ExperimentRecord {
  std::string problem;
  int n = 0;                     // 0 = baseline
  std::string commit;
  ExperimentVerdict verdict = ExperimentVerdict::kRevert;
  bool passed = false;           // every gate passed
  std::string failed_gate;       // "" when none failed (or not evaluated)
  std::string failed_case;
  std::string reason;            // one line: why it was reverted / failed
  double latency_us = 0;         // candidate median (0 when not timed)
  double compared_us = 0;        // what it was timed against (the best so far) median
  double speedup = 0;            // vs the best so far, with its interval
  double speedup_lo = 0;
  double speedup_hi = 0;
  double speedup_vs_starter = 0; // chained through the best's own ratio
  double pct_roofline = 0;
  double roofline_floor_us = 0;
  std::string description;
  Point point;                   // tunable values passed as -D (tuner)
  std::string best_commit;       // the best after this experiment
  double wall_s = 0;
  std::vector<std::string> violations;
  std::vector<gates::GateResult> gates;  // failing rows only
  std::string kernel;            // compiled mode: the Inductor Triton kernel this experiment edits
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExperimentRecord, problem, n, commit, verdict,
                                                passed, failed_gate, failed_case, reason,
                                                latency_us, compared_us, speedup, speedup_lo,
                                                speedup_hi, speedup_vs_starter, pct_roofline,
                                                roofline_floor_us, description, point,
                                                best_commit, wall_s, violations, gates, kernel)

// Where an experiment keeps a timing's numbers (report::take_timing): compared_us is the
// best so far it was timed against, latency_us the candidate.
report::TimingFields timing_fields(ExperimentRecord& r);

std::string to_string(ExperimentVerdict v);

// results.tsv: a version comment line, a header, one row per experiment.
std::string results_tsv_header();
std::string results_tsv_row(const ExperimentRecord& r);
std::string results_tsv(const std::vector<ExperimentRecord>& records);

// Commit message: "experiment N: description", the reason, then Kgate-* trailers.
std::string commit_message(const ExperimentRecord& r, const std::string& run_id);

}  // namespace kgate::search

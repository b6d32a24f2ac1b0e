#pragma once
// Gate 4: interleaved candidate/baseline samples from the worker's `time`, judged by the
// statistics in stats/compare.h, plus two sanity rules that no speedup can excuse: work
// left pending outside the timed stream, and a time below the memory roofline floor
// ("does less work than the problem requires").
//
// The gate passes when the candidate is not slower. Keeping it as an improvement (lower
// confidence bound of the speedup above keep_threshold) is the search's decision, made on
// the Timing returned here.
#include <optional>
#include <string>

#include "config/types.h"
#include "verdict/verdict.h"
#include "protocol/messages.h"

namespace kgate::gates {

struct PerformanceJudgement {
  GateResult gate;  // gate == kPerformance; rows: speed, roofline
  Timing timing;
};

// `case_id` names the timed shape ("R=1024,C=4096/f32"). `bandwidth_gbps` is the roofline
// ceiling (0: no roofline rule). `min_samples` below which the verdict is `unknown`.
PerformanceJudgement judge_performance(const protocol::TimeResult& r, const std::string& case_id,
                                       const config::GateThresholds& t, double bandwidth_gbps,
                                       int min_samples);

// Whether a failed performance gate failed only because the candidate measured slower
// than its baseline: correct work, no rule broken (a timed-call audit, pending side-stream
// work, a time under the roofline floor, a failure while timed are not slowdowns).
bool is_slowdown(const GateResult& g);

// Compiled mode's kernel-level screen: a failed performance gate (a slowdown, so
// is_slowdown reads it as one) when the edited kernel timed more than `slack` slower than
// the copy the baseline runs; nullopt when it was not screened, is within the slack, or the
// copy runs under 20 us or was timed fewer than 5 times (too short, too few to tell).
// The model-level gates are then not run: the one kernel that differs ran slower alone.
std::optional<GateResult> judge_screen(const protocol::KernelScreen& s, double slack);

// Whether a failed case is the screen's ("screen NAME").
bool is_screen_case(const std::string& failed_case);

// Two interleaved runs of the same slots on the same inputs as one: samples appended per
// slot, counts summed, notes joined, side-stream work if either saw it, the first non-zero
// return code. The timer is the second's when they differ ("cuda_graph+cuda_event" is not a
// timer; samples are per call either way).
protocol::TimeResult merge_time_results(const protocol::TimeResult& a, const protocol::TimeResult& b);

// The extension of an inconclusive timing: min_time_s four times longer (within
// max_time_s). The performance gate asks for it once when the first run's verdict is
// `unknown` and judges both runs' samples together.
protocol::TimeParams extended_time_params(const protocol::TimeParams& p);

}  // namespace kgate::gates

#pragma once
// Gate 4: interleaved candidate/baseline samples from the worker's `time`, judged by the
// statistics in stats/compare.h, plus two sanity rules that no speedup can excuse: work
// left pending outside the timed stream, and a time below the memory roofline floor
// ("does less work than the problem requires").
//
// The gate passes when the candidate is not slower. Keeping it as an improvement (lower
// confidence bound of the speedup above keep_threshold) is the search's decision, made on
// the Timing returned here.
#include <string>

#include "config/types.h"
#include "gates/verdict.h"
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

}  // namespace kgate::gates

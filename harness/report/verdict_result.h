#pragma once
// The one copy of a gate cascade's timing into a result record, for every record that
// states one: a search's experiment (search/experiment_record.h), a run's final re-measure
// and a PR check's result (ProblemResult). A record names where it keeps the numbers
// (its timing_fields); the copy itself is written here only.
#include "report/record.h"
#include "verdict/verdict.h"

namespace kgate::report {

// Where a record keeps a timing's numbers, under its own names.
struct TimingFields {
  double& baseline_us;   // what the candidate was timed against (median)
  double& candidate_us;  // the candidate (median)
  double& speedup;       // baseline / candidate, with its interval
  double& speedup_lo;
  double& speedup_hi;
  double& pct_roofline;
  double* roofline_floor_us = nullptr;  // where the record keeps it
};

// A problem's result: baseline_us, best_us, the speedup and its interval, pct_roofline.
TimingFields timing_fields(ProblemResult& r);

void take_timing(TimingFields to, const gates::Timing& t);
// The verdict's timing when it has one (true); the record untouched when it has none.
bool take_timing(TimingFields to, const gates::CandidateVerdict& v);

}  // namespace kgate::report

#include "report/verdict_result.h"

namespace kgate::report {

TimingFields timing_fields(ProblemResult& r) {
  return {r.baseline_us, r.best_us, r.speedup, r.speedup_lo, r.speedup_hi, r.pct_roofline};
}

void take_timing(TimingFields to, const gates::Timing& t) {
  to.baseline_us = t.baseline_us;
  to.candidate_us = t.candidate_us;
  to.speedup = t.speedup;
  to.speedup_lo = t.speedup_lo;
  to.speedup_hi = t.speedup_hi;
  to.pct_roofline = t.pct_roofline;
  if (to.roofline_floor_us) *to.roofline_floor_us = t.roofline_floor_us;
}

bool take_timing(TimingFields to, const gates::CandidateVerdict& v) {
  if (!v.timing) return false;
  take_timing(to, *v.timing);
  return true;
}

}  // namespace kgate::report

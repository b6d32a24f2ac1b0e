#include "report/regression.h"

#include <cstdio>

namespace kgate::report {

RegressionCheck classify_regression(const gates::CandidateVerdict& v, const RegressionPolicy& p) {
  RegressionCheck c;
  for (const auto& g : v.gates) {
    if (g.gate == gates::Gate::kPerformance) continue;
    if (g.status != gates::GateStatus::kFail && g.status != gates::GateStatus::kError) continue;
    c.kind = RegressionKind::kCorrectness;
    c.fails_pipeline = true;
    c.message = "accepted kernel fails the " + nlohmann::json(g.gate).get<std::string>() +
                " gate on re-verification";
    if (!g.failed_case.empty()) c.message += " at case " + g.failed_case;
    if (!g.reason.empty()) c.message += ": " + g.reason;
    return c;
  }
  if (!v.timing) return c;
  const gates::Timing& t = *v.timing;
  const double limit = 1.0 / p.threshold;
  if (t.speedup_hi > 0 && t.speedup_hi < limit && t.p_value < p.alpha) {
    c.kind = RegressionKind::kPerformance;
    c.fails_pipeline = p.fail_on_performance;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%.3fx the accepted kernel's speed [%.3f, %.3f], p = %.2g (threshold %.3fx slower)",
                  t.speedup, t.speedup_lo, t.speedup_hi, t.p_value, p.threshold);
    c.message = buf;
  }
  return c;
}

}  // namespace kgate::report

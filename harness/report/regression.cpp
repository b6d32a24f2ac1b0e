#include "report/regression.h"

#include <cmath>
#include <cstdio>

#include "report/summary.h"

namespace kgate::report {

gates::SpeedPolicy policy_of(const RegressionPolicy& p) {
  gates::SpeedPolicy s;
  s.regression_threshold = p.threshold;
  return s;
}

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
  if (policy_of(p).regressed(t, p.alpha)) {
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

namespace {

// Half-width of a ratio's interval in log space (0 when the interval is missing or degenerate).
double log_half_width(double lo, double hi) {
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) return 0;
  return (std::log(hi) - std::log(lo)) / 2;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

gates::Timing speed_vs_accepted(const ProblemResult& r, const AcceptedKernel& a) {
  gates::Timing t;
  t.baseline_us = a.best_us;
  t.candidate_us = r.best_us;
  if (!(a.best_us > 0) || !(r.best_us > 0)) return t;
  t.speedup = a.best_us / r.best_us;
  const double ha = log_half_width(a.speedup_lo, a.speedup_hi);
  const double hr = log_half_width(r.speedup_lo, r.speedup_hi);
  const double h = std::sqrt(ha * ha + hr * hr);
  t.speedup_lo = t.speedup * std::exp(-h);
  t.speedup_hi = t.speedup * std::exp(h);
  const double effect = std::fabs(std::log(t.speedup));
  constexpr double kZ975 = 1.959963984540054;  // the intervals are 95 % ones
  if (h > 0) t.p_value = std::erfc(effect / (h / kZ975) / std::sqrt(2.0));
  else t.p_value = effect > 1e-12 ? 0 : 1;
  t.verdict = t.speedup_hi < 1 && t.p_value < 0.05   ? gates::SpeedVerdict::kSlower
              : t.speedup_lo > 1 && t.p_value < 0.05 ? gates::SpeedVerdict::kFaster
                                                     : gates::SpeedVerdict::kSame;
  return t;
}

int compare_with_accepted(RunRecords& run, const History& history, double alpha) {
  if (run.info.kind != RunKind::kRun && run.info.kind != RunKind::kCheck) return 0;
  const RegressionPolicy policy{run.info.regression_threshold, alpha, run.info.fail_on_performance};
  int regressions = 0;
  for (ProblemResult& r : run.results) {
    if (r.vs_accepted && r.vs_accepted->regressed) {
      r.outcome = r.vs_accepted->prior_outcome;
      r.reason = r.vs_accepted->prior_reason;
    }
    r.vs_accepted.reset();
    // Only what ships correct and measured is compared; a result that already regressed
    // against its own baseline keeps that verdict.
    if (!is_correct(r) || r.outcome == Outcome::kRegressed || !(r.best_us > 0)) continue;
    auto accepted = history.accepted(problem_key(r), gpu_key(r, run.info), r.config_key);
    if (!accepted || !(accepted->best_us > 0)) continue;
    gates::CandidateVerdict v;
    v.timing = speed_vs_accepted(r, *accepted);
    const gates::Timing& t = *v.timing;
    AcceptedComparison c;
    c.run_id = accepted->run_id;
    c.accepted_at = accepted->accepted_at;
    c.content_hash = accepted->content_hash;
    c.accepted_us = accepted->best_us;
    c.accepted_speedup = accepted->speedup;
    c.ratio = t.speedup;
    c.ratio_lo = t.speedup_lo;
    c.ratio_hi = t.speedup_hi;
    c.p_value = t.p_value;
    RegressionCheck check = classify_regression(v, policy);
    if (check.kind == RegressionKind::kPerformance) {
      c.regressed = true;
      c.prior_outcome = r.outcome;
      c.prior_reason = r.reason;
      r.outcome = Outcome::kRegressed;
      r.reason = "slower than the accepted result of run " + accepted->run_id + " (" +
                 fmt("%.2f", accepted->best_us) + " -> " + fmt("%.2f", r.best_us) + " us): " +
                 check.message;
      ++regressions;
    }
    r.vs_accepted = c;
  }
  return regressions;
}

}  // namespace kgate::report

#include "gates/performance_gate.h"

#include <algorithm>
#include <cstdio>

#include "gates/correctness_gate.h"
#include "stats/compare.h"

namespace kgate::gates {
namespace {
// The performance gate's one slowdown failure (is_slowdown reads it back).
constexpr const char* kSlowerThanTheBaseline = "slower than the baseline";
// The failed case of the kernel-level screen: this, then the kernel's name.
constexpr std::string_view kScreenCase = "screen ";
// A kernel launch timed alone with events is not told apart from its neighbours below this
// (the worker times such calls in CUDA-graph batches): shorter kernels are not screened.
constexpr double kScreenMinUs = 20;
constexpr int kScreenMinSamples = 5;
}  // namespace
namespace {

std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g us", v);
  return buf;
}

}  // namespace

PerformanceJudgement judge_performance(const protocol::TimeResult& r, const std::string& case_id,
                                       const config::GateThresholds& t, double bandwidth_gbps,
                                       int min_samples) {
  PerformanceJudgement out;
  GateResult& g = out.gate;
  g.gate = Gate::kPerformance;
  g.status = GateStatus::kPass;

  auto find = [&](const char* slot) -> const std::vector<double>* {
    auto it = r.samples_us.find(slot);
    return it == r.samples_us.end() || it->second.empty() ? nullptr : &it->second;
  };
  const auto* cand = find("candidate");
  const auto* base = find("baseline");
  if (!cand || !base) {
    g.status = GateStatus::kError;
    g.fault = Fault::kWorkerError;
    g.failed_case = case_id;
    g.reason = std::string("performance: case ") + case_id + ": the worker returned no samples for the " +
               (!cand ? "candidate" : "baseline");
    // the worker's own account of why (an exception while timing, e.g. out of memory)
    if (!r.timer_note.empty()) g.reason += " (" + r.timer_note + ")";
    return out;
  }

  stats::CompareOptions o;
  o.keep_threshold = t.keep_threshold;
  o.regression_threshold = t.regression_threshold;
  o.confidence = t.confidence;
  o.min_samples = std::max(2, std::min(min_samples, 10));
  stats::Comparison c = stats::compare(*base, *cand, o);
  out.timing = stats::to_timing(c, *base, *cand, r.timer, r.min_bytes, bandwidth_gbps);
  Timing& tm = out.timing;

  char ci[128];
  std::snprintf(ci, sizeof ci, "speedup %.3fx [%.3f, %.3f], p=%.2g", tm.speedup, tm.speedup_lo,
                tm.speedup_hi, tm.p_value);
  CaseRow speed;
  speed.case_id = case_id;
  speed.error = tm.candidate_us;
  speed.limit = tm.baseline_us;
  speed.pass = tm.verdict != SpeedVerdict::kSlower;
  speed.detail = "candidate " + us(tm.candidate_us) + " vs baseline " + us(tm.baseline_us) + ": " +
                 ci + ", " + nlohmann::json(tm.verdict).get<std::string>();
  g.rows.push_back(speed);

  CaseRow roof;
  roof.case_id = case_id + " roofline";
  roof.error = tm.candidate_us;
  roof.limit = t.roofline_slack * tm.roofline_floor_us;
  if (tm.roofline_floor_us > 0) {
    roof.pass = tm.candidate_us >= roof.limit;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100 * tm.pct_roofline);
    roof.detail = "floor " + us(tm.roofline_floor_us) + " (" + fmt_num(r.min_bytes) + " bytes at " +
                  fmt_num(bandwidth_gbps) + " GB/s); candidate at " + pct + " of roofline";
    // The baseline does the work the problem requires: when it too runs below the floor,
    // the bandwidth behind the floor was measured low (a copy timed under load on a shared
    // host read half the bandwidth, and correct candidates as fast as the reference were
    // rejected as doing less work), so the floor cannot judge this timing.
    if (!roof.pass && tm.baseline_us > 0 && tm.baseline_us < roof.limit) {
      roof.pass = true;
      roof.detail += "; not applied: the baseline itself ran at " + us(tm.baseline_us) + ", below " +
                     fmt_num(t.roofline_slack) + " x the floor (the copy bandwidth was measured low)";
    }
  } else {
    roof.detail = "no roofline floor (bandwidth or byte count unknown)";
  }
  g.rows.push_back(roof);

  auto fail = [&](const std::string& why) {
    g.status = GateStatus::kFail;
    g.failed_case = case_id;
    g.reason = "performance: case " + case_id + ": " + why;
  };
  if (!r.audit_failure.empty()) {
    fail("timed calls: " + r.audit_failure);
  } else if (r.return_code != 0) {
    const bool baseline = r.failed_slot == "baseline";
    const std::string what = "failed while it was timed (" +
                             (r.timer_note.empty() ? "return code " + std::to_string(r.return_code)
                                                   : r.timer_note) + ")";
    if (baseline) {
      g.status = GateStatus::kError;
      g.fault = Fault::kWorkerError;
      g.failed_case = case_id;
      g.reason = "performance: case " + case_id + ": the baseline " + what;
    } else {
      fail("the candidate " + what);
    }
  } else if (r.side_stream_work) {
    fail("work was still pending outside the timed stream at the end of a sample "
         "(launches on other streams escape the timing)");
  } else if (!roof.pass) {
    fail("does less work than the problem requires: candidate median " + us(tm.candidate_us) +
         " < " + fmt_num(t.roofline_slack) + " x roofline floor " + us(tm.roofline_floor_us) +
         " (" + fmt_num(r.min_bytes) + " bytes at " + fmt_num(bandwidth_gbps) + " GB/s)");
  } else if (tm.verdict == SpeedVerdict::kSlower) {
    fail(kSlowerThanTheBaseline + (": candidate " + us(tm.candidate_us) + " vs baseline " +
                                   us(tm.baseline_us) + ", " + ci));
  }
  return out;
}

std::optional<GateResult> judge_screen(const protocol::KernelScreen& s, double slack) {
  if (slack <= 0 || s.kernel.empty() || s.samples < kScreenMinSamples || !(s.best_us >= kScreenMinUs) ||
      !(s.candidate_us > 0))
    return std::nullopt;
  const double ratio = s.candidate_us / s.best_us;
  if (!(ratio > 1 + slack)) return std::nullopt;
  GateResult g;
  g.gate = Gate::kPerformance;
  g.status = GateStatus::kFail;
  g.failed_case = std::string(kScreenCase) + s.kernel;
  const std::string against = s.against == "kept" ? "the kept copy" : "Inductor's kernel";
  const std::string detail = "kernel " + s.kernel + " " + us(s.candidate_us) + " vs " + us(s.best_us) + " (" +
                             against + "): " + fmt_num(ratio) + "x its time, medians of " +
                             std::to_string(s.samples) + " launches each on the trial call's arguments";
  CaseRow row;
  row.case_id = g.failed_case;
  row.pass = false;
  row.error = s.candidate_us;
  row.limit = (1 + slack) * s.best_us;
  row.detail = detail;
  g.rows.push_back(row);
  g.reason = "performance: case " + g.failed_case + ": " + kSlowerThanTheBaseline + ": " + detail +
             " (more than " + fmt_num(slack) + " over; the kernel-level screen: the model-level gates were not run)";
  return g;
}

bool is_screen_case(const std::string& failed_case) { return failed_case.starts_with(kScreenCase); }

bool is_slowdown(const GateResult& g) {
  return g.gate == Gate::kPerformance && g.status == GateStatus::kFail &&
         g.reason.find(std::string(": ") + kSlowerThanTheBaseline + ": ") != std::string::npos;
}

protocol::TimeResult merge_time_results(const protocol::TimeResult& a, const protocol::TimeResult& b) {
  protocol::TimeResult m = a;
  for (const auto& [slot, v] : b.samples_us) {
    auto& dst = m.samples_us[slot];
    dst.insert(dst.end(), v.begin(), v.end());
  }
  m.timer = b.timer.empty() ? a.timer : b.timer;
  m.batch = b.batch;
  m.dropped_throttled = a.dropped_throttled + b.dropped_throttled;
  m.clock_mhz.insert(m.clock_mhz.end(), b.clock_mhz.begin(), b.clock_mhz.end());
  m.side_stream_work = a.side_stream_work || b.side_stream_work;
  if (m.min_bytes <= 0) m.min_bytes = b.min_bytes;
  if (m.flops <= 0) m.flops = b.flops;
  m.elapsed_s = a.elapsed_s + b.elapsed_s;
  m.stop_reason = b.stop_reason;
  if (m.return_code == 0) {
    m.return_code = b.return_code;
    m.failed_slot = b.failed_slot;
  }
  auto join = [](std::string& dst, const std::string& more) {
    if (!more.empty() && more != dst) dst = dst.empty() ? more : dst + "; " + more;
  };
  join(m.timer_note, b.timer_note);
  m.audited = a.audited + b.audited;
  if (m.audit_failure.empty()) m.audit_failure = b.audit_failure;
  join(m.audit_note, b.audit_note);
  return m;
}

protocol::TimeParams extended_time_params(const protocol::TimeParams& p) {
  protocol::TimeParams e = p;
  e.min_time_s = std::min(4 * p.min_time_s, p.max_time_s);
  return e;
}

}  // namespace kgate::gates

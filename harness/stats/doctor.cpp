#include "stats/doctor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include <unistd.h>

#include "core/error.h"
#include "kgate/build_info.h"
#include "stats/compare.h"
#include "stats/descriptive.h"

namespace kgate::stats {

namespace {

std::string fmt(const char* f, double a = 0, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

double finite_or(double v, double fallback) { return std::isfinite(v) ? v : fallback; }

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<double> all_samples(const protocol::TimeResult& r) {
  std::vector<double> v;
  for (const auto& [slot, s] : r.samples_us) v.insert(v.end(), s.begin(), s.end());
  return v;
}

const std::vector<double>& slot_samples(const protocol::TimeResult& r, const std::string& slot) {
  static const std::vector<double> kEmpty;
  const auto it = r.samples_us.find(slot);
  return it == r.samples_us.end() ? kEmpty : it->second;
}

}  // namespace

std::string shape_text(const std::map<std::string, int64_t>& dims) {
  std::string s;
  for (const auto& [name, v] : dims) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(v);
  return s;
}

std::map<std::string, int64_t> probe_dims(int64_t elements) {
  // Rows of at most 4096 columns; the column count absorbs the rounding so R*C stays
  // within one 32-column step of the request.
  elements = std::max<int64_t>(elements, 32);
  const int64_t rows = (elements + 4095) / 4096;
  const int64_t cols = std::clamp<int64_t>((elements / rows + 16) / 32 * 32, 32, 4096);
  return {{"R", rows}, {"C", cols}};
}

Calibration run_doctor(DoctorProbe& probe, const DoctorPlan& plan, const DoctorLog& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  Calibration cal;
  cal.created_utc = utc_now();
  cal.kgate_version = std::string(build::kVersion) + " (" + build::kGitSha + ")";
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) cal.host = host;
  cal.backend = plan.backend;
  cal.gpu_id = plan.gpu_id;

  // 1. The device, and the copy bandwidth the worker measures at hello.
  const protocol::HelloResult hello = probe.hello();
  cal.device_name = hello.device.name;
  cal.cc = hello.device.cc;
  cal.driver = hello.device.driver;
  cal.copy_bandwidth_gbps = finite_or(hello.device.copy_bandwidth_gbps, 0);
  say("device: " + cal.device_name + " (" + hello.backend + "), copy bandwidth " +
      fmt("%.1f GB/s", cal.copy_bandwidth_gbps));

  protocol::TimeParams base;
  base.dtype = "f32";
  base.seed = plan.seed;
  base.min_time_s = plan.min_time_s;
  base.max_time_s = plan.max_time_s;
  base.min_samples = plan.min_samples;
  base.max_samples = plan.max_samples;
  base.target_rse = plan.target_rse;
  base.slots = {"baseline", "candidate"};

  // 2. Timer overhead: the smallest time the timer reports for a call that does nothing.
  if (!plan.empty_source.empty()) {
    probe.prepare(plan.probe_op, plan.empty_source);
    protocol::TimeParams p = base;
    p.dims = probe_dims(32);
    p.flush_l2 = false;
    p.min_time_s = std::min(plan.min_time_s, 0.2);
    const protocol::TimeResult r = probe.time(p);
    cal.timer_overhead_us = finite_or(median(all_samples(r)), 0);
    cal.timer = r.timer;
    say(fmt("timer overhead: %.3f us", cal.timer_overhead_us) + " (" + r.timer + ")");
  }

  // 3. A/A noise per size class. A short probe run measures the time of a shape; the
  // probe op is linear in R*C once the device is full, so the shape is rescaled toward the
  // target and measured again until it lands within 15 % (below that, a latency-bound
  // shape barely grows with R and takes a few more rounds).
  std::string prepared_op;
  auto use = [&](const std::string& op, const std::string& source) {
    if (prepared_op == op) return;
    probe.prepare(op, source);
    prepared_op = op;
  };
  protocol::TimeParams quick = base;
  quick.min_time_s = 0.05;
  quick.max_time_s = 0.5;
  quick.min_samples = 10;
  quick.max_samples = 200;
  quick.target_rse = 0.02;
  auto measure = [&](const std::map<std::string, int64_t>& dims, const std::string& dtype) {
    protocol::TimeParams p = quick;
    p.dims = dims;
    p.dtype = dtype;
    return median(slot_samples(probe.time(p), "baseline"));
  };
  auto close_to = [](double t, double target) {
    return std::isfinite(t) && t > 0 && std::fabs(std::log(t / target)) < std::log(1.15);
  };
  constexpr int kRounds = 12;
  int64_t elements = 4096;
  for (SizeClass sc : plan.classes) {
    const double target = target_us(sc);
    use(plan.probe_op, plan.probe_source);
    double t = measure(probe_dims(elements), "f32");
    for (int round = 0; round < kRounds && std::isfinite(t) && t > 0 && !close_to(t, target); ++round) {
      // Subtract the fixed overhead so small shapes do not overshoot.
      const double floor_us = std::min(cal.timer_overhead_us, 0.5 * t);
      const double scale = std::max(target - floor_us, 0.1 * target) / std::max(t - floor_us, 1e-3);
      const int64_t next = std::clamp<int64_t>(
          static_cast<int64_t>(std::llround(static_cast<double>(elements) * scale)), 32,
          plan.max_elements);
      if (next == elements) break;
      elements = next;
      t = measure(probe_dims(elements), "f32");
    }
    std::string op = plan.probe_op, dtype = "f32";
    std::map<std::string, int64_t> dims = probe_dims(elements);
    // A class the memory-bound probe cannot reach within max_elements (5 ms of it would
    // need gigabytes per tensor): the compute-bound cuBLAS matmul instead, n^3 scaled.
    if (!close_to(t, target) && t < target && elements >= plan.max_elements &&
        !plan.matmul_source.empty()) {
      use("matmul", plan.matmul_source);
      auto cube = [](int64_t n) { return std::map<std::string, int64_t>{{"M", n}, {"N", n}, {"K", n}}; };
      int64_t n = 4096;
      double tm = measure(cube(n), plan.matmul_dtype);
      for (int round = 0; round < kRounds && std::isfinite(tm) && tm > 0 && !close_to(tm, target); ++round) {
        const int64_t next = std::clamp<int64_t>(
            std::llround(static_cast<double>(n) * std::cbrt(target / tm) / 256.0) * 256, 256,
            plan.max_matmul_side);
        if (next == n) break;
        n = next;
        tm = measure(cube(n), plan.matmul_dtype);
      }
      op = "matmul";
      dtype = plan.matmul_dtype;
      dims = cube(n);
    }
    NoiseClass n;
    n.size_class = sc;
    n.target_us = target;
    n.op = op;
    n.dims = dims;
    n.dtype = dtype;
    protocol::TimeParams p = base;
    p.dims = n.dims;
    p.dtype = dtype;
    const protocol::TimeResult r = probe.time(p);
    const std::vector<double>& a = slot_samples(r, "baseline");
    const std::vector<double>& b = slot_samples(r, "candidate");
    if (a.empty() || b.empty())
      throw InfraError(std::string("kgate doctor: the worker returned no samples for the ") +
                       to_string(sc) + " A/A run (" + op + " " + shape_text(dims) + " " + dtype +
                       "; " + std::to_string(r.dropped_throttled) + " dropped as throttled" +
                       (r.timer_note.empty() ? "" : "; " + r.timer_note) + ")");
    const Comparison c = compare(a, b);
    n.median_us = finite_or(c.baseline_median_us, 0);
    n.samples = std::min(c.baseline_n, c.candidate_n);
    const Summary sa = summarize(a), sb = summarize(b);
    n.robust_cv = finite_or(0.5 * (sa.robust_cv + sb.robust_cv), 0);
    n.median_rse = finite_or(sa.median_rse, 0);
    n.aa_speedup = finite_or(c.speedup, 1);
    n.aa_speedup_lo = finite_or(c.speedup_lo, 1);
    n.aa_speedup_hi = finite_or(c.speedup_hi, 1);
    n.aa_spread = std::max(n.aa_speedup_hi - 1.0, 1.0 - n.aa_speedup_lo);
    n.aa_p_value = finite_or(c.p_value, 1);
    n.aa_verdict = c.verdict;
    if (cal.timer.empty()) cal.timer = r.timer;
    say(std::string("A/A ") + to_string(sc) + ": " + n.op + " " + shape_text(n.dims) + " " + n.dtype +
        fmt(" median %.2f us, cv %.2f%%, spread %.2f%% (n=%.0f)", n.median_us,
            100 * n.robust_cv, 100 * n.aa_spread, n.samples) +
        ", verdict " + nlohmann::json(n.aa_verdict).get<std::string>());
    cal.noise.push_back(n);
  }

  // 4. Matmul rate of the cuBLAS baseline (cuda only).
  if (!plan.matmul_source.empty()) {
    use("matmul", plan.matmul_source);
    protocol::TimeParams p = base;
    p.dims = plan.matmul_dims;
    p.dtype = plan.matmul_dtype;
    p.min_samples = 20;
    const protocol::TimeResult r = probe.time(p);
    const double t = median(slot_samples(r, "baseline"));
    if (r.flops > 0 && t > 0 && std::isfinite(t)) {
      cal.matmul_tflops = r.flops / (t * 1e-6) / 1e12;
      cal.matmul_dtype = plan.matmul_dtype;
      cal.matmul_dims = plan.matmul_dims;
      say("matmul " + plan.matmul_dtype + fmt(": %.1f us, %.1f TFLOP/s", t, cal.matmul_tflops));
    }
  }
  return cal;
}

std::string format_calibration(const Calibration& c) {
  std::ostringstream o;
  o << "kgate doctor: " << c.device_name << " (" << c.backend << ")";
  if (!c.gpu_id.empty()) o << ", target " << c.gpu_id;
  o << "\n";
  o << fmt("  copy bandwidth   %10.1f GB/s\n", c.copy_bandwidth_gbps);
  o << fmt("  timer overhead   %10.3f us", c.timer_overhead_us) << "  (" << c.timer << ")\n";
  if (c.matmul_tflops > 0)
    o << fmt("  matmul peak      %10.1f TFLOP/s", c.matmul_tflops) << " (" << c.matmul_dtype
      << ", cuBLAS)\n";
  o << "\n  class   shape                              median_us    cv%    A/A speedup [CI]           "
       "spread%  verdict\n";
  for (const NoiseClass& n : c.noise) {
    const std::string shape = n.op + " " + shape_text(n.dims) + " " + n.dtype;
    char line[320];
    std::snprintf(line, sizeof line, "  %-6s  %-32s  %10.2f  %5.2f    %.4f [%.4f, %.4f]   %6.2f   %s\n",
                  to_string(n.size_class), shape.c_str(), n.median_us, 100 * n.robust_cv, n.aa_speedup,
                  n.aa_speedup_lo, n.aa_speedup_hi, 100 * n.aa_spread,
                  nlohmann::json(n.aa_verdict).get<std::string>().c_str());
    o << line;
  }
  return o.str();
}

}  // namespace kgate::stats

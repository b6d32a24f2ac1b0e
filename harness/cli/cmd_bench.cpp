// `kgate bench`: one candidate through the four gates against its problem's baseline,
// printed as a table per gate and, with --json, the versioned CandidateVerdict.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/commands.h"
#include "config/loader.h"
#include "core/error.h"
#include "core/log.h"
#include "core/number_format.h"
#include "gates/evaluator.h"
#include "ops/op.h"
#include "stats/gbench_json.h"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;
using gates::CandidateVerdict;
using gates::GateResult;
using gates::GateStatus;

std::string backend_of(const std::string& candidate) {
  std::string ext = fs::path(candidate).extension().string();
  if (ext == ".cu") return "cuda";
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c") return "host";
  throw UsageError(candidate + ": error: cannot tell the backend from extension '" + ext +
                   "' (.cpp host, .cu cuda); pass --backend");
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string status_word(GateStatus s) { return nlohmann::json(s).get<std::string>(); }
std::string gate_word(gates::Gate g) { return nlohmann::json(g).get<std::string>(); }

// Pads to width w (the case ids are ASCII).
std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

void print_gate(const GateResult& g) {
  std::printf("\n%-12s %-7s %.2f s\n", gate_word(g.gate).c_str(), status_word(g.status).c_str(), g.elapsed_s);
  if (g.status == GateStatus::kSkipped) {
    std::printf("  %s\n", g.reason.c_str());
    return;
  }
  std::size_t w = 20;
  for (const auto& r : g.rows) w = std::max(w, r.case_id.size() + 2);
  switch (g.gate) {
    case gates::Gate::kStatic:
      for (const auto& r : g.rows)
        std::printf("  %s%-5s %s\n", pad(r.case_id, w).c_str(), r.pass ? "pass" : "FAIL", r.detail.c_str());
      break;
    case gates::Gate::kCorrectness:
    case gates::Gate::kOracle: {
      const char* err = g.gate == gates::Gate::kOracle ? "rel_l2_err" : "max_abs_err";
      const char* lim = g.gate == gates::Gate::kOracle ? "bound" : "tolerance";
      std::printf("  %s%-12s %-12s %s\n", pad("case", w).c_str(), err, lim, "result");
      // A case the worker could not judge has no numbers: it says so, never "pass".
      for (const auto& r : g.rows)
        std::printf("  %s%-12s %-12s %s\n", pad(r.case_id, w).c_str(), r.not_judged ? "-" : num(r.error).c_str(),
                    r.not_judged ? "-" : num(r.limit).c_str(),
                    r.not_judged ? "not judged" : r.pass ? "pass" : ("FAIL: " + r.detail).c_str());
      break;
    }
    case gates::Gate::kPerformance:
      for (const auto& r : g.rows)
        std::printf("  %s%-5s %s\n", pad(r.case_id, w).c_str(), r.pass ? "pass" : "FAIL", r.detail.c_str());
      break;
  }
  if (g.status != GateStatus::kPass && !g.reason.empty()) std::printf("  -> %s\n", g.reason.c_str());
}

void print_timing(const gates::Timing& t) {
  std::printf("\ntiming (%s, %d samples per side)\n", t.timer.c_str(), t.samples);
  std::printf("  baseline %.4g us   candidate %.4g us   speedup %.3fx [%.3f, %.3f]  p=%.2g  %s",
              t.baseline_us, t.candidate_us, t.speedup, t.speedup_lo, t.speedup_hi, t.p_value,
              nlohmann::json(t.verdict).get<std::string>().c_str());
  if (t.roofline_floor_us > 0) std::printf("   %.0f%% of roofline", 100 * t.pct_roofline);
  std::printf("\n");
}

bool is_kernelbench(const std::string& problem) { return fs::path(problem).extension() == ".py"; }

}  // namespace

bool have_nvidia_gpu() {
  std::error_code ec;
  fs::directory_iterator it("/proc/driver/nvidia/gpus", ec);
  return !ec && it != fs::directory_iterator();
}

ExitCode cmd_bench(const BenchOptions& o) {
  if (o.min_time_s && o.max_time_s && *o.min_time_s > *o.max_time_s)
    throw UsageError("kgate bench: --min-time " + core::fmt_num(*o.min_time_s) + " s is more than --max-time " +
                     core::fmt_num(*o.max_time_s) + " s");
  std::error_code ec;
  if (!fs::is_regular_file(o.candidate, ec)) throw UsageError(o.candidate + ": error: no such candidate file");
  const bool kb = is_kernelbench(o.problem);
  if (kb) {
    if (!fs::is_regular_file(o.problem, ec)) throw UsageError(o.problem + ": error: no such problem file");
    // A KernelBench candidate is a Python file with a ModelNew: anything else is the wrong
    // file, not a candidate that fails the static gate.
    if (fs::path(o.candidate).extension() != ".py")
      throw UsageError(o.candidate + ": error: a KernelBench problem's candidate is a .py file with a class ModelNew");
    if (!o.baseline.empty() && o.baseline != "eager" && o.baseline != "compile" &&
        o.baseline != "compile-max-autotune")
      throw UsageError("--baseline " + o.baseline +
                       ": a KernelBench problem's baseline is eager, compile or compile-max-autotune");
    if (!o.torch_modes.empty())
      throw UsageError("--torch is for native problems: a KernelBench problem's reference is its model "
                       "(--baseline eager, compile or compile-max-autotune)");
  } else {
    if (!o.device.empty()) throw UsageError("--device is for KernelBench problems (.py); use --backend");
    if (!o.baseline.empty() && !fs::is_regular_file(o.baseline, ec))
      throw UsageError(o.baseline + ": error: no such baseline file");
  }
  std::string backend;
  if (kb) {
    std::string device = !o.device.empty() ? o.device : !o.backend.empty() ? (o.backend == "host" ? "cpu" : "cuda")
                         : have_nvidia_gpu()                              ? "cuda"
                                                                          : "cpu";
    backend = device == "cpu" ? "host" : "cuda";
  } else {
    backend = o.backend.empty() ? backend_of(o.candidate) : o.backend;
  }
  config::NativeProblem problem = kb ? config::kernelbench_problem("", o.problem, o.baseline.empty() ? "eager" : o.baseline)
                                     : config::load_native_problem(o.problem);
  if (!kb && backend == "host" && problem.host_bench.empty())
    if (const ops::Op* op = ops::find_op(problem.op))
      if (std::string why = config::host_memory_problem(problem, *op, problem.bench, /*timed=*/true); !why.empty())
        throw UsageError(problem.bench_loc.str() + ": error: 'bench' " + why +
                         " (the host backend times bench: this problem has no host_bench)");

  gates::EvalOptions opt;
  opt.backend = backend;
  opt.seed = o.seed ? *o.seed : std::random_device{}() % 1000000000ULL;
  opt.request_timeout_s = o.timeout_s;
  if (o.min_time_s) opt.measurement.min_time_s = *o.min_time_s;
  if (o.max_time_s) opt.measurement.max_time_s = *o.max_time_s;
  opt.measurement.max_time_s = std::max(opt.measurement.max_time_s, opt.measurement.min_time_s);

  if (kb)
    std::printf("kgate bench: KernelBench problem %s (baseline %s), candidate %s, device %s\n",
                problem.id.c_str(), problem.kernelbench_baseline.c_str(), o.candidate.c_str(),
                backend == "host" ? "cpu (its '# kgate:small' sizes, where the file has that line)" : "cuda");
  else
    std::printf("kgate bench: problem %s (%s), candidate %s, backend %s\n", problem.id.c_str(),
                problem.op.c_str(), o.candidate.c_str(), backend.c_str());
  std::printf("seed %llu (reproduce with --seed %llu)\n", static_cast<unsigned long long>(opt.seed),
              static_cast<unsigned long long>(opt.seed));
  std::fflush(stdout);

  std::size_t printed = 0;
  opt.on_gate = [&printed](const GateResult& g) {
    print_gate(g);
    std::fflush(stdout);
    ++printed;
  };
  gates::Evaluator ev(problem, opt);
  const auto& dev = ev.device();
  std::printf("device: %s, copy bandwidth %.1f GB/s\n", dev.name.c_str(), dev.copy_bandwidth_gbps);
  std::fflush(stdout);

  CandidateVerdict v = ev.evaluate(o.candidate, {}, kb ? std::string() : o.baseline);
  if (!v.degenerate.empty())
    std::printf("warning: the problem is degenerate (%s): a wrong candidate can pass its correctness "
                "gate; it never counts as improved\n",
                v.degenerate.c_str());
  // The gates that ran were printed as they ended; the ones skipped after a failure now.
  for (std::size_t i = printed; i < v.gates.size(); ++i) print_gate(v.gates[i]);
  if (v.timing) print_timing(*v.timing);

  // Against the op's PyTorch form (informational: the verdict is the gates').
  nlohmann::json torch_json = nlohmann::json::object();
  if (v.passed && !o.torch_modes.empty()) {
    std::map<std::string, gates::ReferenceTiming> refs;
    try {
      refs = ev.torch_references(o.candidate, {}, o.torch_modes);
    } catch (const Error& e) {
      // The machine's trouble (no Python worker, a library that would not build again) is
      // said, and the gates' verdict stands.
      std::printf("\nvs PyTorch: not measured: %s\n", e.what());
      torch_json["error"] = e.what();
    }
    if (torch_json.contains("error")) {
      // said above
    } else if (refs.empty())
      std::printf("\nvs PyTorch: op '%s' has no PyTorch form (a problem with its own reference)\n", problem.op.c_str());
    else
      std::printf("\nvs PyTorch (the op's form at the timed shape, interleaved in the Python worker)\n");
    for (const auto& mode : o.torch_modes) {
      auto it = refs.find(mode);
      if (it == refs.end()) continue;
      const gates::Timing& t = it->second.timing;
      if (!it->second.error.empty()) {
        std::printf("  %-21s not measured: %s\n", mode.c_str(), it->second.error.c_str());
        torch_json[mode] = {{"error", it->second.error}};
        continue;
      }
      std::printf("  %-21s PyTorch %.4g us   candidate %.4g us   %.3fx [%.3f, %.3f]\n", mode.c_str(), t.baseline_us,
                  t.candidate_us, t.speedup, t.speedup_lo, t.speedup_hi);
      torch_json[mode] = {{"torch_us", t.baseline_us}, {"candidate_us", t.candidate_us}, {"speedup", t.speedup},
                          {"speedup_lo", t.speedup_lo}, {"speedup_hi", t.speedup_hi}};
    }
  }

  if (!o.json_out.empty()) {
    std::ofstream out(o.json_out);
    if (!out) throw InfraError("cannot write " + o.json_out);
    nlohmann::json j = v;
    if (!torch_json.empty()) j["torch_references"] = torch_json;
    out << j.dump(2) << "\n";
    if (!out) throw InfraError("writing " + o.json_out + " failed");
  }

  if (!o.gbench_out.empty()) {
    if (!v.timing) {
      log::warn("--gbench-json: no timing to write (the " + gate_word(*v.failed_gate) + " gate failed first)");
    } else {
      stats::GbenchContext ctx = stats::host_context("kgate bench");
      ctx.extra["kgate_problem"] = problem.id;
      ctx.extra["kgate_backend"] = backend;
      ctx.extra["kgate_device"] = dev.name;
      ctx.extra["kgate_timer"] = v.timing->timer;
      ctx.extra["kgate_seed"] = std::to_string(opt.seed);
      const std::string base = problem.id + "/" + (kb ? problem.kernelbench_baseline : std::string("baseline"));
      std::vector<stats::GbenchSeries> series(2);
      series[0].name = base;
      series[0].samples_us = v.timing->baseline_samples_us;
      series[1].name = problem.id + "/candidate";
      series[1].samples_us = v.timing->candidate_samples_us;
      stats::write_gbench_json(o.gbench_out, stats::to_gbench_json(ctx, series));
    }
  }

  if (v.passed) {
    std::printf("\nverdict: PASS (every gate passed, %.1f s)\n", v.wall_s);
    return ExitCode::kPass;
  }
  std::string reason;
  for (const auto& g : v.gates)
    if (v.failed_gate && g.gate == *v.failed_gate) reason = g.reason;
  if (gates::not_judged(v.gates)) {
    // No verdict on the candidate: this machine could judge none of its cases.
    std::printf("\nverdict: NOT JUDGED (%s on this machine) at the %s gate: %s\n", gates::kCannotJudgeProblem,
                gate_word(*v.failed_gate).c_str(), reason.c_str());
    return ExitCode::kInfra;
  }
  std::printf("\nverdict: FAIL at the %s gate: %s\n", gate_word(*v.failed_gate).c_str(), reason.c_str());
  std::printf("reproduce: kgate bench --problem %s --candidate %s%s --seed %llu\n", o.problem.c_str(),
              o.candidate.c_str(), kb ? (backend == "host" ? " --device cpu" : " --device cuda") : "",
              static_cast<unsigned long long>(opt.seed));
  return ExitCode::kGateFailure;
}

}  // namespace kgate::cli

// `kgate profile PROBLEM.py`: torch.compile's model of a KernelBench problem taken apart
// by the Python worker -- every Inductor Triton kernel (what it fuses, its call-site
// contract, device time, share of the model, bytes moved, % of copy bandwidth, the Amdahl
// bound on the whole model's gain) and every extern call left to cuBLAS/cuDNN/ATen. The
// table is for people; --json writes the versioned inventory for tools.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "config/types.h"
#include "core/error.h"
#include "core/log.h"
#include "gates/evaluator.h"
#include "report/format.h"
#include "report/record_io.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kgate::cli {
namespace {

using report::fmt::fraction_pct;
using report::fmt::num;

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int i = 0;
  while (b >= 1024 && i < 3) b /= 1024, ++i;
  return num(b, i == 0 ? 0 : 1) + " " + unit[i];
}

void print_inventory(const std::string& problem, const json& inv) {
  const json ks = inv.value("kernels", json::array());
  const json ex = inv.value("externs", json::array());
  const double model_us = inv.value("model_device_us", 0.0);
  std::printf("%s: torch.compile (%s) on %s, torch %s, triton %s\n", problem.c_str(),
              inv.value("compile_mode", std::string("default")).c_str(), inv.value("device", std::string("?")).c_str(),
              inv.value("torch", std::string("?")).c_str(), inv.value("triton", std::string("-")).c_str());
  std::printf("  %zu Triton kernel%s, %zu extern call%s", ks.size(), ks.size() == 1 ? "" : "s", ex.size(),
              ex.size() == 1 ? "" : "s");
  if (model_us > 0)
    std::printf("; model GPU time %s us per call, Triton %s, extern %s", num(model_us, 2).c_str(),
                fraction_pct(inv.value("triton_share", 0.0)).c_str(),
                fraction_pct(inv.value("extern_share", 0.0)).c_str());
  std::printf("\n");
  if (!inv.value("no_triton_reason", std::string()).empty())
    std::printf("  no Triton kernels: %s\n", inv.value("no_triton_reason", std::string()).c_str());
  if (!ks.empty()) {
    std::printf("\n  %-56s %-21s %5s %9s %7s %10s %7s %7s\n", "Triton kernel", "category", "calls", "us/call",
                "share", "bytes", "%bw", "amdahl");
    for (const auto& k : ks) {
      std::string name = k.value("name", "");
      if (name.size() > 56) name = name.substr(0, 53) + "...";
      double us = k.value("device_us", 0.0);
      std::printf("  %-56s %-21s %5d %9s %7s %10s %7s %7s\n", name.c_str(), k.value("category", "").c_str(),
                  k.value("calls", 0), us > 0 ? num(us, 2).c_str() : "-",
                  us > 0 ? fraction_pct(k.value("share", 0.0)).c_str() : "-",
                  human_bytes(k.value("bytes", 0.0)).c_str(),
                  us > 0 ? fraction_pct(k.value("bandwidth_fraction", 0.0)).c_str() : "-",
                  us > 0 ? report::fmt::speedup(k.value("amdahl_bound", 1.0)).c_str() : "-");
    }
  }
  if (!ex.empty()) {
    std::printf("\n  %-56s %-21s %5s %9s %7s\n", "extern call (left alone)", "kind", "calls", "us/call", "share");
    for (const auto& e : ex) {
      double us = e.value("device_us", 0.0);
      std::printf("  %-56s %-21s %5d %9s %7s\n", e.value("name", "").c_str(), e.value("kind", "").c_str(),
                  e.value("calls", 1), us > 0 ? num(us, 2).c_str() : "-",
                  us > 0 ? fraction_pct(e.value("share", 0.0)).c_str() : "-");
    }
  }
  // What one Triton kernel writes and another reads (not the model's output): each such
  // intermediate is written and read back through memory, the traffic a pair of kernels
  // done as one would save.
  std::vector<std::string> between;
  std::set<std::string> triton;
  for (const auto& k : ks) triton.insert(k.value("name", ""));
  for (const auto& f : inv.value("flows", json::array())) {
    if (f.value("output", false) || !triton.count(f.value("producer", ""))) continue;
    std::string to;
    for (const auto& c : f.value("consumers", json::array()))
      if (triton.count(c.get<std::string>())) to += (to.empty() ? "" : ", ") + c.get<std::string>();
    if (to.empty()) continue;
    std::string shape;
    for (const auto& d : f.value("shape", json::array()))
      if (d.is_number_integer()) shape += (shape.empty() ? "" : ",") + std::to_string(d.get<long long>());
    between.push_back(f.value("buffer", "") + " (" + f.value("dtype", std::string("?")) + "[" + shape + "], " +
                      human_bytes(f.value("bytes", 0.0)) + "): " + f.value("producer", "") + " -> " + to);
  }
  if (!between.empty()) {
    std::printf("\n  written by one Triton kernel, read by another:\n");
    for (const auto& b : between) std::printf("    %s\n", b.c_str());
  }
  const json other = inv.value("other_kernels", json::array());
  if (!other.empty()) {
    // C++ kernels and the like, and Triton kernels whose name two graphs give to different
    // programs (no slot: a swap by name could not tell them apart).
    std::printf("\n  other kernels (not searched):");
    for (const auto& o : other) std::printf(" %s (%s)", o.value("name", "").c_str(), o.value("kind", "").c_str());
    std::printf("\n");
  }
}

}  // namespace

ExitCode cmd_profile(const ProfileOptions& o) {
  std::error_code ec;
  if (!fs::is_regular_file(o.problem, ec)) throw UsageError(o.problem + ": error: no such file");
  if (fs::path(o.problem).extension() != ".py")
    throw UsageError(o.problem + ": error: not a KernelBench problem file (a .py file with a Model, " +
                     "get_inputs and get_init_inputs)");
  const std::string device = !o.device.empty() ? o.device : have_nvidia_gpu() ? "cuda" : "cpu";
  config::NativeProblem problem = config::kernelbench_problem("", o.problem, o.baseline);
  problem.kernelbench_mode = "compiled";
  gates::EvalOptions opt;
  opt.backend = device == "cpu" ? "host" : "cuda";
  opt.request_timeout_s = o.timeout_s;
  opt.run_performance = false;
  opt.inventory_only = true;  // no probe runs of the reference, no float64 truth
  if (!o.kernels_dir.empty()) opt.writable.push_back(o.kernels_dir);  // the inventory writes there
  gates::Evaluator eval(problem, opt);
  if (!o.kernels_dir.empty()) fs::create_directories(o.kernels_dir);
  json inv = eval.inventory(o.kernels_dir);
  print_inventory(o.problem, inv);
  if (!o.kernels_dir.empty()) std::printf("\nkernel files: %s\n", o.kernels_dir.c_str());
  if (!o.json_out.empty()) {
    json doc = {{"version", 1}, {"kind", "kgate-profile"}, {"problem", problem.path},
                {"device_name", eval.device().name}, {"inventory", inv}};
    report::write_file_atomic(o.json_out, doc.dump(2) + "\n");
    log::info("inventory written to " + o.json_out);
  }
  return ExitCode::kPass;
}

}  // namespace kgate::cli

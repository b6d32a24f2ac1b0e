// Compiled mode (dispatch-aware KernelBench) in a suite run: torch.compile's model taken
// apart into Inductor Triton kernels, searched one kernel at a time.
#include "search/suite_run_phases.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "gates/performance_gate.h"
#include "gates/static_gate.h"

namespace kgate::search::suite {

namespace fs = std::filesystem;

std::string kernel_rel(const std::string& k) {
  return (fs::path(gates::kKernelsDir) / (k + ".py")).generic_string();
}

void select_kernel(RunState& st, Problem& p, const std::string& k) {
  p.kernel = k;
  p.candidate_rel = kernel_rel(k);
  fs::path state = fs::absolute(fs::path(st.opt.out) / "state" / p.item->problem_id);
  p.starter_copy = (state / "starter" / p.candidate_rel).string();
  p.best_copy = (state / "best" / p.candidate_rel).string();
  const ExperimentRecord* base = p.baseline();
  write_plain(p.starter_copy, base && !base->commit.empty() ? p.repo->file_at(base->commit, p.candidate_rel)
                                                            : read_text((fs::path(p.ws) / p.candidate_rel).string()));
  write_plain(p.best_copy, read_text((fs::path(p.ws) / p.candidate_rel).string()));
  // Its pair partners, each with a kept copy taken now (the worktree is at the best).
  p.partners.clear();
  for (const auto& e : p.inventory.value("kernels", json::array())) {
    if (e.value("name", "") != k) continue;
    for (const auto& pa : e.value("partners", json::array())) {
      const std::string rel = kernel_rel(pa.value("kernel", ""));
      const fs::path in_ws = fs::path(p.ws) / rel;
      std::error_code ec;
      if (!fs::is_regular_file(in_ws, ec)) continue;  // no file of it: nothing to pair
      gates::PartnerFile pf{in_ws.string(), (state / "best" / rel).string()};
      write_plain(pf.best_path, read_text(pf.workspace_path));
      p.partners.push_back(std::move(pf));
    }
  }
}

void keep_partner_copies(const Problem& p) {
  for (const auto& pf : p.partners) write_plain(pf.best_path, read_text(pf.workspace_path));
}

std::vector<std::string> partner_rels(const Problem& p) {
  std::vector<std::string> rels;
  for (const auto& pf : p.partners) rels.push_back(fs::path(pf.workspace_path).lexically_relative(p.ws).generic_string());
  return rels;
}

bool partners_unchanged(const Problem& p) {
  return std::all_of(p.partners.begin(), p.partners.end(), [](const gates::PartnerFile& pf) {
    return read_text(pf.workspace_path) == read_text(pf.best_path);
  });
}

void require_kept_kernels(const Problem& p, const gates::Timing& t, const std::string& what) {
  std::set<std::string> in_model(t.swapped.begin(), t.swapped.end());
  in_model.insert(t.unchanged.begin(), t.unchanged.end());
  for (const auto& r : p.records)
    if (r.verdict == ExperimentVerdict::kKeep && !r.kernel.empty() && !in_model.count(r.kernel))
      throw InfraError(p.item->problem_id + ": " + what + " did not swap in the kept kernel " + r.kernel +
                       (t.note.empty() ? "" : " (" + t.note + ")"));
}

std::vector<TemplateOffer> template_offers(const Problem& p, const std::string& k) {
  std::vector<TemplateOffer> out;
  for (const auto& e : p.inventory.value("kernels", json::array())) {
    if (e.value("name", "") != k) continue;
    for (const auto& t : e.value("templates", json::array())) {
      TemplateOffer o{t.value("template", ""), (fs::path(p.ws) / t.value("file", "")).string(), t.value("why", "")};
      if (o.name.empty() || !fs::is_regular_file(o.file))
        throw InfraError(p.item->problem_id + ": inventory.json lists template '" + o.name + "' of " + k +
                         " at " + o.file + ", which is not a file");
      out.push_back(std::move(o));
    }
  }
  return out;
}

// What the host may spend on one call of a compiled model outside the GPU's time: the
// call (guards, the wrapper) and each launch (plan_kernels). A model whose profiled GPU
// time is under kGpuBound times that may be waiting on the host: its timed excess is not
// taken as the kernels'.
constexpr double kHostCallUs = 60;
constexpr double kHostLaunchUs = 20;
constexpr double kGpuBound = 10;

void plan_kernels(RunState& st, Problem& p) {
  const json& inv = p.inventory;
  p.kernel_order.clear();
  p.fallback_kind.clear();
  p.fallback_reason.clear();
  struct K { std::string name; double bound; };
  std::vector<K> ks;  // call order; the stable sort below keeps it among equal bounds
  bool profiled = false;
  // The inventory's bounds are on the model's GPU time as the profiler read it. Once the
  // baseline has timed the model (the A/A), a GPU-bound model slower than that is the
  // kernels' time too, past what the host spends on a call (torch.compile's guards and
  // wrapper, a launch per kernel; the smallest official model, 88_MinGPTNewGelu, timed
  // 57 us over its 126 us profile on the H200): the official activations timed 9 % above
  // their profiled time there, 8 % behind eager's kernels, with the profiler reading them
  // at copy bandwidth. Each kernel's time is then scaled by the ratio, its floor (its bytes
  // at copy bandwidth) is not. Any other model keeps the profiler's bounds.
  const double profiled_us = inv.value("model_device_us", 0.0);
  const ExperimentRecord* base = p.baseline();
  const double timed_us = base && base->passed ? base->latency_us : 0;
  double launches = static_cast<double>(inv.value("externs", json::array()).size());
  for (const auto& k : inv.value("kernels", json::array())) launches += k.value("calls", 1.0);
  const double host_us = kHostCallUs + kHostLaunchUs * launches;
  const bool gpu_bound = profiled_us >= kGpuBound * host_us;
  const double scale = gpu_bound && timed_us - host_us > profiled_us ? (timed_us - host_us) / profiled_us : 1;
  for (const auto& k : inv.value("kernels", json::array())) {
    const double t = k.value("device_us", 0.0), bf = k.value("bandwidth_fraction", 0.0);
    if (t > 0) profiled = true;
    double bound = k.value("amdahl_bound", 0.0);
    if (scale > 1 && t > 0 && bf > 0) {
      const double scaled = scale * t, floor = std::min(scaled, t * bf);
      bound = std::max(1.0, (timed_us - host_us) / (timed_us - host_us - scaled + floor));
    }
    ks.push_back({k.value("name", ""), bound});
  }
  const double threshold = st.opt.suite.gates.keep_threshold;
  if (ks.empty()) {
    p.fallback_kind = "no-triton";
    std::string why = inv.value("no_triton_reason", std::string());
    p.fallback_reason = why.empty() ? "torch.compile generated no Triton kernels" : why;
    return;
  }
  std::stable_sort(ks.begin(), ks.end(), [](const K& a, const K& b) { return a.bound > b.bound; });
  for (const auto& k : ks)
    if (!profiled || k.bound <= 0 || k.bound >= threshold) p.kernel_order.push_back(k.name);
  if (p.kernel_order.empty()) {
    // Two reasons a bound stays under the threshold: the kernels are too small a share of
    // the model (even at zero time they could not clear it), or they already run near
    // copy bandwidth.
    double zero_time_bound = 1;
    for (const auto& k : inv.value("kernels", json::array()))
      zero_time_bound = std::max(zero_time_bound, 1 / std::max(1e-9, 1 - k.value("share", 0.0)));
    const std::string share = fmt(inv.value("triton_share", 0.0) * 100, "%.1f");
    const std::string gain = "even at copy bandwidth they would gain at most " + fmt(ks.front().bound, "%.3f") +
                             "x (keep threshold " + fmt(threshold, "%.2f") + "x" +
                             (scale > 1 ? ", on the model as timed: " + fmt(timed_us, "%.1f") + " us, " +
                                              fmt((scale - 1) * 100, "%.1f") +
                                              "% above its profiled GPU time past the host's share"
                                        : std::string()) +
                             ")";
    if (zero_time_bound < threshold) {
      p.fallback_kind = "extern-dominated";
      p.fallback_reason = "extern-dominated: Triton kernels are " + share + "% of the compiled model's GPU time; " + gain;
    } else {
      p.fallback_kind = "at-roofline";
      p.fallback_reason = "at roofline: Triton kernels are " + share +
                          "% of the compiled model's GPU time and already near copy bandwidth; " + gain;
    }
  }
}

std::string describe_inventory(const json& inv) {
  const size_t nk = inv.value("kernels", json::array()).size();
  const size_t ne = inv.value("externs", json::array()).size();
  std::string s = "torch.compile's model: " + std::to_string(nk) + " Triton kernel" + (nk == 1 ? "" : "s") + ", " +
                  std::to_string(ne) + " extern call" + (ne == 1 ? "" : "s");
  if (inv.value("model_device_us", 0.0) > 0)
    s += ", Triton " + fmt(inv.value("triton_share", 0.0) * 100, "%.1f") + "% of " +
         fmt(inv.value("model_device_us", 0.0), "%.1f") + " us GPU time";
  size_t seeded = 0;
  for (const auto& k : inv.value("kernels", json::array())) seeded += k.contains("seed_launch") ? 1 : 0;
  if (seeded) s += ", " + std::to_string(seeded) + " seeded by " + inv.value("seed_mode", std::string("Inductor's search"));
  return s;
}

std::string inventory_cost(const json& inv, double wall_s) {
  std::string s = " (inventory " + fmt(wall_s, "%.1f") + " s with the worker's start and the problem's load";
  const char* sep = ": ";
  for (const auto& [key, what] : {std::pair<const char*, const char*>{"seed_compile_s", "seeding"},
                                  {"compile_s", "compile"},
                                  {"profile_s", "profile"}}) {
    if (!inv.contains(key)) continue;
    s += sep + std::string(what) + " " + fmt(inv.value(key, 0.0), "%.1f") + " s";
    sep = ", ";
  }
  return s + ")";
}

void load_inventory(RunState& st, Problem& p) {
  std::string path = (fs::path(p.ws) / kInventoryFile).string();
  try {
    p.inventory = json::parse(read_text(path));
  } catch (const json::exception& e) {
    throw InfraError(path + ": unreadable inventory: " + e.what());
  }
  plan_kernels(st, p);
}

void compiled_fallback(const Problem& p, report::ProblemResult& res) {
  res.outcome = report::Outcome::kFallback;
  if (!p.fallback_kind.empty()) {
    res.fallback_kind = p.fallback_kind;
    res.reason = p.fallback_reason;
    return;
  }
  std::map<std::string, int> failed;
  int evaluated = 0, passed = 0, slower = 0;
  for (const auto& r : p.records) {
    if (r.n == 0) continue;
    if (r.passed) ++passed;
    if (!r.failed_gate.empty()) ++failed[r.failed_gate];
    if (r.passed || !r.failed_gate.empty()) ++evaluated;
    // correct, only slower: a kernel that was not faster, not one that failed a gate
    if (failed_only_by_slowdown(r)) ++slower;
  }
  if (passed + slower > 0 || evaluated == 0) {
    res.fallback_kind = "not-faster";
    const std::string slow = slower == 0 ? "" : ", " + std::to_string(slower) + " measured slower (the performance gate)";
    res.reason = evaluated == 0 ? "not faster: no kernel edit was evaluated (" + std::to_string(p.experiments()) +
                                      " experiments)"
                                : "not faster: " + std::to_string(passed) + " of " + std::to_string(evaluated) +
                                      " kernel edits passed every gate" + slow + ", none beat torch.compile's kernels";
    return;
  }
  res.fallback_kind = "gate-failed";
  std::string list;
  for (const auto& [g, n] : failed) list += (list.empty() ? "" : ", ") + g + " " + std::to_string(n);
  res.reason = failed.size() == 1 ? "every candidate failed the " + failed.begin()->first + " gate (" +
                                        std::to_string(evaluated) + ")"
                                  : "every candidate failed a gate (" + list + ")";
}

void fill_compiled(const Problem& p, report::ProblemResult& res) {
  res.mode = "compiled";
  res.baseline_kind = p.item->problem.kernelbench_baseline;
  res.triton_share = p.inventory.value("triton_share", 0.0);
  res.triton_kernels = static_cast<int>(p.inventory.value("kernels", json::array()).size());
  res.extern_calls = static_cast<int>(p.inventory.value("externs", json::array()).size());
  res.kernels_searched = p.kernels_searched;
  std::set<std::string> kept, templated;
  for (const auto& r : p.records) {
    if (r.verdict == ExperimentVerdict::kKeep) {
      kept.insert(r.kernel);
      if (r.point.count(kTemplatePointKey)) templated.insert(r.kernel);
    }
    if (r.n == 0) continue;
    res.experiment_wall_s.push_back(r.wall_s);
    if (gates::is_screen_case(r.failed_case)) ++res.experiments_screened;
  }
  res.kernels_kept = static_cast<int>(kept.size());
  res.templates_kept = static_cast<int>(templated.size());
  res.best_candidate = (fs::path(p.ws) / gates::kKernelsDir).string();
  // The best is a set of kernel files: hash their names and contents together.
  std::string manifest;
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(p.ws) / gates::kKernelsDir, ec))
    if (e.path().extension() == ".py") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) manifest += fs::path(f).filename().string() + " " + gates::hash_file(f) + "\n";
  res.best_hash = gates::hash_bytes(manifest);
}

}  // namespace kgate::search::suite

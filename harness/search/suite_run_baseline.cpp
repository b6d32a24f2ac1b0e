// The baseline phase of a suite run: experiment 0 of a problem.
#include "search/suite_run_phases.h"

#include <filesystem>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"

namespace kgate::search::suite {

namespace fs = std::filesystem;

namespace {

// The candidate path the worker gets: a kernel file, or the problem file itself (the
// compiled model with the kernel files in the workspace, none of its own).
std::string candidate_path(const Problem& p) {
  if (p.compiled && p.kernel.empty()) return p.item->problem.path;
  return (fs::path(p.ws) / p.candidate_rel).string();
}

}  // namespace

void run_baseline(RunState& st, Problem& p) {
  fs::path ws(p.ws);
  if (!p.compiled) write_plain((ws / p.candidate_rel).string(), starter_text(p));
  if (!p.item->problem_file.empty())
    write_plain((ws / kProblemFile).string(), read_text(p.item->problem_file));
  write_plain((ws / ".gitignore").string(), kGitignore);
  std::error_code ec;
  if (fs::exists(ws / kProblemFile))
    fs::permissions(ws / kProblemFile, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                    fs::perm_options::replace, ec);
  double t0 = now_s();
  ExperimentRecord r;
  r.problem = p.item->problem_id;
  r.n = 0;
  r.verdict = ExperimentVerdict::kBaseline;
  r.description = "baseline: starter " + p.candidate_rel;
  std::string baseline_path = p.starter_copy;
  if (p.compiled) {
    // torch.compile's model taken apart: one file per Triton kernel under kernels/.
    fs::path kdir = ws / gates::kKernelsDir;
    std::error_code ec;
    fs::remove_all(kdir, ec);
    fs::remove_all(ws / "templates", ec);  // the inventory writes them again
    fs::create_directories(kdir);
    p.inventory = st.evaluator(p).inventory(kdir.string());
    write_plain((ws / kInventoryFile).string(), p.inventory.dump(2) + "\n");
    plan_kernels(st, p);
    const json ks = p.inventory.value("kernels", json::array());
    if (!ks.empty()) {
      p.kernel = ks.front().value("name", "");
      p.candidate_rel = kernel_rel(p.kernel);
    }
    r.kernel = p.kernel;
    r.description = "baseline: " + describe_inventory(p.inventory);
    baseline_path.clear();  // the compiled model itself
    log::info(p.item->problem_id + ": " + describe_inventory(p.inventory) +
              (p.fallback_kind.empty() ? "" : "; fallback: " + p.fallback_reason) + inventory_cost(p.inventory, now_s() - t0));
  }
  gates::CandidateVerdict v;
  try {
    v = st.evaluator(p).evaluate(candidate_path(p), {}, baseline_path);
  } catch (const UsageError& e) {
    // "the baseline does not compile" (the starter's copy, compiled as the baseline) on a
    // full disk is the disk's failure, as a failed gate is (below), not the starter's.
    st.distrust_on_full_disk(p, e.what(), "the starter");
    throw;
  }
  if (st.stopped()) return;
  if (st.device_name.empty()) {
    st.device_name = st.evaluator(p).device_name();
    st.runtime = st.evaluator(p).runtime();
  }
  fill_from_verdict(r, v);
  st.distrust_failure_on_full_disk(p, r);
  p.degenerate = v.degenerate;
  r.speedup_vs_starter = 1;
  // The starter timed against itself can only "fail" performance by noise; it is the
  // baseline by definition, so only static, correctness and oracle failures count.
  // Noise needs a measurement: a timing that crashed or took no samples is no A/A, and a
  // starter without a time is no baseline (never a "passed" 0 us one).
  const bool timed = v.timing && v.timing->candidate_us > 0 && v.timing->baseline_us > 0;
  if (!v.passed && v.failed_gate == gates::Gate::kPerformance && timed) {
    r.passed = true;
    r.failed_gate.clear();
    r.reason = "A/A timing noise flagged by the performance gate: " + r.reason;
  } else if (!v.passed && v.failed_gate == gates::Gate::kPerformance) {
    r.reason = "the starter could not be timed: " + (r.reason.empty() ? std::string("no samples") : r.reason);
  } else if (v.passed && !timed && !st.aa_mode(p)) {
    r.passed = false;
    r.failed_gate = "performance";
    r.reason = "the starter passed the gates without a timing (no samples): no baseline to search from";
  }
  if (!r.passed && r.reason.empty()) r.reason = "the starter failed the gates";
  r.wall_s = now_s() - t0;
  // The baseline commit is the root of this run's branch.
  p.records.clear();
  r.commit = p.repo->commit(commit_message(r, st.run_id));
  p.repo->set_ref(st.exp_ref(p, 0), r.commit);
  r.best_commit = r.commit;
  json e = r;
  e["event"] = "experiment";
  e["time"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
  st.journal->append(e);
  p.records.push_back(r);
  st.all_records.push_back(r);
  p.repo->tag(st.best_tag(p), r.commit);
  if (p.compiled && !p.kernel.empty()) select_kernel(st, p, p.kernel);
  else write_plain(p.best_copy, read_text((ws / p.candidate_rel).string()));
  st.rewrite_tsv();
  if (r.passed)
    log::info(p.item->problem_id + ": baseline " + fmt(r.latency_us, "%.2f") + " us" +
              (r.pct_roofline > 0 ? " (" + fmt(r.pct_roofline * 100, "%.1f") + "% of roofline)" : ""));
  if (r.passed && p.compiled) {
    // The kernels' bounds again, on the model as the baseline timed it (plan_kernels).
    const std::vector<std::string> order = p.kernel_order;
    const std::string kind = p.fallback_kind;
    plan_kernels(st, p);
    if (p.kernel_order != order || p.fallback_kind != kind)
      log::info(p.item->problem_id + ": on the model as timed (" + fmt(r.latency_us, "%.1f") +
                " us, above its profiled GPU time): " +
                (p.fallback_kind.empty() ? std::to_string(p.kernel_order.size()) + " kernel(s) worth searching"
                                         : "fallback: " + p.fallback_reason));
  }
  if (!r.passed)
    log::error(p.item->problem_id + ": the starter fails the " + r.failed_gate + " gate: " + r.reason);
}

}  // namespace kgate::search::suite

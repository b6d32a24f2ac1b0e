#include "report/json_reporter.h"

#include "report/format.h"

namespace kgate::report {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const LevelSummary& l) {
  nlohmann::json fast = nlohmann::json::object();
  for (int i = 0; i < kFastPCount; ++i) fast[fmt::num(kFastP[i], 1)] = l.fast_p[i];
  return {{"level", l.level},
          {"problems", l.problems},
          {"improved", l.improved},
          {"matched", l.matched},
          {"fallback", l.fallback},
          {"regressed", l.regressed},
          {"failed", l.failed},
          {"errors", l.errors},
          {"skipped", l.skipped},
          {"correct", l.correct},
          {"geomean_speedup", opt(l.geomean_speedup)},
          {"geomean_vs_eager", opt(l.geomean_vs_eager)},
          {"geomean_vs_compile", opt(l.geomean_vs_compile)},
          {"geomean_vs_max_autotune", opt(l.geomean_vs_max_autotune)},
          {"compiled", l.compiled},
          {"fallback_kinds", l.fallback_kinds},
          {"compiled_experiments", l.experiment_wall_s.size()},
          {"compiled_experiments_screened", l.experiments_screened},
          {"compiled_experiment_wall_median_s", opt(l.experiment_wall_median_s)},
          {"compiled_experiment_wall_p90_s", opt(l.experiment_wall_p90_s)},
          {"fast_p", fast},
          {"wall_s", l.wall_s}};
}

nlohmann::json json_report(const Summary& s) {
  nlohmann::json j;
  j["version"] = kReportVersion;
  j["kind"] = "kgate-report";
  j["run"] = *s.info;
  j["result"] = {{"pipeline_failed", s.pipeline_failed},
                 {"exit_code", to_int(s.exit_code)},
                 {"correctness_regressions", s.correctness_regressions},
                 {"performance_regressions", s.performance_regressions},
                 {"gate_failures", s.gate_failures},
                 {"errors", s.errors}};
  if (!s.info->missing_shards.empty()) j["result"]["missing_shards"] = missing_shards_why(*s.info);
  if (!s.info->history_errors.empty()) j["result"]["history_errors"] = s.info->history_errors;
  j["levels"] = nlohmann::json::array();
  for (const auto& l : s.levels) j["levels"].push_back(to_json(l));
  j["overall"] = to_json(s.overall);
  j["problems"] = nlohmann::json::array();
  for (const auto& row : s.rows) {
    const ProblemResult& r = *row.record;
    j["problems"].push_back({{"level", r.level},
                             {"problem", r.problem},
                             {"outcome", r.outcome},
                             {"failure", row.failure},
                             {"correct", row.correct},
                             {"message", row.message},
                             {"baseline_kind", r.baseline_kind},
                             {"baseline_us", r.baseline_us},
                             {"best_us", r.best_us},
                             {"speedup", r.speedup},
                             {"speedup_lo", r.speedup_lo},
                             {"speedup_hi", r.speedup_hi},
                             {"speedup_vs_eager", opt(row.speedup_vs_eager)},
                             {"speedup_vs_compile", opt(row.speedup_vs_compile)},
                             {"speedup_vs_max_autotune", opt(row.speedup_vs_max_autotune)},
                             {"mode", r.mode},
                             {"fallback_kind", r.fallback_kind},
                             {"triton_share", r.triton_share},
                             {"triton_kernels", r.triton_kernels},
                             {"extern_calls", r.extern_calls},
                             {"kernels_searched", r.kernels_searched},
                             {"kernels_kept", r.kernels_kept},
                             {"templates_kept", r.templates_kept},
                             {"pct_roofline", r.pct_roofline},
                             {"experiments", r.experiments},
                             {"kept", r.kept},
                             {"best_commit", r.best_commit},
                             {"best_hash", r.best_hash},
                             {"wall_s", r.wall_s},
                             {"gates", r.gates},
                             {"vs_accepted", r.vs_accepted ? nlohmann::json(*r.vs_accepted) : nlohmann::json()}});
  }
  return j;
}

}  // namespace kgate::report

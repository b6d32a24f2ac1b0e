#include "report/summary.h"

#include "stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kgate::report {
namespace {

bool gate_failed(const gates::GateResult& g) {
  return g.status == gates::GateStatus::kFail || g.status == gates::GateStatus::kError;
}

const gates::GateResult* first_failed_gate(const ProblemResult& r, bool include_performance) {
  for (const auto& g : r.gates) {
    if (!include_performance && g.gate == gates::Gate::kPerformance) continue;
    if (gate_failed(g)) return &g;
  }
  return nullptr;
}

bool regressed_vs_accepted(const ProblemResult& r) { return r.vs_accepted && r.vs_accepted->regressed; }

std::string gate_name(gates::Gate g) { return nlohmann::json(g).get<std::string>(); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string failure_message(const ProblemResult& r, FailureKind k) {
  if (k == FailureKind::kNone) return "";
  const gates::GateResult* g = first_failed_gate(r, true);
  std::string gate_text;
  if (g) {
    gate_text = gate_name(g->gate) + " gate " + nlohmann::json(g->status).get<std::string>();
    if (!g->failed_case.empty()) gate_text += " at case " + g->failed_case;
    if (!g->reason.empty()) gate_text += ": " + g->reason;
  }
  switch (k) {
    case FailureKind::kPerformanceRegression: {
      std::string m = "speedup " + fmt("%.3f", r.speedup) + "x [" + fmt("%.3f", r.speedup_lo) +
                      ", " + fmt("%.3f", r.speedup_hi) + "] vs " +
                      (r.baseline_kind.empty() ? "baseline" : r.baseline_kind);
      if (!r.reason.empty()) m += ": " + r.reason;
      return m;
    }
    case FailureKind::kCorrectnessRegression:
    case FailureKind::kGateFailure:
      if (!gate_text.empty()) return gate_text;
      return r.reason.empty() ? "a gate failed" : r.reason;
    default:
      if (!r.reason.empty()) return r.reason;
      return gate_text.empty() ? to_string(k) : gate_text;
  }
}

}  // namespace

std::string to_string(FailureKind k) { return nlohmann::json(k).get<std::string>(); }
std::string to_string(Outcome o) { return nlohmann::json(o).get<std::string>(); }

FailureKind classify(const ProblemResult& r, RunKind kind) {
  switch (r.outcome) {
    case Outcome::kError:
      // A gate's "no" (the starter's math is wrong) is a gate failure with its gate and
      // case; a problem with no verdict, or a gate that could not run (crash, timeout,
      // worker fault), is an infrastructure error.
      for (const auto& g : r.gates)
        if (g.status == gates::GateStatus::kFail) return FailureKind::kGateFailure;
      return r.error_kind == kProblemErrorKind ? FailureKind::kProblemError : FailureKind::kError;
    case Outcome::kSkipped: return FailureKind::kSkipped;
    case Outcome::kRegressed:
      // Regressed by the comparison with the accepted results: a performance regression,
      // whatever gate table the record carries (a fallback's is its rejected candidate's).
      if (regressed_vs_accepted(r)) return FailureKind::kPerformanceRegression;
      // A PR check's change that fails a static/correctness/oracle gate regressed only where
      // its base version passed them (checked then); else the kernel was failing already.
      if (first_failed_gate(r, false))
        return kind == RunKind::kCheck && !r.base_correct ? FailureKind::kGateFailure
                                                          : FailureKind::kCorrectnessRegression;
      return FailureKind::kPerformanceRegression;
    case Outcome::kFallback:
      // In a search run a rejected candidate costs nothing (the baseline is kept); in a PR
      // check the change under test is the candidate, so its rejection fails the check.
      return kind == RunKind::kCheck ? FailureKind::kGateFailure : FailureKind::kNone;
    case Outcome::kImproved:
    case Outcome::kMatched:
      return FailureKind::kNone;
  }
  return FailureKind::kError;
}

bool is_failing(FailureKind k, bool fail_on_performance) {
  return k == FailureKind::kCorrectnessRegression || k == FailureKind::kGateFailure ||
         (k == FailureKind::kPerformanceRegression && fail_on_performance);
}

bool is_error(FailureKind k) { return k == FailureKind::kError || k == FailureKind::kProblemError; }

ExitCode exit_code_of(const std::vector<FailureKind>& failures, bool fail_on_performance) {
  ExitCode code = ExitCode::kPass;
  for (FailureKind k : failures) {
    if (k == FailureKind::kError) code = worse(code, ExitCode::kInfra);
    else if (k == FailureKind::kProblemError) code = worse(code, ExitCode::kUsage);
    else if (is_failing(k, fail_on_performance)) code = worse(code, ExitCode::kGateFailure);
  }
  return code;
}

bool is_correct(const ProblemResult& r) {
  switch (r.outcome) {
    case Outcome::kImproved:
    case Outcome::kMatched:
    case Outcome::kFallback: return true;
    case Outcome::kRegressed: return regressed_vs_accepted(r) || first_failed_gate(r, false) == nullptr;
    case Outcome::kError:
    case Outcome::kSkipped: return false;
  }
  return false;
}

std::optional<double> geomean(const std::vector<double>& xs) {
  double sum = 0;
  int n = 0;
  for (double x : xs) {
    if (!(x > 0) || !std::isfinite(x)) continue;
    sum += std::log(x);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(sum / n);
}

namespace {

struct Accumulator {
  LevelSummary s;
  bool gate_performance = false;  // a performance regression counts as a JUnit failure
  std::vector<double> speedups, vs_eager, vs_compile, vs_max_autotune;

  void add(const ProblemRow& row) {
    const ProblemResult& r = *row.record;
    ++s.problems;
    // What the result line counts as a gate failure or an error is counted so here too,
    // whatever the outcome (a PR check's change that fails a static/correctness/oracle
    // gate is recorded `regressed`, a starter that fails its own gates `error`); the rest
    // by outcome.
    if (row.failure == FailureKind::kGateFailure) ++s.failed;
    else if (is_error(row.failure)) ++s.errors;
    else switch (r.outcome) {
      case Outcome::kImproved: ++s.improved; break;
      case Outcome::kMatched: ++s.matched; break;
      case Outcome::kFallback: ++s.fallback; break;
      case Outcome::kRegressed: ++s.regressed; break;
      case Outcome::kError: ++s.errors; break;
      case Outcome::kSkipped: ++s.skipped; break;
    }
    s.wall_s += r.wall_s;
    if (r.mode == "compiled") {
      ++s.compiled;
      if (r.outcome == Outcome::kFallback && !r.fallback_kind.empty()) ++s.fallback_kinds[r.fallback_kind];
      s.experiment_wall_s.insert(s.experiment_wall_s.end(), r.experiment_wall_s.begin(), r.experiment_wall_s.end());
      s.experiments_screened += r.experiments_screened;
    }
    if (is_failing(row.failure, gate_performance)) ++s.failures;
    if (!row.correct) return;
    ++s.correct;
    if (r.speedup > 0) speedups.push_back(r.speedup);
    if (row.speedup_vs_eager) vs_eager.push_back(*row.speedup_vs_eager);
    if (row.speedup_vs_compile) vs_compile.push_back(*row.speedup_vs_compile);
    if (row.speedup_vs_max_autotune) vs_max_autotune.push_back(*row.speedup_vs_max_autotune);
    for (int i = 0; i < kFastPCount; ++i)
      if (r.speedup > kFastP[i]) ++s.fast_p_count[i];
  }

  LevelSummary finish() {
    s.geomean_speedup = geomean(speedups);
    s.geomean_vs_eager = geomean(vs_eager);
    s.geomean_vs_compile = geomean(vs_compile);
    s.geomean_vs_max_autotune = geomean(vs_max_autotune);
    if (!s.experiment_wall_s.empty()) {
      s.experiment_wall_median_s = stats::median(s.experiment_wall_s);
      s.experiment_wall_p90_s = stats::quantile(s.experiment_wall_s, 0.9);
    }
    for (int i = 0; i < kFastPCount; ++i)
      s.fast_p[i] = s.problems ? static_cast<double>(s.fast_p_count[i]) / s.problems : 0.0;
    return s;
  }
};

int severity(FailureKind k) {
  switch (k) {
    case FailureKind::kCorrectnessRegression: return 0;
    case FailureKind::kGateFailure: return 1;
    case FailureKind::kError:
    case FailureKind::kProblemError: return 2;
    case FailureKind::kPerformanceRegression: return 3;
    default: return 9;
  }
}

}  // namespace

Summary summarize(const RunRecords& run) {
  Summary sum;
  sum.info = &run.info;
  for (const auto& r : run.results) {
    ProblemRow row;
    row.record = &r;
    row.failure = classify(r, run.info.kind);
    row.correct = is_correct(r);
    if (r.best_us > 0 && r.eager_us > 0) row.speedup_vs_eager = r.eager_us / r.best_us;
    if (r.best_us > 0 && r.compile_us > 0) row.speedup_vs_compile = r.compile_us / r.best_us;
    if (r.best_us > 0 && r.compile_max_autotune_us > 0)
      row.speedup_vs_max_autotune = r.compile_max_autotune_us / r.best_us;
    row.message = failure_message(r, row.failure);
    sum.rows.push_back(std::move(row));
  }
  std::sort(sum.rows.begin(), sum.rows.end(), [](const ProblemRow& a, const ProblemRow& b) {
    return std::tie(a.record->level, a.record->problem) <
           std::tie(b.record->level, b.record->problem);
  });

  std::map<std::string, Accumulator> levels;
  Accumulator overall;
  for (const auto& row : sum.rows) {
    Accumulator& acc = levels[row.record->level];
    acc.s.level = row.record->level;
    acc.gate_performance = overall.gate_performance = run.info.fail_on_performance;
    acc.add(row);
    overall.add(row);
    switch (row.failure) {
      case FailureKind::kCorrectnessRegression: ++sum.correctness_regressions; break;
      case FailureKind::kPerformanceRegression: ++sum.performance_regressions; break;
      case FailureKind::kGateFailure: ++sum.gate_failures; break;
      case FailureKind::kError:
      case FailureKind::kProblemError: ++sum.errors; break;
      default: break;
    }
  }
  for (auto& [id, acc] : levels) sum.levels.push_back(acc.finish());
  sum.overall = overall.finish();
  std::vector<FailureKind> kinds;
  for (const auto& row : sum.rows) kinds.push_back(row.failure);
  sum.exit_code = exit_code_of(kinds, run.info.fail_on_performance);
  // A run stopped before it finished (SIGINT/SIGTERM: a CI job's timeout) exits 130 even
  // when every problem it planned has a record (the stop came in the final re-measures):
  // its reports say the same.
  if (run.info.interrupted) sum.exit_code = worse(sum.exit_code, ExitCode::kInterrupted);
  // A merge that lacks shards is an infrastructure error, also when the shards it has
  // passed or their problems cannot be named (`kgate merge` exits with it).
  if (!run.info.missing_shards.empty()) sum.exit_code = worse(sum.exit_code, ExitCode::kInfra);
  // A history that could not be read or written (RunInfo::history_errors).
  if (!run.info.history_errors.empty()) sum.exit_code = worse(sum.exit_code, ExitCode::kInfra);
  sum.pipeline_failed = sum.exit_code != ExitCode::kPass;
  return sum;
}

std::string missing_shards_why(const RunInfo& info) {
  if (info.missing_shards.empty()) return "";
  std::string list;
  for (int k : info.missing_shards)
    list += (list.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(info.shard.count);
  const bool one = info.missing_shards.size() == 1;
  return std::string(one ? "shard " : "shards ") + list + (one ? " is" : " are") +
         " missing: kgate merge was not given " + (one ? "its output" : "their outputs") +
         "; " + (one ? "its" : "their") + " problems have no result (infrastructure error, exit 3)";
}

std::vector<MissingReference> missing_references(const Summary& s) {
  std::vector<MissingReference> out;
  for (const auto& row : s.rows)
    for (const auto& [mode, why] : row.record->references_missing)
      out.push_back({row.record->level + "/" + row.record->problem + (mode == "references" ? " (every mode)" : " vs " + mode),
                     why});
  return out;
}

std::vector<const ProblemRow*> Summary::worst(size_t limit) const {
  std::vector<const ProblemRow*> out;
  for (const auto& row : rows)
    if (severity(row.failure) < 9) out.push_back(&row);
  std::stable_sort(out.begin(), out.end(), [](const ProblemRow* a, const ProblemRow* b) {
    int sa = severity(a->failure), sb = severity(b->failure);
    if (sa != sb) return sa < sb;
    return a->record->speedup < b->record->speedup;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace kgate::report

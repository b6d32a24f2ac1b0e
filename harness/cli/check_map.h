#pragma once
// `kgate check`: the pure parts, kept header-only so unit tests use them without the CLI.
//   - which problems a set of changed files touches (map_changed_files);
//   - what a PR check concludes from one candidate's verdict (check_outcome);
//   - which GPU target its records name (gpu_target_for).
// Git (merge-base, diff, base blobs) and the gate runs live in cmd_check.cpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "config/catalog.h"
#include "verdict/speed_policy.h"
#include "verdict/verdict.h"
#include "report/record.h"

namespace kgate::cli::check {

// One problem to check, because `rel` (one changed file) is its candidate.
struct Target {
  std::string rel;           // the changed file, relative to the repository's work tree
  std::string candidate;     // its absolute path
  std::string level;         // level id ("native" when the problem is in no native level)
  std::string problem;       // "<level>/<name>"
  std::string kind;          // "native" | "kernelbench"
  const config::NativeProblem* native = nullptr;  // native: points into the Catalog
  std::string source;        // native: the problem YAML; kernelbench: <root>/<name>.py
  std::string baseline_mode; // kernelbench: the level's baseline (eager | compile | ...)
};

// A changed file that is a problem's starter, but for another backend than the one checked.
struct OtherBackend {
  std::string rel;
  std::string problem;  // "<level>/<name>"
  std::string level;
  std::string backend;  // the starter's backend
};

struct ChangeMap {
  std::vector<Target> targets;               // sorted by problem id, one per problem
  // Problems whose candidate (a changed file that is not in the work tree) the change
  // deletes: nothing to gate, each one fails the check. Sorted by problem id.
  std::vector<Target> deleted;
  std::vector<OtherBackend> other_backend;   // starters of other backends (reported as skipped)
  std::vector<std::string> unmapped;         // changed files that are no problem's kernel
};

namespace detail {

inline std::string canon(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path c = std::filesystem::weakly_canonical(p, ec);
  return (ec ? p.lexically_normal() : c).string();
}

// `path` below `dir` (both canonical): the relative part, else "".
inline std::string below(const std::string& path, const std::string& dir) {
  std::filesystem::path rel = std::filesystem::path(path).lexically_relative(dir);
  std::string s = rel.generic_string();
  if (s.empty() || s == "." || s.starts_with("..")) return "";
  return s;
}

}  // namespace detail

// Maps changed files (relative to `workdir`, git's spelling) to problems of the catalog:
//   - a native problem's starter for `backend` (NativeProblem::starters);
//   - a KernelBench level's <solutions>/<name>.py when <root>/<name>.py exists.
// A file may map to several problems (a starter shared by two problems); a problem is
// checked once. A deleted file (not in the work tree) that was such a candidate maps its
// problems to `deleted`; any other deleted file is unmapped.
inline ChangeMap map_changed_files(const config::Catalog& cat, const std::string& workdir,
                                   const std::vector<std::string>& changed,
                                   const std::string& backend) {
  namespace fs = std::filesystem;
  ChangeMap out;
  // Which level lists each native problem (by the problem YAML): the first level by id.
  auto native_level = [&](const config::NativeProblem& p) -> std::string {
    for (const auto& lv : cat.levels) {
      if (lv.kind != "native") continue;
      for (const auto& lp : config::available_problems(cat, lv))
        if (lp.native == &p) return lv.id;
    }
    return "native";
  };
  std::set<std::string> seen_problems;
  std::set<std::string> seen_files;
  for (const std::string& rel_in : changed) {
    std::string rel = fs::path(rel_in).lexically_normal().generic_string();
    if (!seen_files.insert(rel).second) continue;
    const std::string abs = detail::canon(fs::path(workdir) / rel);
    bool mapped = false;
    std::error_code ec;
    const bool exists = fs::is_regular_file(abs, ec);
    for (const auto& p : cat.problems) {
      for (const auto& [be, starter] : p.starters) {
        if (detail::canon(starter) != abs) continue;
        mapped = true;
        const std::string level = native_level(p);
        const std::string id = level + "/" + p.id;
        if (be != backend) {
          out.other_backend.push_back({rel, id, level, be});
          continue;
        }
        if (!seen_problems.insert(id).second) continue;
        (exists ? out.targets : out.deleted).push_back({rel, abs, level, id, "native", &p, p.loc.file, ""});
      }
    }
    for (const auto& lv : cat.levels) {
      if (lv.kind != "kernelbench" || lv.solutions.empty() || lv.root.empty()) continue;
      std::string sub = detail::below(abs, detail::canon(lv.solutions));
      if (sub.empty() || !sub.ends_with(".py")) continue;
      std::string name = sub.substr(0, sub.size() - 3);
      fs::path ref = fs::path(lv.root) / (name + ".py");
      if (!fs::is_regular_file(ref, ec)) continue;
      mapped = true;
      const std::string id = lv.id + "/" + name;
      if (!seen_problems.insert(id).second) continue;
      (exists ? out.targets : out.deleted)
          .push_back({rel, abs, lv.id, id, "kernelbench", nullptr, detail::canon(ref), lv.baseline});
    }
    if (!mapped) out.unmapped.push_back(rel);
  }
  auto by_problem = [](const Target& a, const Target& b) { return a.problem < b.problem; };
  std::sort(out.targets.begin(), out.targets.end(), by_problem);
  std::sort(out.deleted.begin(), out.deleted.end(), by_problem);
  // A problem is either checked or reported once as "other backend", never both.
  std::vector<OtherBackend> other;
  for (auto& ob : out.other_backend) {
    auto same = [&](const Target& t) { return t.problem == ob.problem; };
    bool dup = std::any_of(out.targets.begin(), out.targets.end(), same) ||
               std::any_of(out.deleted.begin(), out.deleted.end(), same) ||
               std::any_of(other.begin(), other.end(),
                           [&](const OtherBackend& o) { return o.problem == ob.problem; });
    if (!dup) other.push_back(std::move(ob));
  }
  out.other_backend = std::move(other);
  return out;
}

// The GPU target a PR check's records name, the key of the accepted results as `kgate run`
// names it: among the suite's targets for `backend`, the only one, else the one the device
// matches (config::match_gpu); without a suite, the catalog's target the device matches.
// "" when none does (the records then carry the device name alone).
inline std::string gpu_target_for(const config::Catalog& cat, const std::vector<std::string>& suite_gpus,
                                  const std::string& backend, const std::string& device_name,
                                  const std::string& device_cc) {
  std::vector<std::string> mine;
  for (const auto& id : suite_gpus)
    if (const config::GpuTarget* g = cat.gpu(id); g && (g->backend.empty() || g->backend == backend))
      mine.push_back(g->id);
  if (mine.size() == 1) return mine.front();
  const config::GpuTarget* m = config::match_gpu(cat, device_name, device_cc);
  if (!m) return "";
  if (suite_gpus.empty()) return m->id;
  return std::find(mine.begin(), mine.end(), m->id) != mine.end() ? m->id : "";
}

// What a PR check concludes from one candidate's verdict.
struct Conclusion {
  report::Outcome outcome = report::Outcome::kMatched;
  bool failed = false;   // fails the check
  std::string reason;    // "" when it passes without remark
};

inline std::string fmt_num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A failed gate (any of the four) -> regressed, failed, naming the gate and the case.
// Every gate passed: significantly slower (the stats verdict `slower`, or the upper CI
// bound of the speedup below 1/regression_threshold) -> regressed, failed; the lower CI
// bound above keep_threshold -> improved (matched for a degenerate problem); else matched.
inline Conclusion check_outcome(const gates::CandidateVerdict& v, const config::GateThresholds& t) {
  Conclusion c;
  if (!v.passed) {
    c.outcome = report::Outcome::kRegressed;
    c.failed = true;
    const gates::GateResult* g = nullptr;
    for (const auto& r : v.gates)
      if (v.failed_gate && r.gate == *v.failed_gate) g = &r;
    if (!g)
      for (const auto& r : v.gates)
        if (r.status == gates::GateStatus::kFail || r.status == gates::GateStatus::kError) {
          g = &r;
          break;
        }
    if (!g) {
      c.reason = "a gate failed";
      return c;
    }
    c.reason = nlohmann::json(g->gate).get<std::string>() + " gate " +
               (g->status == gates::GateStatus::kError ? "error" : "failed");
    // The gate's own reason usually names its case already; name it once.
    if (!g->failed_case.empty() && g->reason.find(g->failed_case) == std::string::npos)
      c.reason += " at case " + g->failed_case;
    if (!g->reason.empty()) c.reason += ": " + g->reason;
    return c;
  }
  if (!v.timing) {
    c.outcome = report::Outcome::kMatched;
    c.reason = "not timed";
    return c;
  }
  const gates::Timing& tm = *v.timing;
  const double thr = t.regression_threshold > 0 ? t.regression_threshold : 1.0;
  const std::string ci = fmt_num("%.3f", tm.speedup) + "x [" + fmt_num("%.3f", tm.speedup_lo) + ", " +
                         fmt_num("%.3f", tm.speedup_hi) + "]";
  const gates::SpeedPolicy policy{t.keep_threshold, thr};
  if (policy.slower(tm)) {
    c.outcome = report::Outcome::kRegressed;
    c.failed = true;
    c.reason = "slower than the base: speedup " + ci + ", " +
               nlohmann::json(tm.verdict).get<std::string>() + " (regression threshold " +
               fmt_num("%.3g", thr) + "x)";
    return c;
  }
  if (policy.clears_keep(tm)) {
    if (!v.degenerate.empty()) {
      c.outcome = report::Outcome::kMatched;
      c.reason = "degenerate problem (" + v.degenerate + "): never counted as improved";
    } else {
      c.outcome = report::Outcome::kImproved;
    }
    return c;
  }
  c.outcome = report::Outcome::kMatched;
  return c;
}

}  // namespace kgate::cli::check

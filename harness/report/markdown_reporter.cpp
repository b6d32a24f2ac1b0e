#include "report/markdown_reporter.h"

#include <string>
#include <vector>

#include "report/dispatch_table.h"
#include "report/format.h"

namespace kgate::report {
namespace {

std::string status_line(const Summary& s) {
  std::string t = s.pipeline_failed ? "**Result: FAIL**" : "**Result: PASS**";
  if (s.info->interrupted) t += " (" + std::string(kInterruptedWhy) + ")";
  if (!s.info->missing_shards.empty()) t += " (" + missing_shards_why(*s.info) + ")";
  for (const std::string& e : s.info->history_errors) t += " (" + e + ")";
  t += " (" + std::to_string(s.correctness_regressions) + " correctness regressions, " +
       std::to_string(s.gate_failures) + " gate failures, " +
       std::to_string(s.performance_regressions) + " performance regressions" +
       (s.info->fail_on_performance ? "" : " (not failing)") + ", " +
       std::to_string(s.errors) + " errors)";
  return t;
}

std::string level_row(const LevelSummary& l, const std::string& name) {
  std::string t = "| " + fmt::md_cell(name) + " | " + std::to_string(l.problems) + " | " +
                  std::to_string(l.improved) + " | " + std::to_string(l.matched) + " | " +
                  std::to_string(l.fallback) + " | " + std::to_string(l.regressed) + " | " +
                  std::to_string(l.failed) + " | " + std::to_string(l.errors) + " | " +
                  fmt::speedup(l.geomean_speedup) + " | " +
                  fmt::speedup(l.geomean_vs_eager) + " | " + fmt::speedup(l.geomean_vs_compile);
  for (int i = 0; i < kFastPCount; ++i) t += " | " + fmt::fraction_pct(l.fast_p[i]);
  return t + " |\n";
}

std::string problem_row(const ProblemRow& row) {
  const ProblemResult& r = *row.record;
  std::string outcome = to_string(r.outcome);
  if (row.failure != FailureKind::kNone && row.failure != FailureKind::kSkipped &&
      !is_error(row.failure))
    outcome += " (" + to_string(row.failure) + ")";
  return "| " + fmt::md_cell(r.level) + " | " + fmt::md_cell(r.problem) + " | " +
         fmt::us(r.baseline_us) + (r.baseline_kind.empty() ? "" : " (" + fmt::md_cell(r.baseline_kind) + ")") +
         " | " + fmt::us(r.best_us) + " | " + fmt::result_speedup(r.best_us, r.speedup, r.speedup_lo, r.speedup_hi) +
         " | " + fmt::speedup(row.speedup_vs_eager) + " | " + fmt::speedup(row.speedup_vs_compile) +
         " | " + fmt::md_cell(outcome) + " | " + std::to_string(r.experiments) + " | " +
         std::to_string(r.kept) + " | " +
         (r.best_commit.empty() ? "-" : "`" + fmt::short_sha(r.best_commit) + "`") + " | " +
         fmt::pct(r.pct_roofline) + " |\n";
}

// One Markdown table row of plain-text cells; a total row's name in bold.
std::string md_row(const std::vector<std::string>& cells, bool total = false) {
  std::string t = "|";
  for (size_t i = 0; i < cells.size(); ++i)
    t += " " + (total && i == 0 ? "**" + fmt::md_cell(cells[i]) + "**" : fmt::md_cell(cells[i])) + " |";
  return t + "\n";
}

std::string md_head(const Table& t) {
  std::string rule = "|";
  for (bool n : t.numeric) rule += n ? "--:|" : "---|";
  return md_row(t.header) + rule + "\n";
}

}  // namespace

std::string markdown_dispatch_tables(const Summary& s, size_t max_bytes) {
  if (!has_dispatch(s)) return "";
  const Table levels = dispatch_level_table(s);
  std::string t = "## Dispatch-aware search (torch.compile's Triton kernels)\n\n" + md_head(levels);
  for (size_t i = 0; i < levels.rows.size(); ++i)
    t += md_row(levels.rows[i], static_cast<int>(i) == levels.total_row);
  const Table problems = dispatch_problem_table(s);
  t += std::string("\n") + kFallbackNote + "\n\n" + md_head(problems);
  for (const auto& cells : problems.rows) {
    std::string line = md_row(cells);
    if (t.size() + line.size() > max_bytes) {
      t += "| ... | | | | | | | | more rows in report.json |\n";
      break;
    }
    t += line;
  }
  return t + "\n";
}

std::string markdown_accepted_table(const Summary& s, size_t max_bytes) {
  std::string t;
  for (const auto& row : s.rows) {
    const auto& c = row.record->vs_accepted;
    if (!c) continue;
    if (t.empty())
      t = "## Against the accepted results\n\n"
          "| Problem | Accepted (run) | Accepted | Now | Speed vs accepted [CI] | p | Verdict |\n"
          "|---|---|--:|--:|--:|--:|---|\n";
    std::string line = "| " + fmt::md_cell(row.record->level + "/" + row.record->problem) + " | " +
                       fmt::md_cell(c->run_id) + " | " + fmt::us(c->accepted_us) + " | " +
                       fmt::us(row.record->best_us) + " | " + fmt::speedup_ci(c->ratio, c->ratio_lo, c->ratio_hi) +
                       " | " + fmt::num(c->p_value, 3) + " | " +
                       (c->regressed ? "**performance regression**" : "ok") + " |\n";
    if (t.size() + line.size() > max_bytes) {
      t += "| ... | | | | | | more rows in report.json |\n";
      break;
    }
    t += line;
  }
  return t.empty() ? t : t + "\n";
}

std::string markdown_level_table(const Summary& s) {
  std::string t =
      "| Level | Problems | Improved | Matched | Fallback | Regressed | Failed | Errors | Geomean vs "
      "baseline | vs eager | vs torch.compile | fast_0 | fast_1 | fast_1.5 | fast_2 |\n"
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& l : s.levels) t += level_row(l, l.level);
  if (s.levels.size() > 1) t += level_row(s.overall, "**all**");
  return t;
}

std::string markdown_report(const Summary& s, size_t max_bytes) {
  const RunInfo& info = *s.info;
  std::string t = "# kgate report: " + fmt::md_cell(info.suite.empty() ? "-" : info.suite) + "\n\n";
  t += "Run `" + fmt::md_cell(info.run_id) + "` (" + (info.kind == RunKind::kCheck ? "check" : "run") +
       ") on " + fmt::md_cell(info.env.gpu.empty() ? "-" : info.env.gpu) + ", started " +
       fmt::md_cell(info.started_at.empty() ? "-" : info.started_at) + ", seed " +
       std::to_string(info.seed) + ", kgate " + fmt::md_cell(info.env.kgate_version) + " (" +
       fmt::md_cell(fmt::short_sha(info.env.git_sha)) + ")";
  if (info.interrupted) t += ", **interrupted** (partial results)";
  if (!info.missing_shards.empty()) t += ", **incomplete merge** (shards missing)";
  t += ".\n\n" + status_line(s) + "\n\n";
  t += "## Levels\n\n" + markdown_level_table(s) + "\n";
  t += "Geomeans are over correct results; fast_p = share of all problems that are correct "
       "with speedup > p.\n\n";
  t += markdown_dispatch_tables(s, max_bytes / 4);

  auto worst = s.worst(s.rows.size());
  if (!worst.empty()) {
    t += "## Failures\n\n| Problem | Kind | Detail |\n|---|---|---|\n";
    for (const ProblemRow* row : worst) {
      std::string line = "| " + fmt::md_cell(row->record->level + "/" + row->record->problem) +
                         " | " + to_string(row->failure) + " | " + fmt::md_cell(row->message) +
                         " |\n";
      if (t.size() + line.size() + 200 > max_bytes / 2) {
        t += "| ... | | more failures in report.json |\n";
        break;
      }
      t += line;
    }
    t += "\n";
  }

  t += markdown_accepted_table(s, max_bytes / 4);

  t += "## Problems\n\n";
  t += "| Level | Problem | Baseline | Best | Speedup [CI] | vs eager | vs torch.compile | Outcome | Experiments | "
       "Kept | Best commit | Roofline |\n|---|---|--:|--:|--:|--:|--:|---|--:|--:|---|--:|\n";
  // Skipped problems (e.g. without a starting candidate: most of a KernelBench level without
  // solutions) are named once below the table instead of one empty row each.
  const std::string note_reserve(600, ' ');
  size_t shown = 0, listed = 0;
  bool full = false;
  std::vector<std::string> skipped;
  for (const auto& row : s.rows) {
    if (row.record->outcome == Outcome::kSkipped) {
      skipped.push_back(row.record->level + "/" + row.record->problem);
      continue;
    }
    ++listed;
    std::string line = problem_row(row);
    full = full || t.size() + line.size() + note_reserve.size() > max_bytes;
    if (full) continue;
    t += line;
    ++shown;
  }
  if (shown < listed)
    t += "\n_" + std::to_string(listed - shown) + " of " + std::to_string(listed) +
         " problem rows left out to stay under the " + std::to_string(max_bytes) +
         "-byte summary limit; report.json and report.html have every row._\n";
  if (!skipped.empty()) {
    std::string names;
    for (const auto& n : skipped) {
      if (t.size() + names.size() + n.size() + 200 > max_bytes) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "" : ", ") + fmt::md_cell(n);
    }
    t += "\n_" + std::to_string(skipped.size()) +
         " skipped (the reasons are in report.json): " + names + "._\n";
  }
  // An empty vs-reference column says why.
  std::string missing;
  for (const auto& m : missing_references(s)) {
    std::string item = fmt::md_cell(m.what) + ": " + fmt::md_cell(m.why.substr(0, 200));
    if (t.size() + missing.size() + item.size() + 100 > max_bytes) {
      missing += (missing.empty() ? "" : "; ") + std::string("... (report.json has every one)");
      break;
    }
    missing += (missing.empty() ? "" : "; ") + item;
  }
  if (!missing.empty()) t += "\n_Not measured against the reference model: " + missing + "._\n";
  return t;
}

}  // namespace kgate::report

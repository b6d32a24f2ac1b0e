#include "report/html_reporter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "report/dispatch_table.h"
#include "report/format.h"
#include "report/junit_reporter.h"
#include "report/svg_chart.h"

namespace kgate::report {
namespace {

using fmt::html_escape;

constexpr const char* kCss = R"(
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px}
th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}
.pass{color:#1a7f37;font-weight:bold}.fail{color:#cf222e;font-weight:bold}
tr.f td{background:#fff0f0}
.chart{display:block;margin:8px 0 24px;font-size:11px}
.chart-title{font-size:13px;font-weight:bold}
.axis{stroke:#333}.ref{stroke:#888;stroke-dasharray:4 3}
.label{text-anchor:end}
pre{background:#f6f8fa;padding:8px;overflow-x:auto}
)";

double or_nan(const std::optional<double>& v) {
  return v ? *v : std::numeric_limits<double>::quiet_NaN();
}

std::string td(const std::string& s, bool numeric = false) {
  return std::string(numeric ? "<td class=\"n\">" : "<td>") + html_escape(s) + "</td>";
}

// A vs-reference cell; an empty one carries the reason it is empty as its tooltip.
std::string vs_reference_td(const ProblemResult& r, const std::string& mode,
                            const std::optional<double>& speedup) {
  auto why = r.references_missing.find(mode);
  if (why == r.references_missing.end()) why = r.references_missing.find("references");
  if (why == r.references_missing.end() || speedup) return td(fmt::speedup(speedup), true);
  return "<td class=\"n\" title=\"" + html_escape(why->second) + "\">" + html_escape(fmt::speedup(speedup)) +
         "</td>";
}

// A report table of plain-text cells (dispatch_table.h); a total row's name in bold.
std::string html_table(const Table& t, const std::string& cls) {
  std::string h = "<table class=\"" + cls + "\"><tr>";
  for (const auto& c : t.header) h += "<th>" + html_escape(c) + "</th>";
  h += "</tr>\n";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    h += "<tr>";
    for (size_t j = 0; j < t.rows[i].size(); ++j) {
      const bool n = j < t.numeric.size() && t.numeric[j];
      if (static_cast<int>(i) == t.total_row && j == 0)
        h += "<td><b>" + html_escape(t.rows[i][j]) + "</b></td>";
      else
        h += td(t.rows[i][j], n);
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

std::string history_errors_html(const RunInfo& info) {
  std::string t;
  for (const std::string& e : info.history_errors) t += " (" + html_escape(e) + ")";
  return t;
}

std::string signed_pct(double v) { return (v > 0 ? "+" : "") + fmt::num(v, 1) + "%"; }

}  // namespace

std::string html_accepted_table(const Summary& s) {
  std::vector<const ProblemRow*> rows;
  for (const auto& row : s.rows)
    if (row.record->vs_accepted) rows.push_back(&row);
  if (rows.empty()) return "";
  // The regressions first, the largest drop first; then the others in problem order.
  std::stable_sort(rows.begin(), rows.end(), [](const ProblemRow* a, const ProblemRow* b) {
    const AcceptedComparison& x = *a->record->vs_accepted;
    const AcceptedComparison& y = *b->record->vs_accepted;
    if (x.regressed != y.regressed) return x.regressed;
    return x.regressed && x.ratio < y.ratio;
  });
  int regressed = 0;
  for (const ProblemRow* row : rows) regressed += row->record->vs_accepted->regressed ? 1 : 0;
  const double thr = s.info ? s.info->regression_threshold : 0;
  std::string t = "<h2>Against the accepted results</h2>\n<p>" + std::to_string(regressed) + " of " +
                  std::to_string(rows.size()) + " compared problem" + (rows.size() == 1 ? "" : "s") +
                  " regressed: slower than the accepted result beyond the regression threshold (" +
                  fmt::num(thr, 3) + "x) with confidence" +
                  (s.info && s.info->fail_on_performance ? ", which fails the pipeline" : "") +
                  ". Speed vs accepted = accepted time / time now, with its 95 % interval.</p>\n"
                  "<table class=\"accepted\"><tr><th>Problem</th><th>Accepted in run</th><th>Accepted at</th>"
                  "<th>Accepted</th><th>Now</th><th>Speed vs accepted [CI]</th><th>Time change</th><th>p</th>"
                  "<th>Verdict</th></tr>\n";
  for (const ProblemRow* row : rows) {
    const ProblemResult& r = *row->record;
    const AcceptedComparison& c = *r.vs_accepted;
    const std::string change = c.accepted_us > 0 && r.best_us > 0 ? signed_pct(100 * (r.best_us / c.accepted_us - 1)) : "-";
    t += std::string(c.regressed ? "<tr class=\"f\">" : "<tr>") + td(r.level + "/" + r.problem) + td(c.run_id) +
         td(c.accepted_at) + td(fmt::us(c.accepted_us), true) + td(fmt::us(r.best_us), true) +
         td(fmt::speedup_ci(c.ratio, c.ratio_lo, c.ratio_hi), true) + td(change, true) +
         td(fmt::num(c.p_value, 3), true) + "<td class=\"verdict\">" +
         (c.regressed ? "performance regression" : "ok") + "</td></tr>\n";
  }
  return t + "</table>\n";
}

std::string html_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         html_escape(title) + "</title><style>" + kCss + "</style></head><body>\n" + body +
         "\n</body></html>\n";
}

std::string html_level_table(const Summary& s) {
  std::string t =
      "<table class=\"levels\"><tr><th>Level</th><th>Problems</th><th>Improved</th><th>Matched</th>"
      "<th>Fallback</th><th>Regressed</th><th>Failed</th><th>Errors</th><th>Geomean vs baseline</th>"
      "<th>vs eager</th><th>vs torch.compile</th><th>fast_0</th><th>fast_1</th><th>fast_1.5</th>"
      "<th>fast_2</th></tr>\n";
  auto row = [&](const LevelSummary& l, const std::string& name) {
    std::string r = "<tr>" + td(name) + td(std::to_string(l.problems), true) +
                    td(std::to_string(l.improved), true) + td(std::to_string(l.matched), true) +
                    td(std::to_string(l.fallback), true) + td(std::to_string(l.regressed), true) +
                    td(std::to_string(l.failed), true) + td(std::to_string(l.errors), true) +
                    td(fmt::speedup(l.geomean_speedup), true) +
                    td(fmt::speedup(l.geomean_vs_eager), true) +
                    td(fmt::speedup(l.geomean_vs_compile), true);
    for (int i = 0; i < kFastPCount; ++i) r += td(fmt::fraction_pct(l.fast_p[i]), true);
    return r + "</tr>\n";
  };
  for (const auto& l : s.levels) t += row(l, l.level);
  if (s.levels.size() > 1) t += row(s.overall, "all");
  return t + "</table>\n";
}

// ", driver 580.159.04, CUDA 13.0, torch 2.11.0, triton 3.6.0": the versions the run
// recorded; one it did not record (a host run has no driver) is left out, not shown empty.
std::string versions_html(const Environment& env) {
  std::string t;
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"driver", &env.driver},
                                    {"CUDA", &env.cuda}, {"torch", &env.torch}, {"triton", &env.triton}})
    if (!value->empty()) t += std::string(", ") + name + " " + html_escape(*value);
  return t;
}

std::string html_report(const Summary& s, const std::vector<ExperimentPoint>& progress) {
  const RunInfo& info = *s.info;
  std::string b = "<h1>kgate report: " + html_escape(info.suite) + "</h1>\n";
  b += "<p>Run <code>" + html_escape(info.run_id) + "</code> (" +
       (info.kind == RunKind::kCheck ? "check" : "run") + ") on " + html_escape(info.env.gpu) +
       ", started " + html_escape(info.started_at) + ", seed " + std::to_string(info.seed) +
       versions_html(info.env) +
       ", kgate " + html_escape(info.env.kgate_version) + " (" +
       html_escape(fmt::short_sha(info.env.git_sha)) + ")" +
       (info.interrupted ? ", <b>interrupted</b> (partial results)" : "") +
       (info.missing_shards.empty() ? "" : ", <b>incomplete merge</b> (shards missing)") + ".</p>\n";
  b += std::string("<p class=\"") + (s.pipeline_failed ? "fail\">FAIL" : "pass\">PASS") +
       (info.interrupted ? " (" + html_escape(kInterruptedWhy) + ")" : std::string()) +
       (info.missing_shards.empty() ? std::string() : " (" + html_escape(missing_shards_why(info)) + ")") +
       history_errors_html(info) + "</p><p>" + std::to_string(s.correctness_regressions) + " correctness regressions, " +
       std::to_string(s.gate_failures) + " gate failures, " +
       std::to_string(s.performance_regressions) + " performance regressions, " +
       std::to_string(s.errors) + " errors.</p>\n";

  b += "<h2>Levels</h2>\n" + html_level_table(s);
  b += "<p>Geomeans are over correct results; fast_p = share of all problems that are correct "
       "with speedup &gt; p.</p>\n";
  if (has_dispatch(s))
    b += "<h2>Dispatch-aware search (torch.compile's Triton kernels)</h2>\n" +
         html_table(dispatch_level_table(s), "dispatch") + "<p>" + html_escape(kFallbackNote) + "</p>\n" +
         html_table(dispatch_problem_table(s), "dispatch-problems");

  std::vector<std::string> cats;
  svg::Series base{"vs baseline", {}}, eager{"vs eager", {}}, compile{"vs torch.compile", {}};
  for (const auto& l : s.levels) {
    cats.push_back(l.level);
    base.values.push_back(or_nan(l.geomean_speedup));
    eager.values.push_back(or_nan(l.geomean_vs_eager));
    compile.values.push_back(or_nan(l.geomean_vs_compile));
  }
  b += "<h2>Charts</h2>\n";
  b += svg::grouped_bars("Geomean speedup per level", cats, {base, eager, compile}, 1.0, "x");

  std::vector<std::string> labels;
  std::vector<double> speedups, roofline;
  for (const auto& row : s.rows) {
    if (labels.size() >= kHtmlMaxChartRows) break;
    labels.push_back(row.record->level + "/" + row.record->problem);
    speedups.push_back(row.correct ? row.record->speedup
                                   : std::numeric_limits<double>::quiet_NaN());
    roofline.push_back(100 * row.record->pct_roofline);  // records hold a fraction
  }
  b += svg::horizontal_bars("Speedup per problem (correct results)", labels, speedups, 1.0, "x");
  b += svg::horizontal_bars("Roofline per problem (0-100 %)", labels, roofline, 0, "%", 100);
  if (s.rows.size() > labels.size())
    b += "<p>Charts show the first " + std::to_string(labels.size()) + " of " +
         std::to_string(s.rows.size()) + " problems; the table below has all.</p>\n";

  b += progress_charts(progress);

  auto worst = s.worst(s.rows.size());
  if (!worst.empty()) {
    b += "<h2>Failures</h2>\n";
    for (const ProblemRow* row : worst) {
      b += "<details><summary><b>" + html_escape(to_string(row->failure)) + "</b> " +
           html_escape(row->record->level + "/" + row->record->problem) + ": " +
           html_escape(row->message) + "</summary>";
      if (!row->record->gates.empty())
        b += "<pre>" + html_escape(gate_table_text(*row->record)) + "</pre>";
      b += "</details>\n";
    }
  }

  b += html_accepted_table(s);

  b += "<h2>Problems</h2>\n<table class=\"problems\"><tr><th>Level</th><th>Problem</th>"
       "<th>Baseline</th><th>Best</th><th>Speedup [CI]</th><th>vs eager</th>"
       "<th>vs torch.compile</th><th>Outcome</th><th>Experiments</th><th>Kept</th>"
       "<th>Best commit</th><th>Roofline</th></tr>\n";
  for (const auto& row : s.rows) {
    const ProblemResult& r = *row.record;
    bool failed = row.failure != FailureKind::kNone && row.failure != FailureKind::kSkipped;
    b += std::string(failed ? "<tr class=\"f\">" : "<tr>") + td(r.level) + td(r.problem) +
         td(fmt::us(r.baseline_us) + (r.baseline_kind.empty() ? "" : " (" + r.baseline_kind + ")"),
            true) +
         td(fmt::us(r.best_us), true) +
         td(fmt::result_speedup(r.best_us, r.speedup, r.speedup_lo, r.speedup_hi), true) +
         vs_reference_td(r, "eager", row.speedup_vs_eager) +
         vs_reference_td(r, "compile", row.speedup_vs_compile) +
         td(to_string(r.outcome) +
            (failed ? " (" + to_string(row.failure) + ")" : std::string())) +
         td(std::to_string(r.experiments), true) + td(std::to_string(r.kept), true) +
         td(fmt::short_sha(r.best_commit)) + td(fmt::pct(r.pct_roofline), true) + "</tr>\n";
  }
  b += "</table>\n";
  // An empty vs-reference column says why (as report.md does).
  std::string missing;
  for (const auto& m : missing_references(s))
    missing += "<li>" + html_escape(m.what) + ": " + html_escape(m.why) + "</li>";
  if (!missing.empty())
    b += "<p>Not measured against the reference model:</p>\n<ul class=\"missing\">" + missing +
         "</ul>\n";
  return html_page("kgate report: " + info.suite, b);
}

}  // namespace kgate::report

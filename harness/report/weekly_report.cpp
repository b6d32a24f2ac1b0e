#include "report/weekly_report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "report/format.h"
#include "report/html_reporter.h"
#include "report/record_io.h"
#include "report/summary.h"
#include "report/svg_chart.h"

namespace kgate::report {
namespace {

// "YYYY-MM-DD" -> days since the epoch; throws UsageError.
int64_t parse_date(const std::string& d) {
  int y = 0, m = 0, day = 0;
  char tail = 0;
  if (d.size() != 10 || std::sscanf(d.c_str(), "%4d-%2d-%2d%c", &y, &m, &day, &tail) != 3 ||
      m < 1 || m > 12 || day < 1 || day > 31)
    throw UsageError("--since: expected a date YYYY-MM-DD, got \"" + d + "\"");
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = m - 1;
  tm.tm_mday = day;
  return static_cast<int64_t>(timegm(&tm)) / 86400;
}

std::string format_date(int64_t days) {
  std::time_t t = static_cast<std::time_t>(days * 86400);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string opt_speedup(const std::optional<double>& v) { return fmt::speedup(v); }

}  // namespace

WeeklyReport weekly_report(const History& h, const std::string& since_arg) {
  WeeklyReport w;
  int64_t start = 0;
  if (since_arg.empty()) {
    std::string latest = h.latest_start();
    if (latest.size() < 10) throw UsageError(h.path() + ": the history has no runs");
    start = parse_date(latest.substr(0, 10)) - 6;
  } else {
    start = parse_date(since_arg);
  }
  w.since = format_date(start);
  w.until = format_date(start + 7);

  // Night = UTC date of the run start; a later run of the same night replaces a problem's
  // earlier result (a re-run), so each night counts every problem once.
  std::map<std::string, RunRecords> nights;
  std::map<std::string, std::map<std::string, ProblemResult>> night_results;
  for (const auto& row : h.runs(w.since, w.until)) {
    RunRecords run = h.load_run(row.run_id);
    std::string night = row.started_at.substr(0, 10);
    nights[night].info = run.info;
    w.threshold = run.info.regression_threshold;
    for (auto& r : run.results) night_results[night][r.level + "/" + r.problem] = std::move(r);
  }

  std::map<std::string, ProblemTrend> trends;
  std::map<std::string, int> worst_severity;
  for (auto& [night, run] : nights) {
    for (auto& [key, r] : night_results[night]) run.results.push_back(r);
    w.nights.push_back(night);
  }
  std::vector<std::string> level_ids;
  for (const auto& [night, run] : nights)
    for (const auto& r : run.results)
      if (std::find(level_ids.begin(), level_ids.end(), r.level) == level_ids.end())
        level_ids.push_back(r.level);
  std::sort(level_ids.begin(), level_ids.end());
  w.levels = level_ids;
  for (const auto& l : level_ids) {
    w.geomean[l].assign(w.nights.size(), std::nullopt);
    w.problems[l].assign(w.nights.size(), 0);
  }

  for (size_t i = 0; i < w.nights.size(); ++i) {
    const RunRecords& run = nights[w.nights[i]];
    Summary s = summarize(run);
    for (const auto& l : s.levels) {
      w.geomean[l.level][i] = l.geomean_speedup;
      w.problems[l.level][i] = l.problems;
    }
    for (const auto& row : s.rows) {
      const ProblemResult& r = *row.record;
      std::string key = r.level + "/" + r.problem;
      ProblemTrend& t = trends[key];
      t.problem = key;
      if (row.failure == FailureKind::kCorrectnessRegression ||
          row.failure == FailureKind::kPerformanceRegression ||
          row.failure == FailureKind::kGateFailure) {
        int sev = row.failure == FailureKind::kPerformanceRegression ? 1 : 2;
        if (sev > worst_severity[key]) {
          worst_severity[key] = sev;
          t.regression = to_string(row.failure) + " on " + w.nights[i];
        }
      }
      if (!row.correct || !(r.speedup > 0)) continue;
      if (t.first_speedup == 0) t.first_speedup = r.speedup;
      t.last_speedup = r.speedup;
      if (r.speedup > t.best_speedup) {
        t.best_speedup = r.speedup;
        t.best_night = w.nights[i];
      }
    }
  }

  for (const auto& [key, t] : trends) {
    bool slower = t.first_speedup > 0 && t.last_speedup * w.threshold < t.first_speedup;
    if (!t.regression.empty() || slower) w.regressed.push_back(t);
    else if (t.first_speedup > 0 && t.last_speedup > t.first_speedup * w.threshold)
      w.improved.push_back(t);
    if (t.best_speedup > 0) w.best.push_back(t);
  }
  std::stable_sort(w.best.begin(), w.best.end(), [](const ProblemTrend& a, const ProblemTrend& b) {
    return a.best_speedup > b.best_speedup;
  });
  if (w.best.size() > 10) w.best.resize(10);
  return w;
}

std::string weekly_markdown(const WeeklyReport& w) {
  std::string t = "# kgate weekly report: " + w.since + " to " + w.until + " (exclusive)\n\n";
  t += std::to_string(w.nights.size()) + " nights with runs.\n\n## Geomean speedup per level per night\n\n| Level |";
  for (const auto& n : w.nights) t += " " + n + " |";
  t += "\n|---|";
  for (size_t i = 0; i < w.nights.size(); ++i) t += "--:|";
  t += "\n";
  for (const auto& l : w.levels) {
    t += "| " + fmt::md_cell(l) + " |";
    for (const auto& g : w.geomean.at(l)) t += " " + opt_speedup(g) + " |";
    t += "\n";
  }
  auto list = [&](const char* title, const std::vector<ProblemTrend>& v) {
    t += std::string("\n## ") + title + "\n\n";
    if (v.empty()) {
      t += "None.\n";
      return;
    }
    t += "| Problem | First | Last | Best (night) | Regression |\n|---|--:|--:|--:|---|\n";
    for (const auto& p : v)
      t += "| " + fmt::md_cell(p.problem) + " | " + fmt::speedup(p.first_speedup) + " | " +
           fmt::speedup(p.last_speedup) + " | " + fmt::speedup(p.best_speedup) + " (" +
           p.best_night + ") | " + fmt::md_cell(p.regression.empty() ? "-" : p.regression) + " |\n";
  };
  list("Improved", w.improved);
  list("Regressed", w.regressed);
  list("Best speedups", w.best);
  return t;
}

std::string weekly_html(const WeeklyReport& w) {
  std::string b = "<h1>kgate weekly report: " + fmt::html_escape(w.since) + " to " +
                  fmt::html_escape(w.until) + "</h1>\n";
  std::vector<svg::Series> series;
  for (const auto& l : w.levels) {
    svg::Series s{l, {}};
    for (const auto& g : w.geomean.at(l))
      s.values.push_back(g ? *g : std::numeric_limits<double>::quiet_NaN());
    series.push_back(std::move(s));
  }
  b += svg::lines("Geomean speedup per level per night", w.nights, series, 1.0, "x");
  b += "<table><tr><th>Level</th>";
  for (const auto& n : w.nights) b += "<th>" + fmt::html_escape(n) + "</th>";
  b += "</tr>\n";
  for (const auto& l : w.levels) {
    b += "<tr><td>" + fmt::html_escape(l) + "</td>";
    for (const auto& g : w.geomean.at(l)) b += "<td class=\"n\">" + opt_speedup(g) + "</td>";
    b += "</tr>\n";
  }
  b += "</table>\n";
  auto list = [&](const char* title, const std::vector<ProblemTrend>& v) {
    b += std::string("<h2>") + title + "</h2>\n";
    if (v.empty()) {
      b += "<p>None.</p>\n";
      return;
    }
    b += "<table><tr><th>Problem</th><th>First</th><th>Last</th><th>Best</th><th>Night</th>"
         "<th>Regression</th></tr>\n";
    for (const auto& p : v)
      b += "<tr><td>" + fmt::html_escape(p.problem) + "</td><td class=\"n\">" +
           fmt::speedup(p.first_speedup) + "</td><td class=\"n\">" + fmt::speedup(p.last_speedup) +
           "</td><td class=\"n\">" + fmt::speedup(p.best_speedup) + "</td><td>" +
           fmt::html_escape(p.best_night) + "</td><td>" + fmt::html_escape(p.regression) +
           "</td></tr>\n";
    b += "</table>\n";
  };
  list("Improved", w.improved);
  list("Regressed", w.regressed);
  list("Best speedups", w.best);
  return html_page("kgate weekly report " + w.since, b);
}

nlohmann::json weekly_json(const WeeklyReport& w) {
  auto trend = [](const std::vector<ProblemTrend>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : v)
      a.push_back({{"problem", p.problem},
                   {"first_speedup", p.first_speedup},
                   {"last_speedup", p.last_speedup},
                   {"best_speedup", p.best_speedup},
                   {"best_night", p.best_night},
                   {"regression", p.regression}});
    return a;
  };
  nlohmann::json levels = nlohmann::json::object();
  for (const auto& l : w.levels) {
    nlohmann::json g = nlohmann::json::array();
    for (const auto& v : w.geomean.at(l)) g.push_back(v ? nlohmann::json(*v) : nlohmann::json(nullptr));
    levels[l] = {{"geomean_speedup", g}, {"problems", w.problems.at(l)}};
  }
  return {{"version", kWeeklyVersion}, {"kind", "kgate-weekly"}, {"since", w.since},
          {"until", w.until},          {"nights", w.nights},     {"levels", levels},
          {"threshold", w.threshold},  {"improved", trend(w.improved)},
          {"regressed", trend(w.regressed)}, {"best", trend(w.best)}};
}

std::vector<std::string> write_weekly(const WeeklyReport& w, const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  auto put = [&](const char* name, const std::string& text) {
    std::string p = (fs::path(out_dir) / name).string();
    write_file_atomic(p, text);
    files.push_back(p);
  };
  put("weekly.md", weekly_markdown(w));
  put("weekly.html", weekly_html(w));
  put("weekly.json", weekly_json(w).dump(2) + "\n");
  return files;
}

}  // namespace kgate::report

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

double or_nan(const std::optional<double>& v) { return v ? *v : std::numeric_limits<double>::quiet_NaN(); }

// Every problem's latest result among the runs of [since, until), as one set of records (the
// latest run's info): what a week, or a night, counts.
RunRecords latest_results(const History& h, const std::string& since, const std::string& until) {
  RunRecords out;
  std::map<std::string, ProblemResult> latest;
  for (const auto& row : h.runs(since, until)) {
    RunRecords run = h.load_run(row.run_id);
    out.info = run.info;
    for (auto& r : run.results) latest[r.level + "/" + r.problem] = std::move(r);
  }
  for (auto& [key, r] : latest) out.results.push_back(std::move(r));
  return out;
}

// The lowest correct night strictly between the first and the last correct night, when it
// is below both of them by more than the threshold.
void find_dip(ProblemTrend& t, const std::vector<std::string>& nights, double threshold) {
  std::vector<size_t> at;
  for (size_t i = 0; i < t.speedup.size(); ++i)
    if (t.speedup[i]) at.push_back(i);
  if (at.size() < 3) return;
  const double ends = std::min(*t.speedup[at.front()], *t.speedup[at.back()]);
  size_t low = at[1];
  for (size_t k = 1; k + 1 < at.size(); ++k)
    if (*t.speedup[at[k]] < *t.speedup[low]) low = at[k];
  if (*t.speedup[low] * threshold < ends) {
    t.dip_night = nights[low];
    t.dip_speedup = *t.speedup[low];
  }
}

// Days since the epoch of each "YYYY-MM-DD" (the charts' x positions).
std::vector<double> days_of(const std::vector<std::string>& dates) {
  std::vector<double> x;
  for (const auto& d : dates) x.push_back(static_cast<double>(parse_date(d.substr(0, 10))));
  return x;
}

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
  std::map<std::string, std::pair<ProblemResult, RunInfo>> last_record;  // for the accepted result
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
      if (t.speedup.empty()) {
        t.speedup.assign(w.nights.size(), std::nullopt);
        t.speedup_lo.assign(w.nights.size(), std::nullopt);
        t.speedup_hi.assign(w.nights.size(), std::nullopt);
      }
      last_record.insert_or_assign(key, std::make_pair(r, run.info));
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
      t.speedup[i] = r.speedup;
      if (r.speedup_lo > 0 && r.speedup_hi >= r.speedup_lo) {
        t.speedup_lo[i] = r.speedup_lo;
        t.speedup_hi[i] = r.speedup_hi;
      }
      if (t.first_speedup == 0) t.first_speedup = r.speedup;
      t.last_speedup = r.speedup;
      if (r.speedup > t.best_speedup) {
        t.best_speedup = r.speedup;
        t.best_night = w.nights[i];
      }
    }
  }

  for (auto& [key, t] : trends) {
    find_dip(t, w.nights, w.threshold);
    if (auto lr = last_record.find(key); lr != last_record.end()) {
      const auto& [r, info] = lr->second;
      if (auto a = h.accepted(key, gpu_key(r, info), r.config_key); a && a->speedup > 0)
        t.accepted_speedup = a->speedup;
    }
  }
  for (const auto& [key, t] : trends) {
    w.trends.push_back(t);
    if (!t.dip_night.empty()) w.dipped.push_back(t);
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

  // The weeks up to this one: each week's latest result per problem, summarized.
  for (int k = kWeeklyTrendWeeks - 1; k >= 0; --k) {
    const int64_t ws = start - 7 * static_cast<int64_t>(k);
    const size_t idx = w.weeks.size();
    w.weeks.push_back(format_date(ws));
    RunRecords week = latest_results(h, format_date(ws), format_date(ws + 7));
    if (week.results.empty()) continue;
    Summary s = summarize(week);
    for (const auto& l : s.levels) {
      auto& g = w.week_geomean[l.level];
      g.resize(static_cast<size_t>(kWeeklyTrendWeeks), std::nullopt);
      g[idx] = l.geomean_speedup;
    }
  }
  for (auto& [level, g] : w.week_geomean) g.resize(w.weeks.size(), std::nullopt);
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
  t += "\n## Geomean speedup per level per week\n\nEach week: every problem's latest result of the "
       "week.\n\n| Level |";
  for (const auto& wk : w.weeks) t += " " + wk + " |";
  t += "\n|---|";
  for (size_t i = 0; i < w.weeks.size(); ++i) t += "--:|";
  t += "\n";
  for (const auto& [level, g] : w.week_geomean) {
    t += "| " + fmt::md_cell(level) + " |";
    for (const auto& v : g) t += " " + opt_speedup(v) + " |";
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
  t += "\n## Dips between the endpoints\n\n";
  if (w.dipped.empty()) {
    t += "None.\n";
  } else {
    t += "| Problem | First | Lowest (night) | Last | Accepted |\n|---|--:|--:|--:|--:|\n";
    for (const auto& p : w.dipped)
      t += "| " + fmt::md_cell(p.problem) + " | " + fmt::speedup(p.first_speedup) + " | " +
           fmt::speedup(p.dip_speedup) + " (" + p.dip_night + ") | " + fmt::speedup(p.last_speedup) + " | " +
           opt_speedup(p.accepted_speedup) + " |\n";
  }
  return t;
}

std::string weekly_html(const WeeklyReport& w) {
  std::string b = "<h1>kgate weekly report: " + fmt::html_escape(w.since) + " to " +
                  fmt::html_escape(w.until) + "</h1>\n";
  auto speedup_axes = [](const std::vector<std::string>& dates, double reference, const std::string& label) {
    svg::TrendAxes a;
    a.x = days_of(dates);
    a.log_scale = true;
    a.reference = reference;
    a.reference_label = label;
    a.unit = "x";
    return a;
  };
  auto level_series = [](const std::map<std::string, std::vector<std::optional<double>>>& by_level,
                         const std::vector<std::string>& levels) {
    std::vector<svg::TrendSeries> series;
    for (const auto& l : levels) {
      svg::TrendSeries s{l, {}, {}, {}, {}, true};
      for (const auto& g : by_level.at(l)) s.values.push_back(or_nan(g));
      series.push_back(std::move(s));
    }
    return series;
  };
  b += svg::trend("Geomean speedup per level per night (log scale)", w.nights,
                  level_series(w.geomean, w.levels), speedup_axes(w.nights, 1.0, "1.0x"));
  std::vector<std::string> week_levels;
  for (const auto& [level, g] : w.week_geomean) week_levels.push_back(level);
  std::vector<std::string> week_labels;
  for (const auto& wk : w.weeks) week_labels.push_back("week of " + wk);
  b += svg::trend("Geomean speedup per level per week, last " + std::to_string(w.weeks.size()) +
                      " weeks (log scale)",
                  week_labels, level_series(w.week_geomean, week_levels), speedup_axes(w.weeks, 1.0, "1.0x"));
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

  // Per-problem trends: the regressed, dipped and improved problems (at most
  // kWeeklyMaxProblemCharts), each night's speedup with its interval, the dip ringed, the
  // accepted speedup as the reference line.
  std::vector<const ProblemTrend*> charted;
  auto chart = [&](const std::vector<ProblemTrend>& v) {
    for (const auto& p : v) {
      if (charted.size() >= kWeeklyMaxProblemCharts) return;
      bool seen = false;
      for (const ProblemTrend* c : charted) seen = seen || c->problem == p.problem;
      if (seen) continue;
      for (const auto& t : w.trends)
        if (t.problem == p.problem) charted.push_back(&t);
    }
  };
  chart(w.regressed);
  chart(w.dipped);
  chart(w.improved);
  if (!charted.empty()) {
    b += "<h2>Per-problem trends</h2>\n<p>Speedup per night with its 95 % interval (log scale); the "
         "dashed line is the accepted result's speedup (1.0x when nothing is accepted); a ringed "
         "point is a dip between the endpoints.</p>\n";
    for (const ProblemTrend* p : charted) {
      svg::TrendSeries s{p->problem, {}, {}, {}, {}, true};
      for (size_t i = 0; i < w.nights.size(); ++i) {
        s.values.push_back(i < p->speedup.size() ? or_nan(p->speedup[i]) : or_nan(std::nullopt));
        s.lo.push_back(i < p->speedup_lo.size() ? or_nan(p->speedup_lo[i]) : or_nan(std::nullopt));
        s.hi.push_back(i < p->speedup_hi.size() ? or_nan(p->speedup_hi[i]) : or_nan(std::nullopt));
        s.flagged.push_back(!p->dip_night.empty() && w.nights[i] == p->dip_night);
      }
      const double ref = p->accepted_speedup ? *p->accepted_speedup : 1.0;
      const std::string label = p->accepted_speedup ? "accepted " + fmt::speedup(*p->accepted_speedup) : "1.0x";
      b += svg::trend(p->problem, w.nights, {s}, speedup_axes(w.nights, ref, label));
    }
  }
  return html_page("kgate weekly report " + w.since, b);
}

nlohmann::json weekly_json(const WeeklyReport& w) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto opts = [&](const std::vector<std::optional<double>>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : v) a.push_back(opt(x));
    return a;
  };
  auto trend = [&](const std::vector<ProblemTrend>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : v)
      a.push_back({{"problem", p.problem},
                   {"first_speedup", p.first_speedup},
                   {"last_speedup", p.last_speedup},
                   {"best_speedup", p.best_speedup},
                   {"best_night", p.best_night},
                   {"regression", p.regression},
                   {"accepted_speedup", opt(p.accepted_speedup)},
                   {"dip_night", p.dip_night},
                   {"dip_speedup", p.dip_speedup}});
    return a;
  };
  nlohmann::json problems = nlohmann::json::object();
  for (const auto& p : w.trends)
    problems[p.problem] = {{"speedup", opts(p.speedup)},
                           {"speedup_lo", opts(p.speedup_lo)},
                           {"speedup_hi", opts(p.speedup_hi)},
                           {"accepted_speedup", opt(p.accepted_speedup)}};
  nlohmann::json weeks = nlohmann::json::object();
  for (const auto& [level, g] : w.week_geomean) weeks[level] = opts(g);
  nlohmann::json levels = nlohmann::json::object();
  for (const auto& l : w.levels) {
    nlohmann::json g = nlohmann::json::array();
    for (const auto& v : w.geomean.at(l)) g.push_back(v ? nlohmann::json(*v) : nlohmann::json(nullptr));
    levels[l] = {{"geomean_speedup", g}, {"problems", w.problems.at(l)}};
  }
  return {{"version", kWeeklyVersion}, {"kind", "kgate-weekly"}, {"since", w.since},
          {"until", w.until},          {"nights", w.nights},     {"levels", levels},
          {"threshold", w.threshold},  {"improved", trend(w.improved)},
          {"regressed", trend(w.regressed)}, {"best", trend(w.best)},
          {"dipped", trend(w.dipped)},       {"problems", problems},
          {"weeks", w.weeks},                {"week_geomean_speedup", weeks}};
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

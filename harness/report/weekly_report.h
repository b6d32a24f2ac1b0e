#pragma once
// `kgate report --db FILE --weekly [--since DATE]`: the week in the history store. Every
// night's numbers come from summarize() over that night's records (the same aggregation as
// the nightly report), every week's from summarize() over its latest record per problem;
// this file only picks the records and lays out the trends: the geomean per level per
// night and per week (the last kWeeklyTrendWeeks), and per problem its nights with their
// intervals, the accepted speedup and a dip between the endpoints.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/history.h"

namespace kgate::report {

// 2: the geomean per level per week over the last weeks, per-problem nights (speedup and
// CI), the accepted speedup and dips between the endpoints.
inline constexpr int kWeeklyVersion = 2;
inline constexpr int kWeeklyTrendWeeks = 8;        // the per-week chart: this week and 7 before
inline constexpr size_t kWeeklyMaxProblemCharts = 12;

struct ProblemTrend {
  std::string problem;       // "<level>/<problem>"
  double first_speedup = 0;  // first correct result in the window
  double last_speedup = 0;   // last correct result
  double best_speedup = 0;
  std::string best_night;
  std::string regression;    // "" or the failure kind of its worst night
  // Per night (aligned with WeeklyReport::nights; nullopt = no correct result that night).
  std::vector<std::optional<double>> speedup, speedup_lo, speedup_hi;
  // The speedup of the latest accepted result of its (problem, GPU, config), those of the
  // week's last record of the problem; nullopt = nothing accepted.
  std::optional<double> accepted_speedup;
  // A dip: the lowest correct night strictly between the first and the last, when it is
  // below both endpoints by more than the threshold (a drop that recovered by the week's
  // end, which first-vs-last alone would miss). "" = none.
  std::string dip_night;
  double dip_speedup = 0;
};

struct WeeklyReport {
  std::string since, until;                 // [since, until) as YYYY-MM-DD
  std::vector<std::string> nights;          // dates with at least one run, oldest first
  std::vector<std::string> levels;          // every level seen
  // level -> geomean speedup per night (aligned with `nights`; nullopt = no correct result)
  std::map<std::string, std::vector<std::optional<double>>> geomean;
  std::map<std::string, std::vector<int>> problems;  // level -> problems per night
  std::vector<ProblemTrend> improved;       // last > first by more than the threshold
  std::vector<ProblemTrend> regressed;      // slower by more than it, or a failing night
  std::vector<ProblemTrend> best;           // top 10 best speedups of the week
  std::vector<ProblemTrend> dipped;         // a dip between the endpoints (see ProblemTrend)
  std::vector<ProblemTrend> trends;         // every problem seen, sorted by id
  double threshold = 1.03;
  // The weeks up to this one, oldest first (kWeeklyTrendWeeks, start dates YYYY-MM-DD), and
  // per level the geomean speedup of each week: every problem's latest result of that week,
  // summarized as a night is (nullopt = no correct result that week).
  std::vector<std::string> weeks;
  std::map<std::string, std::vector<std::optional<double>>> week_geomean;
};

// since: "YYYY-MM-DD" or "" (= six days before the latest run). Throws UsageError on a bad
// date or an empty history.
WeeklyReport weekly_report(const History& h, const std::string& since);

std::string weekly_markdown(const WeeklyReport& w);
std::string weekly_html(const WeeklyReport& w);
nlohmann::json weekly_json(const WeeklyReport& w);

// weekly.md, weekly.html, weekly.json in out_dir; returns the paths.
std::vector<std::string> write_weekly(const WeeklyReport& w, const std::string& out_dir);

}  // namespace kgate::report

#pragma once
// `kgate report --db FILE --weekly [--since DATE]`: the week in the history store. Every
// night's numbers come from summarize() over that night's records (the same aggregation as
// the nightly report); this file only picks the records and lays out the trend.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/history.h"

namespace kgate::report {

inline constexpr int kWeeklyVersion = 1;

struct ProblemTrend {
  std::string problem;       // "<level>/<problem>"
  double first_speedup = 0;  // first correct result in the window
  double last_speedup = 0;   // last correct result
  double best_speedup = 0;
  std::string best_night;
  std::string regression;    // "" or the failure kind of its worst night
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
  double threshold = 1.03;
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

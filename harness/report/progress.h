#pragma once
// The search's progress per problem, from OUT/results.tsv (one row per experiment, written by
// `kgate run`): for the HTML report's progress plots, the speedup of every experiment with
// the kept ones (the baseline and each keep: the best so far) joined.
#include <string>
#include <vector>

namespace kgate::report {

struct ExperimentPoint {
  int n = 0;              // experiment number within its problem (0 = the starter)
  std::string problem;    // the problem's name within its level (results.tsv's `problem`)
  std::string verdict;    // baseline | keep | revert | violation | agent_error | timeout
  double speedup = 0;     // vs the starter; 0 = not measured
};

inline constexpr size_t kHtmlMaxProgressCharts = 24;

// The rows of a results.tsv text (`# kgate-results v1`, a header, one row per experiment);
// lines that are not a row (comments, the header, malformed ones) are skipped.
std::vector<ExperimentPoint> parse_results_tsv(const std::string& text);

// OUT/results.tsv parsed; empty when there is none (a merged run, a PR check) or it cannot
// be read: the plots are an extra, never a reason for a report to fail.
std::vector<ExperimentPoint> read_results_tsv(const std::string& out_dir);

// One SVG per problem (first `max_problems` in order of appearance), x = experiment number,
// y = speedup vs the starter on a log scale: every measured experiment as a point, the kept
// ones joined by a line. "" when no experiment was measured.
std::string progress_charts(const std::vector<ExperimentPoint>& points,
                            size_t max_problems = kHtmlMaxProgressCharts);

}  // namespace kgate::report

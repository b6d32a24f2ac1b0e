#include "search/experiment_record.h"

#include <cstdio>

#include "search/experiment_repo.h"

namespace kgate::search {
namespace {

std::string num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// TSV cells cannot hold tabs or newlines.
std::string cell(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

report::TimingFields timing_fields(ExperimentRecord& r) {
  return {r.compared_us, r.latency_us, r.speedup, r.speedup_lo, r.speedup_hi, r.pct_roofline, &r.roofline_floor_us};
}

std::string to_string(ExperimentVerdict v) { return nlohmann::json(v).get<std::string>(); }

std::string results_tsv_header() {
  return "# kgate-results v1\n"
         "experiment\tproblem\tcommit\tverdict\tfailed_gate\tlatency_us\tspeedup\t"
         "pct_roofline\tdescription\n";
}

std::string results_tsv_row(const ExperimentRecord& r) {
  std::string row;
  row += std::to_string(r.n) + "\t" + cell(r.problem) + "\t" + r.commit.substr(0, 12) + "\t" +
         to_string(r.verdict) + "\t" + cell(r.failed_gate) + "\t" +
         (r.latency_us > 0 ? num(r.latency_us, "%.3f") : "") + "\t" +
         (r.speedup_vs_starter > 0 ? num(r.speedup_vs_starter, "%.4f") : "") + "\t" +
         (r.pct_roofline > 0 ? num(r.pct_roofline * 100, "%.2f") : "") + "\t" +
         cell(r.description) + "\n";
  return row;
}

std::string results_tsv(const std::vector<ExperimentRecord>& records) {
  std::string s = results_tsv_header();
  for (const auto& r : records) s += results_tsv_row(r);
  return s;
}

std::string commit_message(const ExperimentRecord& r, const std::string& run_id) {
  std::string msg = "experiment " + std::to_string(r.n) + ": " + r.description + "\n\n";
  if (!r.reason.empty()) msg += r.reason + "\n\n";
  if (!r.violations.empty()) {
    msg += "Violations (undone):\n";
    for (const auto& v : r.violations) msg += "- " + v + "\n";
    msg += "\n";
  }
  std::vector<std::pair<std::string, std::string>> t = {
      {"Kgate-Run", run_id},
      {"Kgate-Problem", r.problem},
      {"Kgate-Experiment", std::to_string(r.n)},
      {"Kgate-Verdict", to_string(r.verdict)},
      {"Kgate-Gate", r.failed_gate.empty() ? (r.passed ? "all-passed" : "none") : r.failed_gate},
      {"Kgate-Speedup", r.speedup > 0 ? num(r.speedup, "%.4f") + " [" + num(r.speedup_lo, "%.4f") +
                                            ", " + num(r.speedup_hi, "%.4f") + "]"
                                      : "n/a"},
      {"Kgate-Baseline-Us", r.compared_us > 0 ? num(r.compared_us, "%.3f") : "n/a"},
      {"Kgate-Candidate-Us", r.latency_us > 0 ? num(r.latency_us, "%.3f") : "n/a"},
  };
  if (!r.kernel.empty()) t.push_back({"Kgate-Kernel", r.kernel});
  if (!r.point.empty()) t.push_back({"Kgate-Point", format_point(r.point)});
  msg += format_trailers(t);
  return msg;
}

}  // namespace kgate::search

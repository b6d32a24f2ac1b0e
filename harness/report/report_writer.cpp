#include "report/report_writer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "core/error.h"
#include "core/log.h"
#include "report/html_reporter.h"
#include "report/progress.h"
#include "report/json_reporter.h"
#include "report/junit_reporter.h"
#include "report/markdown_reporter.h"
#include "report/record_io.h"

namespace fs = std::filesystem;

namespace kgate::report {
namespace {

// Workflow-command escaping (GitHub's toolkit rules): data escapes % CR LF; properties
// also escape ':' and ','.
std::string escape_data(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string escape_property(const std::string& s) {
  std::string out;
  for (char c : escape_data(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

void append_step_summary(const std::string& path, const std::string& markdown) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (!out) {
    log::warn(path + ": cannot append the job summary (GITHUB_STEP_SUMMARY)");
    return;
  }
  out << markdown << "\n";
}

// "file=F,line=N," for a `kgate check` row, so the annotation lands on the changed kernel
// in the pull request's diff: F relative to the checkout ($GITHUB_WORKSPACE, else the
// working directory), N the line a static-gate finding names ("line 12:5: ..."), else 1.
// "" for a run (its candidates live in experiment workspaces, not in the repository).
std::string location_of(const Summary& s, const ProblemRow& row) {
  if (!s.info || s.info->kind != RunKind::kCheck || row.record->best_candidate.empty()) return "";
  std::error_code ec;
  const char* ws = std::getenv("GITHUB_WORKSPACE");
  fs::path root = ws && *ws ? fs::path(ws) : fs::current_path(ec);
  fs::path rel = fs::weakly_canonical(row.record->best_candidate, ec)
                     .lexically_relative(fs::weakly_canonical(root, ec));
  std::string file = rel.generic_string();
  if (ec || file.empty() || file.starts_with("..")) return "";
  std::string loc = "file=" + escape_property(file) + ",line=";
  static const std::regex line_re("line ([0-9]+):([0-9]+)");
  std::smatch m;
  if (std::regex_search(row.message, m, line_re))
    loc += m[1].str() + ",col=" + m[2].str();
  else
    loc += "1";
  return loc + ",";
}

}  // namespace

std::vector<std::string> github_annotations(const Summary& s, size_t limit) {
  std::vector<std::string> lines;
  for (const ProblemRow* row : s.worst(limit)) {
    std::string title = to_string(row->failure) + ": " + row->record->level + "/" +
                        row->record->problem;
    lines.push_back("::error " + location_of(s, *row) + "title=" + escape_property(title) +
                    "::" + escape_data(row->message));
  }
  return lines;
}

WrittenReports write_reports(const RunRecords& run, const std::string& out_dir) {
  Summary s = summarize(run);
  WrittenReports w;
  auto put = [&](const char* name, const std::string& text) {
    std::string path = (fs::path(out_dir) / name).string();
    write_file_atomic(path, text);
    w.files.push_back(path);
  };
  std::string markdown = markdown_report(s);
  put("junit.xml", junit_xml(s));
  put("report.md", markdown);
  put("report.json", json_report(s).dump(2) + "\n");
  put("report.html", html_report(s, read_results_tsv(out_dir)));  // the progress plots, for a run

  if (const char* step = std::getenv("GITHUB_STEP_SUMMARY"); step && *step) {
    append_step_summary(step, markdown);
    for (const auto& line : github_annotations(s)) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  w.pipeline_failed = s.pipeline_failed;
  w.correctness_regressions = s.correctness_regressions;
  w.performance_regressions = s.performance_regressions;
  w.gate_failures = s.gate_failures;
  w.errors = s.errors;
  w.exit_code = s.exit_code;
  return w;
}

WrittenReports write_reports(const std::string& out_dir) {
  RunRecords run = load_run_dir(out_dir);
  return write_reports(run, out_dir);
}

}  // namespace kgate::report

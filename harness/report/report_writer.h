#pragma once
// The reporting entry point for `kgate run`, `kgate check`, `kgate report` and `kgate merge`:
// read OUT/results/*.json (+ OUT/run.json), summarize once, write every report.
//   OUT/junit.xml  OUT/report.md  OUT/report.json  OUT/report.html (with the search's
//   progress plots when OUT/results.tsv is there)
// Under GitHub Actions (GITHUB_STEP_SUMMARY set) the Markdown is appended to the step
// summary and up to 10 `::error` annotations name the worst regressions and failures.
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "report/run_info.h"
#include "report/summary.h"

namespace kgate::report {

struct WrittenReports {
  std::vector<std::string> files;  // paths written
  bool pipeline_failed = false;    // Summary::pipeline_failed
  int correctness_regressions = 0;
  int performance_regressions = 0;
  int gate_failures = 0;
  int errors = 0;
  // Summary::exit_code: the status every report states (report::exit_code_of).
  ExitCode exit_code = ExitCode::kPass;
};

// Throws UsageError (missing / malformed records, naming the file) or InfraError (cannot
// write). Never leaves a half-written report file (each is written to a temp and renamed).
WrittenReports write_reports(const std::string& out_dir);

// Same, from records already in memory, into `out_dir` (the records are not rewritten).
WrittenReports write_reports(const RunRecords& run, const std::string& out_dir);

// GitHub workflow-command lines for the worst `limit` rows: "::error title=...::message";
// a `kgate check` row names its kernel file too: "::error file=F,line=N,title=...::message".
std::vector<std::string> github_annotations(const Summary& s, size_t limit = 10);

}  // namespace kgate::report

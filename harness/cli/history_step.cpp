#include "cli/history_step.h"

#include <cstdlib>
#include <filesystem>

#include "core/log.h"
#include "gates/static_gate.h"
#include "report/record_io.h"
#include "report/regression.h"
#include "report/summary.h"

namespace fs = std::filesystem;

namespace kgate::cli {

std::string history_db(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("KGATE_HISTORY");
  return env && *env ? env : "";
}

std::string config_key_of(const std::string& problem_source, const std::string& backend) {
  return gates::hash_bytes("problem " + gates::hash_file(problem_source) + "\nbackend " + backend + "\n");
}

int compare_with_history(report::RunRecords& run, const report::History& history) {
  report::compare_with_accepted(run, history);
  int failing = 0;
  for (const auto& r : run.results) {
    if (!r.vs_accepted || !r.vs_accepted->regressed) continue;
    log::warn(r.level + "/" + r.problem + ": performance regression: " + r.reason);
    if (run.info.fail_on_performance) ++failing;
  }
  return failing;
}

void log_history_error(const std::string& db, const std::exception& e) {
  const std::string what = e.what();
  log::error("history " + (what.rfind(db + ":", 0) == 0 ? what : db + ": " + what));
}

void rewrite_records(const std::string& out_dir, const report::RunRecords& run) {
  std::error_code ec;
  for (const auto& r : run.results)
    if (fs::is_regular_file(fs::path(out_dir) / "results" / report::record_file_name(r.level, r.problem), ec))
      report::write_result(out_dir, r);
}

}  // namespace kgate::cli

#include "cli/history_step.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
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

std::string log_history_error(const std::string& db, const std::exception& e) {
  const std::string what = e.what();
  std::string line = "history " + (what.rfind(db + ":", 0) == 0 ? what : db + ": " + what);
  log::error(line);
  return line;
}

ExitCode history_error_in_run_json(const std::string& run_dir, const std::string& db, const std::exception& e) {
  const std::string line = log_history_error(db, e);
  try {
    report::RunInfo info = report::load_run_info((fs::path(run_dir) / "run.json").string());
    info.history_errors.push_back(line);
    report::write_run_info(run_dir, info);
  } catch (const std::exception& re) {
    log::error("cannot keep the history error in " + run_dir + "/run.json: " + re.what());
  }
  return ExitCode::kInfra;
}

int compare_and_record(report::RunRecords& run, const std::string& db, bool record) {
  if (db.empty()) return 0;
  // The step done again (`kgate report --from DIR --db`): what it said before is replaced.
  run.info.history_errors.clear();
  int failing = 0;
  try {
    report::History history(db);
    failing = compare_with_history(run, history);
    if (record) {
      history.record_run(run);
      log::info("recorded the run in " + db + " (" + run.info.run_id + ")");
    }
  } catch (const Error& e) {
    run.info.history_errors.push_back(log_history_error(db, e));
  }
  return failing;
}

void rewrite_records(const std::string& out_dir, const report::RunRecords& run) {
  std::error_code ec;
  for (const auto& r : run.results)
    if (fs::is_regular_file(fs::path(out_dir) / "results" / report::record_file_name(r.level, r.problem), ec))
      report::write_result(out_dir, r);
  report::write_run_info(out_dir, run.info);
}

}  // namespace kgate::cli

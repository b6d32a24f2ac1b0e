#include "report/record_io.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "kgate/build_info.h"

namespace fs = std::filesystem;

namespace kgate::report {
namespace {

std::string read_text(const std::string& path) {
  return core::read_file_or_throw<UsageError>(path, path + ": cannot read the file");
}

nlohmann::json parse_object(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(path + ": malformed JSON: " + e.what());
  }
  if (!j.is_object()) throw UsageError(path + ": expected a JSON object");
  return j;
}

void check_version(const std::string& path, const nlohmann::json& j, int want) {
  auto it = j.find("version");
  if (it == j.end()) throw UsageError(path + ": missing \"version\"");
  if (!it->is_number_integer())
    throw UsageError(path + ": \"version\" must be an integer");
  int v = it->get<int>();
  if (v != want)
    throw UsageError(path + ": unknown record version " + std::to_string(v) +
                     " (this kgate reads version " + std::to_string(want) + ")");
}

void check_number(const std::string& path, const char* name, double v) {
  if (!std::isfinite(v) || v < 0)
    throw UsageError(path + ": \"" + name + "\" must be a finite number >= 0, got " +
                     std::to_string(v));
}

void check_enum(const std::string& path, const nlohmann::json& obj, const char* name,
                const nlohmann::json& parsed, const char* key = nullptr) {
  auto it = obj.find(key ? key : name);
  if (it == obj.end()) return;  // defaulted
  if (*it != parsed)
    throw UsageError(path + ": unknown value " + it->dump() + " for \"" + name + "\"");
}

std::string key_of(const ProblemResult& r) { return r.level + "/" + r.problem; }

}  // namespace

std::string planned_record_key(const std::string& id) {
  const size_t slash = id.find('/');
  return slash == std::string::npos ? id : id.substr(0, slash) + "/" + id.substr(id.rfind('/') + 1);
}

std::vector<std::string> planned_without_result(const RunRecords& run) {
  std::vector<std::string> out;
  for (const auto& r : run.results)
    if (r.outcome == Outcome::kError && r.best_commit.empty() && r.reason.rfind(kPlannedNoResult, 0) == 0)
      out.push_back(key_of(r));
  return out;
}

ProblemResult no_result_row(const RunInfo& info, const std::string& planned_id, const std::string& reason) {
  const size_t slash = planned_id.find('/');
  ProblemResult m;
  m.run_id = info.run_id;
  m.suite = info.suite;
  m.seed = info.seed;
  m.env = info.env;
  m.level = slash == std::string::npos ? "" : planned_id.substr(0, slash);
  m.problem = planned_id.substr(planned_id.rfind('/') + 1);
  m.outcome = Outcome::kError;
  m.reason = reason;
  return m;
}

namespace {
constexpr const char* kMissingShardPrefix = "no result: shard ";
}  // namespace

std::string missing_shard_reason(int index, int count) {
  return kMissingShardPrefix + std::to_string(index) + "/" + std::to_string(count) + " is missing";
}

bool is_missing_shard_row(const ProblemResult& r) {
  return r.outcome == Outcome::kError && r.best_commit.empty() && r.reason.rfind(kMissingShardPrefix, 0) == 0;
}

std::string record_file_name(const std::string& level, const std::string& problem) {
  std::string name = level + "__" + problem;
  std::replace(name.begin(), name.end(), '/', '_');
  std::replace(name.begin(), name.end(), '\\', '_');
  return name + ".json";
}

ProblemResult load_result(const std::string& path) {
  nlohmann::json j = parse_object(path);
  check_version(path, j, kRecordVersion);
  ProblemResult r;
  try {
    r = j.get<ProblemResult>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": bad field: " + e.what());
  }
  // nlohmann maps an unknown enum string to the first value; a typo must not read as
  // "improved", so every enum is checked by serializing it back.
  check_enum(path, j, "outcome", nlohmann::json(r.outcome));
  if (j.contains("gates") && j["gates"].is_array()) {
    for (size_t i = 0; i < r.gates.size() && i < j["gates"].size(); ++i) {
      const auto& g = j["gates"][i];
      std::string where = "gates[" + std::to_string(i) + "].";
      check_enum(path, g, (where + "gate").c_str(), nlohmann::json(r.gates[i].gate), "gate");
      check_enum(path, g, (where + "status").c_str(), nlohmann::json(r.gates[i].status), "status");
      check_enum(path, g, (where + "fault").c_str(), nlohmann::json(r.gates[i].fault), "fault");
    }
  }
  if (!r.error_kind.empty() && r.error_kind != kProblemErrorKind)
    throw UsageError(path + ": bad \"error_kind\": \"" + r.error_kind + "\" (\"" + kProblemErrorKind +
                     "\" or absent)");
  if (!r.error_kind.empty() && r.outcome != Outcome::kError)
    throw UsageError(path + ": \"error_kind\" is for an outcome \"error\", not \"" + nlohmann::json(r.outcome).get<std::string>() + "\"");
  if (r.problem.empty()) throw UsageError(path + ": missing \"problem\"");
  if (r.level.empty()) throw UsageError(path + ": missing \"level\"");
  check_number(path, "baseline_us", r.baseline_us);
  check_number(path, "best_us", r.best_us);
  check_number(path, "speedup", r.speedup);
  check_number(path, "speedup_lo", r.speedup_lo);
  check_number(path, "speedup_hi", r.speedup_hi);
  check_number(path, "eager_us", r.eager_us);
  check_number(path, "compile_us", r.compile_us);
  check_number(path, "pct_roofline", r.pct_roofline);
  check_number(path, "wall_s", r.wall_s);
  if (r.experiments < 0 || r.kept < 0)
    throw UsageError(path + ": \"experiments\" and \"kept\" must be >= 0");
  return r;
}

RunInfo load_run_info(const std::string& path) {
  nlohmann::json j = parse_object(path);
  check_version(path, j, kRunInfoVersion);
  RunInfo info;
  try {
    info = j.get<RunInfo>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": bad field: " + e.what());
  }
  // Index 0: a merge that lacks the shards it names (missing_shards), no one shard.
  const bool incomplete_merge = info.shard.index == 0 && info.shard.count > 1 && !info.missing_shards.empty();
  if (info.shard.count < 1 || (info.shard.index < 1 && !incomplete_merge) || info.shard.index > info.shard.count)
    throw UsageError(path + ": bad shard " + std::to_string(info.shard.index) + "/" +
                     std::to_string(info.shard.count));
  if (!info.missing_shards.empty() && info.shard.index != 0)
    throw UsageError(path + ": shard " + std::to_string(info.shard.index) + "/" + std::to_string(info.shard.count) +
                     " names missing shards (only a merge, shard index 0, does)");
  for (int k : info.missing_shards)
    if (k < 1 || k > info.shard.count)
      throw UsageError(path + ": bad missing shard " + std::to_string(k) + " of " + std::to_string(info.shard.count));
  if (!info.shard_plans.empty() && info.shard_plans.size() != static_cast<size_t>(info.shard.count))
    throw UsageError(path + ": " + std::to_string(info.shard_plans.size()) + " shard plans for " +
                     std::to_string(info.shard.count) + " shards");
  return info;
}

RunRecords load_run_dir(const std::string& out_dir) {
  std::error_code ec;
  if (!fs::is_directory(out_dir, ec))
    throw UsageError(out_dir + ": not a directory");
  fs::path results_dir = fs::path(out_dir) / "results";
  // A shard that was given no problems (more shards than problems) has run.json with an
  // empty plan and no records: an empty run, not an error.
  auto empty_shard = [&]() -> std::optional<RunRecords> {
    fs::path info_path = fs::path(out_dir) / "run.json";
    if (!fs::exists(info_path, ec)) return std::nullopt;
    RunRecords run;
    run.info = load_run_info(info_path.string());
    if (!run.info.planned.empty()) return std::nullopt;
    return run;
  };
  if (!fs::is_directory(results_dir, ec)) {
    if (auto e = empty_shard()) return *e;
    throw UsageError(results_dir.string() + ": no result records (directory missing)");
  }

  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(results_dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  }
  if (ec) throw UsageError(results_dir.string() + ": cannot list: " + ec.message());
  if (files.empty()) {
    if (auto e = empty_shard()) return *e;
    throw UsageError(results_dir.string() + ": no result records (*.json)");
  }
  std::sort(files.begin(), files.end());

  RunRecords run;
  fs::path info_path = fs::path(out_dir) / "run.json";
  const bool has_info = fs::exists(info_path, ec);
  if (has_info) run.info = load_run_info(info_path.string());
  // `kgate merge --latest` combines the records of several runs, which run.json lists.
  const std::vector<std::string>& merged = run.info.merged_runs;
  std::map<std::string, std::string> seen;  // key -> file
  for (const auto& f : files) {
    ProblemResult r = load_result(f.string());
    auto [it, fresh] = seen.emplace(key_of(r), f.string());
    if (!fresh)
      throw UsageError(f.string() + ": duplicate record for " + key_of(r) + " (also in " +
                       it->second + ")");
    if (!merged.empty()) {
      if (std::find(merged.begin(), merged.end(), r.run_id) == merged.end())
        throw UsageError(f.string() + ": run_id \"" + r.run_id + "\" is none of the runs " +
                         info_path.string() + " combines");
    } else if (!run.results.empty() && r.run_id != run.results.front().run_id) {
      throw UsageError(f.string() + ": run_id \"" + r.run_id + "\" differs from \"" +
                       run.results.front().run_id + "\" of the other records");
    }
    run.results.push_back(std::move(r));
  }
  std::sort(run.results.begin(), run.results.end(),
            [](const ProblemResult& a, const ProblemResult& b) {
              return std::tie(a.level, a.problem) < std::tie(b.level, b.problem);
            });

  if (has_info) {
    if (merged.empty() && !run.info.run_id.empty() && !run.results.front().run_id.empty() &&
        run.info.run_id != run.results.front().run_id)
      throw UsageError(info_path.string() + ": run_id \"" + run.info.run_id +
                       "\" differs from the records' \"" + run.results.front().run_id + "\"");
  } else {
    log::warn(info_path.string() + " is missing; taking run details from the records");
    const ProblemResult& first = run.results.front();
    run.info.run_id = first.run_id;
    run.info.suite = first.suite;
    run.info.seed = first.seed;
    run.info.env = first.env;
  }
  // A planned problem without a record (the run was killed or interrupted before it
  // finished) is in every report as an error that says so, never silently absent.
  std::set<std::string> have;
  for (const auto& r : run.results) have.insert(key_of(r));
  bool added = false;
  for (const auto& key : run.info.planned) {
    if (have.count(planned_record_key(key))) continue;
    run.results.push_back(no_result_row(
        run.info, key,
        kPlannedNoResult +
            std::string(run.info.interrupted ? " (interrupted)" : run.info.finished_at.empty() ? " (killed?)" : "")));
    added = true;
  }
  if (added)
    std::sort(run.results.begin(), run.results.end(), [](const ProblemResult& a, const ProblemResult& b) {
      return std::tie(a.level, a.problem) < std::tie(b.level, b.problem);
    });
  return run;
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const core::WriteResult w = core::write_file_atomic(path, text);
  switch (w.stage) {
    case core::WriteResult::Stage::kOk: return;
    case core::WriteResult::Stage::kCreateDir: throw InfraError(w.where + ": cannot create: " + w.error);
    case core::WriteResult::Stage::kOpen: throw InfraError(w.tmp + ": cannot write");
    case core::WriteResult::Stage::kWrite: throw InfraError(w.tmp + ": write failed");
    case core::WriteResult::Stage::kRename: throw InfraError(path + ": cannot rename into place: " + w.error);
  }
}

Environment host_environment(const std::string& backend) {
  Environment env;
  env.backend = backend;
  env.kgate_version = build::kVersion;
  env.git_sha = build::kGitSha;
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) == 0) env.host = host;
  return env;
}

void write_run_info(const std::string& out_dir, const RunInfo& info) {
  write_file_atomic((fs::path(out_dir) / "run.json").string(),
                    nlohmann::json(info).dump(2) + "\n");
}

void write_result(const std::string& out_dir, const ProblemResult& r) {
  write_file_atomic(
      (fs::path(out_dir) / "results" / record_file_name(r.level, r.problem)).string(),
      nlohmann::json(r).dump(2) + "\n");
}

}  // namespace kgate::report

// kgate merge: shards merged == the unsharded run's reports; idempotent; refuses mixes.
#include "report/merge.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <tinyxml2.h>

#include <filesystem>

#include "core/error.h"
#include "report/partition.h"
#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// Splits the basic run into n shard directories the way `kgate run --shard k/n` would
// (every shard's plan in its run.json; an older kgate's shards, `with_plans` false, have none).
std::vector<std::string> make_shards(const TempDir& d, int n, const RunRecords& run, bool with_plans = true) {
  std::vector<std::string> ids;
  for (const auto& r : run.results) ids.push_back(r.level + "/" + r.problem);
  auto parts = partition(ids, n);
  std::vector<std::string> dirs;
  for (int k = 1; k <= n; ++k) {
    std::string dir = d / ("shard" + std::to_string(k));
    RunInfo info = run.info;
    info.shard = {k, n};
    info.planned = parts[static_cast<size_t>(k - 1)];
    if (with_plans) info.shard_plans = parts;
    write_run_info(dir, info);
    for (const auto& r : run.results)
      if (std::count(info.planned.begin(), info.planned.end(), r.level + "/" + r.problem))
        write_result(dir, r);
    dirs.push_back(dir);
  }
  return dirs;
}

TEST(ReportMerge, ShardsMergedEqualTheUnshardedRun) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 3, run);
  merge_dirs(shards, d / "merged");

  // The unsharded run's reports, with the same planned list the merge reconstructs.
  std::string whole = d / "whole";
  RunInfo info = run.info;
  for (const auto& r : run.results) info.planned.push_back(r.level + "/" + r.problem);
  std::sort(info.planned.begin(), info.planned.end());
  write_run_info(whole, info);
  for (const auto& r : run.results) write_result(whole, r);
  write_reports(whole);

  for (const char* f : {"junit.xml", "report.md", "report.json", "report.html", "run.json"})
    EXPECT_EQ(read_file(d / ("merged/" + std::string(f))), read_file(whole + "/" + f)) << f;
  EXPECT_EQ(load_run_dir(d / "merged").results.size(), run.results.size());
}

TEST(ReportMerge, Idempotent) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 2, run);
  merge_dirs(shards, d / "m1");
  std::string first = read_file(d / "m1/report.json");
  merge_dirs(shards, d / "m1");  // again into the same place
  EXPECT_EQ(read_file(d / "m1/report.json"), first);
  // A shard given twice, or the merged output merged with a shard, changes nothing.
  merge_dirs({shards[0], shards[1], shards[0]}, d / "m2");
  EXPECT_EQ(read_file(d / "m2/report.json"), first);
  merge_dirs({d / "m1", shards[1]}, d / "m3");
  EXPECT_EQ(read_file(d / "m3/report.json"), first);
}

std::string merge_error(const std::vector<std::string>& dirs, const std::string& out) {
  try {
    merge_dirs(dirs, out);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ReportMerge, RejectsShardsOfDifferentRunsOrConfigs) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 2, run);

  RunInfo other = load_run_info(shards[1] + "/run.json");
  other.config_hash = "cfg-9999";
  write_run_info(shards[1], other);
  std::string e = merge_error(shards, d / "out");
  EXPECT_NE(e.find("config hash"), std::string::npos) << e;
  EXPECT_NE(e.find(shards[1]), std::string::npos) << e;

  other.config_hash = run.info.config_hash;
  other.run_id = "nightly-20261130";
  write_run_info(shards[1], other);
  for (const auto& entry : fs::directory_iterator(shards[1] + "/results")) {
    ProblemResult r = load_result(entry.path().string());
    r.run_id = other.run_id;
    write_result(shards[1], r);
  }
  e = merge_error(shards, d / "out");
  EXPECT_NE(e.find("is from run \"nightly-20261130\""), std::string::npos) << e;

  EXPECT_NE(merge_error({shards[0]}, shards[0]).find("also an input"), std::string::npos);
  EXPECT_NE(merge_error({d / "missing"}, d / "out").find("not a directory"), std::string::npos);
}

TEST(ReportMerge, AProblemOneInputHasNoRecordOfTakesTheOthersRecord) {
  // A copy of a shard's output that lost one record (a run cut short, say) merged beside
  // the output that has it: the record stands, no "different results"; a problem no
  // input has a record of stays a planned-without-result error.
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 2, run);
  const std::string copy = d / "shard1-copy";
  fs::copy(shards[0], copy, fs::copy_options::recursive);
  const RunRecords part = load_run_dir(shards[0]);
  ASSERT_GE(part.results.size(), 2u);
  const ProblemResult& lost = part.results.front();
  ASSERT_TRUE(fs::remove(fs::path(copy) / "results" / record_file_name(lost.level, lost.problem)));
  RunRecords m = merge_runs({copy, shards[0], shards[1]});
  EXPECT_EQ(m.results.size(), run.results.size());
  for (const auto& r : m.results) {
    if (r.problem == lost.problem) {
      EXPECT_EQ(nlohmann::json(r), nlohmann::json(lost));
    }
  }
  // Without the complete copy, the problem is an error row saying it has no result.
  RunRecords only = merge_runs({copy, shards[1]});
  bool found = false;
  for (const auto& r : only.results)
    if (r.problem == lost.problem) {
      found = true;
      EXPECT_EQ(r.outcome, Outcome::kError);
      EXPECT_EQ(r.reason.rfind(kPlannedNoResult, 0), 0u) << r.reason;
    }
  EXPECT_TRUE(found);
}

TEST(ReportMerge, RejectsConflictingRecords) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 2, run);
  // The same problem in both shards with different numbers.
  ProblemResult r = load_run_dir(shards[0]).results.front();
  r.speedup += 0.5;
  write_result(shards[1], r);
  std::string e = merge_error(shards, d / "out");
  EXPECT_NE(e.find("hold different results for " + r.level + "/" + r.problem), std::string::npos)
      << e;
}

// The exit code a directory's report.json states.
int reported_exit(const std::string& dir) {
  return nlohmann::json::parse(read_file(dir + "/report.json"))["result"]["exit_code"].get<int>();
}

TEST(ReportMerge, CliExitCodes) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 2, run);
  auto [rc, out] = run_command(kgate_bin() + " merge " + shards[0] + " " + shards[1] + " --out " +
                               (d / "merged"));
  // The merge exits with the merged run's status, the one its reports state: the fixture
  // holds an infrastructure error (exit 3) and regressions.
  EXPECT_EQ(rc, 3) << out;
  EXPECT_EQ(reported_exit(d / "merged"), rc);
  EXPECT_TRUE(fs::exists(d.path / "merged/junit.xml"));
  RunInfo other = load_run_info(shards[1] + "/run.json");
  other.config_hash = "different";
  write_run_info(shards[1], other);
  auto [rc2, out2] = run_command(kgate_bin() + " merge " + shards[0] + " " + shards[1] +
                                 " --out " + (d / "merged2"));
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("config hash"), std::string::npos) << out2;
}

// The basic run without its failing records: every report of it passes.
RunRecords passing_run() {
  RunRecords run = load_run_dir(fixture("run_basic"));
  std::erase_if(run.results, [](const ProblemResult& r) {
    return r.outcome == Outcome::kRegressed || r.outcome == Outcome::kError;
  });
  return run;
}

// What junit.xml, report.json and report.md of DIR say: the exit code, the testcases with
// an <error>, the problems of report.json that are errors.
struct Story {
  int exit_code = -1;
  bool md_fail = false;
  int junit_tests = 0, junit_errors = 0;
  std::vector<std::string> junit_error_cases;
  std::vector<std::string> json_errors;
};

Story story_of(const std::string& dir) {
  Story s;
  nlohmann::json rep = nlohmann::json::parse(read_file(dir + "/report.json"));
  s.exit_code = rep["result"]["exit_code"].get<int>();
  for (const auto& p : rep["problems"])
    if (p["failure"] == "error") s.json_errors.push_back(p["level"].get<std::string>() + "/" + p["problem"].get<std::string>());
  s.md_fail = read_file(dir + "/report.md").find("**Result: FAIL**") != std::string::npos;
  tinyxml2::XMLDocument doc;
  EXPECT_EQ(doc.LoadFile((dir + "/junit.xml").c_str()), tinyxml2::XML_SUCCESS);
  const tinyxml2::XMLElement* root = doc.FirstChildElement("testsuites");
  if (!root) return s;
  s.junit_tests = root->IntAttribute("tests");
  s.junit_errors = root->IntAttribute("errors");
  for (auto* suite = root->FirstChildElement("testsuite"); suite; suite = suite->NextSiblingElement("testsuite"))
    for (auto* tc = suite->FirstChildElement("testcase"); tc; tc = tc->NextSiblingElement("testcase"))
      if (tc->FirstChildElement("error"))
        s.junit_error_cases.push_back(std::string(tc->Attribute("classname")) + "/" + tc->Attribute("name"));
  std::sort(s.junit_error_cases.begin(), s.junit_error_cases.end());
  std::sort(s.json_errors.begin(), s.json_errors.end());
  return s;
}

// A shard the merge was not given is an infrastructure error (exit 3) that every report
// states: each of its problems an error "no result: shard 2/2 is missing", the shard a
// JUnit error of its own, and run.json no claim to be the whole run. Regenerating the
// reports from the merged records tells the same story, and merging the missing shard in
// later gives what a complete merge gives.
TEST(ReportMerge, MissingShardIsAnInfrastructureErrorInEveryReport) {
  TempDir d;
  const RunRecords run = passing_run();
  ASSERT_GE(run.results.size(), 3u);
  auto shards = make_shards(d, 2, run);
  const WrittenReports whole = merge_dirs(shards, d / "whole");
  EXPECT_EQ(whole.exit_code, ExitCode::kPass);

  const WrittenReports w = merge_dirs({shards[0]}, d / "m1");
  EXPECT_EQ(w.exit_code, ExitCode::kInfra);
  const RunInfo info = load_run_info(d / "m1/run.json");
  EXPECT_EQ(info.shard.index, 0);
  EXPECT_EQ(info.shard.count, 2);
  EXPECT_EQ(info.missing_shards, std::vector<int>{2});
  const RunInfo shard2 = load_run_info(shards[1] + "/run.json");
  std::vector<std::string> want_errors;
  for (const auto& id : shard2.planned) want_errors.push_back(id);
  std::sort(want_errors.begin(), want_errors.end());
  ASSERT_FALSE(want_errors.empty());

  const RunRecords merged = load_run_dir(d / "m1");
  EXPECT_EQ(merged.results.size(), run.results.size());  // every problem of the suite
  for (const auto& r : merged.results) {
    const std::string key = r.level + "/" + r.problem;
    const bool of_missing = std::count(want_errors.begin(), want_errors.end(), key) > 0;
    EXPECT_EQ(r.reason == "no result: shard 2/2 is missing", of_missing) << key << ": " << r.reason;
    if (of_missing) {
      EXPECT_EQ(r.outcome, Outcome::kError) << key;
    }
  }

  const Story s = story_of(d / "m1");
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_TRUE(s.md_fail);
  EXPECT_EQ(s.json_errors, want_errors);
  std::vector<std::string> want_cases = want_errors;
  want_cases.push_back("kgate/shard 2/2");
  std::sort(want_cases.begin(), want_cases.end());
  EXPECT_EQ(s.junit_error_cases, want_cases);
  EXPECT_EQ(s.junit_tests, static_cast<int>(run.results.size()) + 1);
  EXPECT_EQ(s.junit_errors, static_cast<int>(want_cases.size()));
  EXPECT_NE(read_file(d / "m1/report.md").find("shard 2/2 is missing"), std::string::npos);

  // `kgate report --from` the merged directory: the same reports, the same status.
  const std::string json = read_file(d / "m1/report.json");
  EXPECT_EQ(validate_against(fixture("../../../reports/report.schema.json"), nlohmann::json::parse(json)), "");
  const WrittenReports again = write_reports(load_run_dir(d / "m1"), d / "again");
  EXPECT_EQ(again.exit_code, ExitCode::kInfra);
  EXPECT_EQ(read_file(d / "again/report.json"), json);
  EXPECT_EQ(read_file(d / "again/junit.xml"), read_file(d / "m1/junit.xml"));

  // The missing shard merged in later: what the complete merge says.
  const WrittenReports later = merge_dirs({d / "m1", shards[1]}, d / "m2");
  EXPECT_EQ(later.exit_code, ExitCode::kPass);
  EXPECT_EQ(read_file(d / "m2/report.json"), read_file(d / "whole/report.json"));
  EXPECT_EQ(read_file(d / "m2/run.json"), read_file(d / "whole/run.json"));
  // The incomplete merge merged again alone: unchanged.
  merge_dirs({d / "m1"}, d / "m3");
  EXPECT_EQ(read_file(d / "m3/report.json"), json);
}

// Shards of an older kgate name no plans: the missing shard's problems cannot be named, but
// the shard is still an error in the JUnit and the summary, and the exit code says so.
TEST(ReportMerge, MissingShardWithoutPlansIsStillAnError) {
  TempDir d;
  auto shards = make_shards(d, 2, passing_run(), /*with_plans=*/false);
  const WrittenReports w = merge_dirs({shards[0]}, d / "m1");
  EXPECT_EQ(w.exit_code, ExitCode::kInfra);
  const Story s = story_of(d / "m1");
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_TRUE(s.md_fail);
  EXPECT_TRUE(s.json_errors.empty());
  EXPECT_EQ(s.junit_error_cases, std::vector<std::string>{"kgate/shard 2/2"});
  EXPECT_EQ(s.junit_errors, 1);
  EXPECT_NE(read_file(d / "m1/report.md").find("shard 2/2 is missing"), std::string::npos);
  nlohmann::json rep = nlohmann::json::parse(read_file(d / "m1/report.json"));
  EXPECT_NE(rep["result"].value("missing_shards", "").find("shard 2/2 is missing"), std::string::npos) << rep["result"];
}

// The binaries: `kgate merge` of one shard of two exits 3 and says which is missing;
// `kgate report --from` the merged directory exits 3 too.
TEST(ReportMerge, CliMissingShardExitsInfra) {
  TempDir d;
  auto shards = make_shards(d, 2, passing_run());
  auto [rc, out] = run_command(kgate_bin() + " merge " + shards[0] + " --out " + (d / "merged"));
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("shard 2/2 is missing"), std::string::npos) << out;
  auto [rc2, out2] = run_command(kgate_bin() + " report --from " + (d / "merged") + " --out " + (d / "again"));
  EXPECT_EQ(rc2, 3) << out2;
  EXPECT_NE(out2.find("shard 2/2 is missing"), std::string::npos) << out2;
  auto [rc3, out3] = run_command(kgate_bin() + " merge " + shards[0] + " " + shards[1] + " --out " + (d / "all"));
  EXPECT_EQ(rc3, 0) << out3;
}

// Runs of one suite over different problems, one device session after another: each
// problem's record from the run that started last, the union of what ran reported (no
// errors for what no run reached), whatever their run ids and config hashes.
TEST(ReportMerge, LatestTakesEachProblemsNewestRecordAcrossRuns) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  ASSERT_GE(run.results.size(), 3u);
  auto write_run = [&](const std::string& name, const std::string& id, const std::string& started,
                       const std::vector<ProblemResult>& results, const std::vector<std::string>& planned) {
    std::string dir = d / name;
    RunInfo info = run.info;
    info.run_id = id;
    info.config_hash = "cfg-" + id;
    info.started_at = started;
    info.planned = planned;
    write_run_info(dir, info);
    for (auto r : results) {
      r.run_id = id;
      write_result(dir, r);
    }
    return dir;
  };
  const ProblemResult& a = run.results[0];
  const ProblemResult& b = run.results[1];
  ProblemResult b_again = b;
  b_again.speedup = b.speedup + 0.25;
  const std::string key_a = a.level + "/" + a.problem, key_b = b.level + "/" + b.problem;
  // The newer session is given first: order by start time, not by argument.
  std::string newer = write_run("s2", "session-2", "2026-12-05T08:00:00Z", {b_again}, {key_b});
  std::string older = write_run("s1", "session-1", "2026-12-04T20:00:00Z", {a, b}, {key_a, key_b, "lvl/never_reached"});
  RunRecords m = merge_runs({newer, older}, MergeMode::kLatest);
  ASSERT_EQ(m.results.size(), 2u);
  for (const auto& r : m.results) {
    if (r.problem == b.problem) {
      EXPECT_DOUBLE_EQ(r.speedup, b_again.speedup);
    }
    if (r.problem == a.problem) {
      EXPECT_EQ(r.run_id, "session-1");
    }
  }
  EXPECT_EQ(m.info.run_id, "session-2");
  EXPECT_EQ(m.info.started_at, "2026-12-04T20:00:00Z");
  EXPECT_EQ(m.info.planned, (std::vector<std::string>{key_a, key_b}));
  EXPECT_FALSE(m.info.interrupted);
  // The shards' mode refuses the same directories (different runs), and --latest refuses
  // another suite's run.
  EXPECT_NE(merge_error({newer, older}, d / "out").find("is from run"), std::string::npos);
  RunInfo alien = load_run_info(older + "/run.json");
  alien.suite = "another-suite";
  write_run_info(older, alien);
  try {
    merge_runs({newer, older}, MergeMode::kLatest);
    ADD_FAILURE() << "merged runs of two suites";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("combine the runs of one suite"), std::string::npos) << e.what();
  }
  alien.suite = run.info.suite;
  write_run_info(older, alien);
  auto [rc, out] = run_command(kgate_bin() + " merge --latest " + newer + " " + older + " --out " + (d / "latest"));
  EXPECT_EQ(rc, reported_exit(d / "latest")) << out;
  EXPECT_NE(out.find("1 of 3 planned problems have a record in none of the 2 runs"), std::string::npos) << out;
  RunRecords back = load_run_dir(d / "latest");  // records of two runs, as run.json says
  EXPECT_EQ(back.results.size(), 2u);
  EXPECT_EQ(back.info.merged_runs, (std::vector<std::string>{"session-1", "session-2"}));
  // A combined directory combined again with a newer session keeps every run it holds.
  std::string third = write_run("s3", "session-3", "2026-12-06T08:00:00Z", {a}, {key_a});
  RunRecords again = merge_runs({d / "latest", third}, MergeMode::kLatest);
  EXPECT_EQ(again.info.merged_runs, (std::vector<std::string>{"session-1", "session-2", "session-3"}));
  ASSERT_EQ(again.results.size(), 2u);
  auto [rc2, out2] = run_command(kgate_bin() + " merge --latest " + newer + " " + older + " --db " +
                                 (d / "h.sqlite") + " --out " + (d / "latest2"));
  EXPECT_EQ(rc2, 2) << out2;
  // Its reports come back from its records; it is not recorded as a run of its own.
  auto [rc3, out3] = run_command(kgate_bin() + " report --from " + (d / "latest") + " --out " + (d / "again"));
  EXPECT_EQ(rc3, 0) << out3;
  auto [rc4, out4] = run_command(kgate_bin() + " report --from " + (d / "latest") + " --db " + (d / "h.sqlite"));
  EXPECT_EQ(rc4, 2) << out4;
  EXPECT_NE(out4.find("recorded on their own"), std::string::npos) << out4;
}

}  // namespace
}  // namespace kgate::report

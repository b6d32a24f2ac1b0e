// kgate merge: shards merged == the unsharded run's reports; idempotent; refuses mixes.
#include "report/merge.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "report/partition.h"
#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// Splits the basic run into n shard directories the way `kgate run --shard k/n` would.
std::vector<std::string> make_shards(const TempDir& d, int n, const RunRecords& run) {
  std::vector<std::string> ids;
  for (const auto& r : run.results) ids.push_back(r.level + "/" + r.problem);
  auto parts = partition(ids, n);
  std::vector<std::string> dirs;
  for (int k = 1; k <= n; ++k) {
    std::string dir = d / ("shard" + std::to_string(k));
    RunInfo info = run.info;
    info.shard = {k, n};
    info.planned = parts[static_cast<size_t>(k - 1)];
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

TEST(ReportMerge, CliExitCodes) {
  TempDir d;
  RunRecords run = load_run_dir(fixture("run_basic"));
  auto shards = make_shards(d, 2, run);
  auto [rc, out] = run_command(kgate_bin() + " merge " + shards[0] + " " + shards[1] + " --out " +
                               (d / "merged"));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(fs::exists(d.path / "merged/junit.xml"));
  RunInfo other = load_run_info(shards[1] + "/run.json");
  other.config_hash = "different";
  write_run_info(shards[1], other);
  auto [rc2, out2] = run_command(kgate_bin() + " merge " + shards[0] + " " + shards[1] +
                                 " --out " + (d / "merged2"));
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("config hash"), std::string::npos) << out2;
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
  EXPECT_EQ(rc, 0) << out;
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

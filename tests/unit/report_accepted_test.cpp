// Accepted results in the history and every run compared with them: the comparison's
// numbers, its idempotence, the config key, PR checks compared but never accepted, the v1 -> v2 migration,
// several writers at once, and `kgate report/merge/accept --db` through the real binary,
// every report, the JUnit and the exit code telling the same story.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "report/history.h"
#include "report/junit_reporter.h"
#include "report/record_io.h"
#include "report/regression.h"
#include "report/summary.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

namespace fs = std::filesystem;
using namespace testing;

gates::CandidateVerdict timed(const gates::Timing& t) {
  gates::CandidateVerdict v;
  v.timing = t;
  return v;
}

ProblemResult result(double best_us, double speedup, double lo, double hi) {
  ProblemResult r;
  r.level = "native";
  r.problem = "softmax";
  r.outcome = Outcome::kImproved;
  r.baseline_kind = "starter";
  r.best_us = best_us;
  r.baseline_us = best_us * speedup;
  r.speedup = speedup;
  r.speedup_lo = lo;
  r.speedup_hi = hi;
  r.best_hash = "hash-" + std::to_string(best_us);
  r.config_key = "cfg";
  r.env.gpu_target = "h200";
  return r;
}

AcceptedKernel accepted(double best_us, double lo, double hi, const std::string& key = "cfg") {
  AcceptedKernel a;
  a.problem = "native/softmax";
  a.gpu = "h200";
  a.run_id = "night-1";
  a.content_hash = "hash-a";
  a.best_us = best_us;
  a.speedup = 2;
  a.speedup_lo = lo;
  a.speedup_hi = hi;
  a.config_key = key;
  return a;
}

RunRecords one_run(const std::string& id, ProblemResult r, bool fail_on_performance = false) {
  RunRecords run;
  run.info.run_id = id;
  run.info.started_at = "2026-12-0" + id.substr(id.size() - 1) + "T02:00:00Z";
  run.info.env.gpu_target = "h200";
  run.info.fail_on_performance = fail_on_performance;
  r.run_id = id;
  run.results.push_back(std::move(r));
  return run;
}

TEST(ReportAccepted, SpeedRatioAndIntervalFromBothRecords) {
  // Tonight 100 us, accepted 50 us: half the accepted speed, both CIs +-1 % -> combined
  // sqrt(2) %, far from 1: significant.
  gates::Timing t = speed_vs_accepted(result(100, 2, 1.98, 2.02), accepted(50, 1.98, 2.02));
  EXPECT_DOUBLE_EQ(t.speedup, 0.5);
  const double h = std::sqrt(2.0) * (std::log(2.02) - std::log(1.98)) / 2;
  EXPECT_NEAR(t.speedup_lo, 0.5 * std::exp(-h), 1e-12);
  EXPECT_NEAR(t.speedup_hi, 0.5 * std::exp(h), 1e-12);
  EXPECT_LT(t.p_value, 1e-6);
  EXPECT_EQ(t.verdict, gates::SpeedVerdict::kSlower);
  EXPECT_EQ(classify_regression(timed(t), {}).kind, RegressionKind::kPerformance);

  // The same time: ratio 1, p = 1, no regression.
  gates::Timing same = speed_vs_accepted(result(50, 2, 1.9, 2.1), accepted(50, 1.9, 2.1));
  EXPECT_DOUBLE_EQ(same.speedup, 1);
  EXPECT_NEAR(same.p_value, 1, 1e-12);
  EXPECT_EQ(classify_regression(timed(same), {}).kind, RegressionKind::kNone);

  // 2 % slower with +-10 % noise on each night: not significant.
  gates::Timing noisy = speed_vs_accepted(result(51, 2, 1.8, 2.2), accepted(50, 1.8, 2.2));
  EXPECT_GT(noisy.p_value, 0.05);
  EXPECT_GT(noisy.speedup_hi, 1);
  EXPECT_EQ(classify_regression(timed(noisy), {}).kind, RegressionKind::kNone);

  // Degenerate intervals (nothing kept: speedup 1 [1, 1]): the threshold alone decides.
  gates::Timing small = speed_vs_accepted(result(51, 1, 1, 1), accepted(50, 1, 1));
  EXPECT_EQ(small.p_value, 0);
  EXPECT_EQ(classify_regression(timed(small), {}).kind, RegressionKind::kNone);  // 2 % < 3 %
  gates::Timing big = speed_vs_accepted(result(60, 1, 1, 1), accepted(50, 1, 1));
  EXPECT_EQ(classify_regression(timed(big), {}).kind, RegressionKind::kPerformance);
}

TEST(ReportAccepted, CompareMarksADropAndIsIdempotent) {
  TempDir d;
  History h(d / "h.sqlite");
  h.record_run(one_run("night-1", result(50, 2, 1.98, 2.02)));  // first result: accepted
  ASSERT_TRUE(h.accepted("native/softmax", "h200", "cfg"));
  EXPECT_FALSE(h.accepted("native/softmax", "h200"));  // per config

  RunRecords run = one_run("night-2", result(100, 1.9, 1.88, 1.92));
  run.results[0].reason = "moved on: target reached";
  EXPECT_EQ(compare_with_accepted(run, h), 1);
  const ProblemResult& r = run.results[0];
  EXPECT_EQ(r.outcome, Outcome::kRegressed);
  ASSERT_TRUE(r.vs_accepted);
  EXPECT_TRUE(r.vs_accepted->regressed);
  EXPECT_EQ(r.vs_accepted->run_id, "night-1");
  EXPECT_DOUBLE_EQ(r.vs_accepted->ratio, 0.5);
  EXPECT_EQ(r.vs_accepted->prior_outcome, Outcome::kImproved);
  EXPECT_NE(r.reason.find("slower than the accepted result of run night-1 (50.00 -> 100.00 us)"),
            std::string::npos)
      << r.reason;
  EXPECT_TRUE(is_correct(r));  // what ships is correct, only slower

  // Classified once, the same everywhere: a performance regression, failing only when the
  // suite says so.
  Summary s = summarize(run);
  EXPECT_EQ(s.rows[0].failure, FailureKind::kPerformanceRegression);
  EXPECT_EQ(s.performance_regressions, 1);
  EXPECT_EQ(s.exit_code, ExitCode::kPass);
  EXPECT_EQ(junit_xml(s).find("<failure"), std::string::npos);
  run.info.fail_on_performance = true;
  Summary gated = summarize(run);
  EXPECT_EQ(gated.exit_code, ExitCode::kGateFailure);
  EXPECT_NE(junit_xml(gated).find("type=\"PerformanceRegression\""), std::string::npos);

  // Comparing again changes nothing; the original outcome and reason come back when the
  // drop is gone (here: the slower result was accepted).
  RunRecords again = run;
  EXPECT_EQ(compare_with_accepted(again, h), 1);
  EXPECT_EQ(nlohmann::json(again.results[0]), nlohmann::json(run.results[0]));
  h.accept(accepted_from(run.results[0], run.info));
  EXPECT_EQ(compare_with_accepted(again, h), 0);
  EXPECT_EQ(again.results[0].outcome, Outcome::kImproved);
  EXPECT_EQ(again.results[0].reason, "moved on: target reached");
  ASSERT_TRUE(again.results[0].vs_accepted);
  EXPECT_FALSE(again.results[0].vs_accepted->regressed);
  EXPECT_DOUBLE_EQ(again.results[0].vs_accepted->ratio, 1);
}

TEST(ReportAccepted, OnlyComparableCorrectResultsOfRunsAreCompared) {
  TempDir d;
  History h(d / "h.sqlite");
  h.accept(accepted(50, 1.98, 2.02));
  // Another config (problem file or backend changed): nothing to compare with.
  ProblemResult other = result(100, 2, 1.98, 2.02);
  other.config_key = "other";
  RunRecords a = one_run("night-2", other);
  EXPECT_EQ(compare_with_accepted(a, h), 0);
  EXPECT_FALSE(a.results[0].vs_accepted);
  // A result that is not correct keeps its own verdict.
  ProblemResult broken = result(100, 2, 1.98, 2.02);
  broken.outcome = Outcome::kError;
  RunRecords b = one_run("night-3", broken);
  EXPECT_EQ(compare_with_accepted(b, h), 0);
  EXPECT_EQ(b.results[0].outcome, Outcome::kError);
}

TEST(ReportAccepted, APrCheckIsComparedWithTheAcceptedResultsToo) {
  TempDir d;
  History h(d / "h.sqlite");
  h.accept(accepted(50, 1.98, 2.02));
  // A check whose change matches its base (a slow kernel merged since) but takes twice the
  // accepted time: a performance regression, as in a run.
  ProblemResult slow = result(100, 1, 0.99, 1.01);
  slow.outcome = Outcome::kMatched;
  slow.baseline_kind = "base";
  RunRecords c = one_run("check-4", slow, /*fail_on_performance=*/true);
  c.info.kind = RunKind::kCheck;
  EXPECT_EQ(compare_with_accepted(c, h), 1);
  EXPECT_EQ(c.results[0].outcome, Outcome::kRegressed);
  ASSERT_TRUE(c.results[0].vs_accepted);
  EXPECT_TRUE(c.results[0].vs_accepted->regressed);
  EXPECT_NE(c.results[0].reason.find("slower than the accepted result of run night-1"), std::string::npos)
      << c.results[0].reason;
  Summary s = summarize(c);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].failure, FailureKind::kPerformanceRegression);
  EXPECT_EQ(s.exit_code, ExitCode::kGateFailure);
  // As fast as accepted: compared, not regressed, the check's own outcome kept.
  ProblemResult same = result(50, 1, 0.99, 1.01);
  same.outcome = Outcome::kMatched;
  RunRecords ok = one_run("check-5", same, true);
  ok.info.kind = RunKind::kCheck;
  EXPECT_EQ(compare_with_accepted(ok, h), 0);
  ASSERT_TRUE(ok.results[0].vs_accepted);
  EXPECT_FALSE(ok.results[0].vs_accepted->regressed);
  EXPECT_EQ(ok.results[0].outcome, Outcome::kMatched);
  // A check whose change already failed against its base keeps that verdict.
  ProblemResult failed = result(100, 0.5, 0.49, 0.51);
  failed.outcome = Outcome::kRegressed;
  failed.reason = "slower than the base";
  RunRecords f = one_run("check-6", failed, true);
  f.info.kind = RunKind::kCheck;
  EXPECT_EQ(compare_with_accepted(f, h), 0);
  EXPECT_EQ(f.results[0].reason, "slower than the base");
}

TEST(ReportAccepted, ChecksAreRecordedButNeverAcceptedNorTrended) {
  TempDir d;
  History h(d / "h.sqlite");
  RunRecords c = one_run("check-1", result(10, 3, 2.9, 3.1));
  c.info.kind = RunKind::kCheck;
  c.results[0].wall_s = 99;
  h.record_run(c);
  EXPECT_TRUE(h.has_run("check-1"));
  EXPECT_FALSE(h.accepted("native/softmax", "h200", "cfg"));
  EXPECT_TRUE(h.runs("2026-01-01", "2027-01-01").empty());
  EXPECT_TRUE(h.expected_cost_s("h200").empty());
}

TEST(ReportAccepted, AutoAcceptsOnlyASignificantlyFasterKernel) {
  TempDir d;
  History h(d / "h.sqlite");
  h.record_run(one_run("night-1", result(50, 2, 1.98, 2.02)));
  h.record_run(one_run("night-2", result(49.8, 2, 1.9, 2.1)));  // within the noise: kept
  EXPECT_EQ(h.accepted("native/softmax", "h200", "cfg")->run_id, "night-1");
  h.record_run(one_run("night-3", result(40, 2.5, 2.48, 2.52)));  // 25 % faster: accepted
  EXPECT_EQ(h.accepted("native/softmax", "h200", "cfg")->run_id, "night-3");
  EXPECT_DOUBLE_EQ(h.accepted("native/softmax", "h200", "cfg")->speedup_lo, 2.48);
}

TEST(ReportAccepted, MigratesAVersion1Database) {
  TempDir d;
  const std::string path = d / "v1.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* v1 = R"(
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES('schema_version', '1');
    CREATE TABLE accepted(id INTEGER PRIMARY KEY AUTOINCREMENT, problem TEXT NOT NULL,
      gpu TEXT NOT NULL, content_hash TEXT NOT NULL, accepted_at TEXT, commit_sha TEXT,
      run_id TEXT, best_us REAL, speedup REAL);
    INSERT INTO accepted(problem, gpu, content_hash, run_id, best_us, speedup)
      VALUES('native/softmax', 'h200', 'old', 'night-0', 42, 2);)";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  {
    History h(path);
    auto a = h.accepted("native/softmax", "h200");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->run_id, "night-0");
    EXPECT_DOUBLE_EQ(a->best_us, 42);
    EXPECT_EQ(a->config_key, "");
    h.accept(accepted(50, 1.9, 2.1));
  }
  History again(path);  // migrated once; opens as version 2
  EXPECT_TRUE(again.accepted("native/softmax", "h200", "cfg"));
}

TEST(ReportAccepted, SeveralShardsWriteOneDatabaseAtOnce) {
  TempDir d;
  const std::string path = d / "shared.sqlite";  // not there yet: they all create it
  std::vector<pid_t> kids;
  for (int k = 1; k <= 6; ++k) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        History h(path);
        for (int i = 0; i < 5; ++i) h.record_run(one_run("run-" + std::to_string(k) + "-" + std::to_string(i % 9), result(50 + k, 2, 1.9, 2.1)));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", k, e.what());
        rc = 1;
      }
      _exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  History h(path);
  EXPECT_EQ(h.runs("", "9").size(), 30u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Another connection holding the write lock (BEGIN IMMEDIATE) until release() or the end.
class WriteLockHolder {
 public:
  explicit WriteLockHolder(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  ~WriteLockHolder() {
    release();
    sqlite3_close(db_);
  }
  void release() {
    if (held_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    held_ = false;
  }

 private:
  sqlite3* db_ = nullptr;
  bool held_ = true;
};

TEST(ReportAccepted, AWriteLockedPastItsWaitFailsNamingTheDatabaseAndTheRun) {
  TempDir d;
  const std::string path = d / "held.sqlite";
  { History h(path); }  // created, with its schema
  WriteLockHolder holder(path);
  History h(path);  // opening an existing file only reads it: not blocked by the writer
  h.set_lock_wait({std::chrono::milliseconds(100), std::chrono::milliseconds(600)});
  const auto t0 = std::chrono::steady_clock::now();
  try {
    h.record_run(one_run("night-held", result(50, 2, 1.9, 2.1)));
    FAIL() << "a write under another writer's lock succeeded";
  } catch (const InfraError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, ::testing::StartsWith(path + ": the history database stayed locked by other writers"));
    EXPECT_THAT(msg, ::testing::HasSubstr("run night-held was not recorded"));
    EXPECT_THAT(msg, ::testing::HasSubstr("database is locked"));
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.4);  // tried again past the first busy timeout, up to the total
  EXPECT_LT(waited, 5.0);
  holder.release();
  EXPECT_FALSE(h.has_run("night-held"));  // nothing half-written
  h.record_run(one_run("night-held", result(50, 2, 1.9, 2.1)));
  EXPECT_TRUE(h.has_run("night-held"));
}

TEST(ReportAccepted, AWriteWaitsForALockHeldPastOneBusyTimeout) {
  TempDir d;
  const std::string path = d / "held.sqlite";
  { History h(path); }
  WriteLockHolder holder(path);
  History h(path);
  // SQLite's own busy handler gives up after 50 ms; the writer holds the lock for 500.
  h.set_lock_wait({std::chrono::milliseconds(50), std::chrono::milliseconds(20000)});
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    holder.release();
  });
  EXPECT_NO_THROW(h.record_run(one_run("night-late", result(50, 2, 1.9, 2.1))));
  releaser.join();
  EXPECT_TRUE(h.has_run("night-late"));
  ASSERT_TRUE(h.accepted("native/softmax", "h200", "cfg"));
  EXPECT_EQ(h.accepted("native/softmax", "h200", "cfg")->run_id, "night-late");
}

// ---- through the binary --------------------------------------------------------------

// A clean run from the fixture (only what passes), as run `id`, softmax `slower` times slower.
std::string clean_run(const TempDir& d, const std::string& name, const std::string& id, double slower,
                      bool fail_on_performance) {
  const std::string dir = d / name;
  fs::copy(fixture("run_basic"), dir, fs::copy_options::recursive);
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "results")) {
    ProblemResult r = load_result(e.path().string());
    if (!is_correct(r) || r.outcome == Outcome::kRegressed) {
      fs::remove(e.path());
      continue;
    }
    r.run_id = id;
    if (r.problem == "23_Softmax") {
      r.best_us *= slower;
      r.baseline_us *= slower;
    }
    write_result(dir, r);
  }
  RunInfo info = nlohmann::json::parse(read_file(dir + "/run.json")).get<RunInfo>();
  info.run_id = id;
  info.fail_on_performance = fail_on_performance;
  write_run_info(dir, info);
  return dir;
}

// What report.json, report.md, report.html, junit.xml and the exit code say about 23_Softmax.
struct Story {
  int rc = -1;
  int json_exit = -1;
  std::string json_failure;
  bool md_regression = false;
  bool junit_failure = false;
  bool junit_mentions = false;
  bool html_regression = false;  // the HTML's accepted table calls it a performance regression
  bool html_fail = false;        // the HTML's result line says FAIL
  bool html_pass = false;
};

Story story(int rc, const std::string& dir) {
  Story s;
  s.rc = rc;
  auto j = nlohmann::json::parse(read_file(dir + "/report.json"));
  EXPECT_EQ(validate_against(fixture("../../../reports/report.schema.json"), j), "");
  s.json_exit = j["result"]["exit_code"].get<int>();
  for (const auto& p : j["problems"])
    if (p["problem"] == "23_Softmax") s.json_failure = p["failure"].get<std::string>();
  const std::string md = read_file(dir + "/report.md");
  s.md_regression = md.find("performance regression**") != std::string::npos &&
                    md.find("| level1/23_Softmax | performance_regression |") != std::string::npos;
  const std::string junit = read_file(dir + "/junit.xml");
  s.junit_failure = junit.find("<failure type=\"PerformanceRegression\"") != std::string::npos;
  s.junit_mentions = junit.find("slower than the accepted result") != std::string::npos;
  const std::string html = read_file(dir + "/report.html");
  const size_t row = html.find("<tr class=\"f\"><td>level1/23_Softmax</td>", html.find("<h2>Against the accepted results</h2>"));
  s.html_regression = row != std::string::npos &&
                      html.find("<td class=\"verdict\">performance regression</td>", row) < html.find("</tr>", row);
  s.html_fail = html.find("<p class=\"fail\">FAIL</p>") != std::string::npos;
  s.html_pass = html.find("<p class=\"pass\">PASS</p>") != std::string::npos;
  return s;
}

// The exit code, report.json, report.md, report.html and junit.xml of `cmd` agree on 23_Softmax:
// `failure` ("none" | "performance_regression"), failing the pipeline when `exit` is 1.
void expect_story(const std::string& cmd, const std::string& dir, int exit, const std::string& failure,
                  const std::string& log_says = "") {
  auto [rc, out] = run_command(kgate_bin() + " " + cmd);
  Story s = story(rc, dir);
  const bool regressed = failure == "performance_regression";
  EXPECT_EQ(s.rc, exit) << cmd << "\n" << out;
  EXPECT_EQ(s.json_exit, exit) << cmd;
  EXPECT_EQ(s.json_failure, failure) << cmd;
  EXPECT_EQ(s.md_regression, regressed) << cmd << "\n" << read_file(dir + "/report.md");
  EXPECT_EQ(s.junit_failure, regressed && exit == 1) << cmd;
  EXPECT_EQ(s.junit_mentions, regressed) << cmd;
  EXPECT_EQ(s.html_regression, regressed) << cmd << "\n" << read_file(dir + "/report.html");
  EXPECT_EQ(s.html_fail, exit != 0) << cmd;
  EXPECT_EQ(s.html_pass, exit == 0) << cmd;
  if (!log_says.empty()) {
    EXPECT_NE(out.find(log_says), std::string::npos) << out;
  }
}

TEST(ReportAccepted, CliReportMergeAndAcceptTellOneStory) {
  TempDir d;
  const std::string db = " --db " + (d / "h.sqlite");
  // The first run: accepted (improved), nothing to compare with.
  const std::string a = clean_run(d, "a", "night-a", 1, true);
  expect_story("report --from " + a + db, a, 0, "none");
  // Three times slower: a performance regression the suite fails on, in every report.
  const std::string b = clean_run(d, "b", "night-b", 3, true);
  expect_story("report --from " + b + db, b, 1, "performance_regression",
               "performance regression: slower than the accepted result of run night-a");
  // The records of DIR carry the comparison: a plain `kgate report --from` (which only
  // formats, exit 0) reports the same.
  auto [rc, out] = run_command(kgate_bin() + " report --from " + b);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(story(1, b).json_failure, "performance_regression");
  // `kgate merge --db` compares the merged run: the same story, exit 1.
  expect_story("merge " + b + " --out " + (d / "m") + db, d / "m", 1, "performance_regression");
  // Not failing on performance: reported, not failing (exit 0, a passing testcase).
  const std::string c = clean_run(d, "c", "night-c", 3, false);
  expect_story("report --from " + c + db, c, 0, "performance_regression");
  // Accepting night-b makes it the reference: compared again, night-b passes.
  auto [rc2, out2] = run_command(kgate_bin() + " accept" + db + " " + b);
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("accepted level1/23_Softmax on h200"), std::string::npos) << out2;
  expect_story("report --from " + b + db, b, 0, "none");
}

TEST(ReportAccepted, CliAcceptRefusals) {
  TempDir d;
  const std::string db = d / "h.sqlite";
  const std::string a = clean_run(d, "a", "night-a", 1, false);
  auto [rc, out] = run_command("env -u KGATE_HISTORY " + kgate_bin() + " accept " + a);
  EXPECT_EQ(rc, 2) << out;  // no database
  EXPECT_NE(out.find("--db"), std::string::npos) << out;
  auto [rc2, out2] = run_command(kgate_bin() + " accept --db " + db + " " + a + " --problem nope");
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("no result for nope"), std::string::npos) << out2;
  EXPECT_FALSE(History(db).has_run("night-a"));  // refused before anything was written
  auto [rc3, out3] = run_command(kgate_bin() + " accept --db " + db + " --from " + a + " --problem 36_RMSNorm");
  EXPECT_EQ(rc3, 0) << out3;
  History h(db);
  EXPECT_TRUE(h.has_run("night-a"));
  EXPECT_TRUE(h.accepted("level1/36_RMSNorm", "h200"));
  auto [rc4, out4] = run_command(kgate_bin() + " accept --db " + db + " " + (d / "missing"));
  EXPECT_EQ(rc4, 2) << out4;
}

TEST(ReportAccepted, CliMergeWithAnUnwritableHistoryStillMerges) {
  TempDir d;
  const std::string a = clean_run(d, "a", "night-a", 1, false);
  fs::create_directories(d.path / "dir.sqlite");  // a directory: no database can be opened there
  auto [rc, out] = run_command(kgate_bin() + " merge " + a + " --out " + (d / "m") + " --db " + (d / "dir.sqlite"));
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("history " + (d / "dir.sqlite")), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(d.path / "m" / "junit.xml"));  // merged and reported all the same
}

}  // namespace
}  // namespace kgate::report

// History store on seeded histories: runs, results, accepted kernels, costs, weekly trend.
#include "report/history.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "report/record_io.h"
#include "report/weekly_report.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

// One night of the seeded history: every problem of the basic run with speedups scaled.
RunRecords night(const std::string& date, double scale, const std::string& softmax_hash) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  run.info.run_id = "nightly-" + date;
  run.info.started_at = date + "T02:00:00Z";
  run.info.finished_at = date + "T04:00:00Z";
  for (auto& r : run.results) {
    r.run_id = run.info.run_id;
    if (r.outcome == Outcome::kImproved || r.outcome == Outcome::kMatched) {
      r.speedup *= scale;
      r.best_us /= scale;
    }
    if (r.problem == "23_Softmax") r.best_hash = softmax_hash;
    r.wall_s = r.problem == "1_MLP" ? 500 : 50;
  }
  return run;
}

TEST(ReportHistory, RecordsRunsAndAcceptsImprovedKernels) {
  TempDir d;
  History h(d / "history.sqlite");
  h.record_run(night("2026-11-20", 1.0, "hash-a"));
  auto acc = h.accepted("level1/23_Softmax", "h200");
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->content_hash, "hash-a");
  EXPECT_EQ(acc->commit, "aaaaaaaaaaaaaaaa1111");
  EXPECT_EQ(acc->accepted_at, "2026-11-20T04:00:00Z");
  EXPECT_FALSE(h.accepted("level1/40_LayerNorm", "h200"));   // matched: nothing new
  EXPECT_FALSE(h.accepted("level1/23_Softmax", "a100"));     // per GPU

  h.record_run(night("2026-11-21", 1.1, "hash-b"));
  EXPECT_EQ(h.accepted("level1/23_Softmax", "h200")->content_hash, "hash-b");

  // Re-recording a run replaces it (idempotent), and does not re-accept the same kernel.
  h.record_run(night("2026-11-21", 1.1, "hash-b"));
  auto runs = h.runs("2026-11-01", "2026-12-01");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].problems, 8);
  RunRecords back = h.load_run("nightly-2026-11-21");
  EXPECT_EQ(back.results.size(), 8u);
  EXPECT_EQ(back.info.started_at, "2026-11-21T02:00:00Z");

  h.accept({"level1/23_Softmax", "h200", "hash-manual", "2026-11-22T00:00:00Z", "c", "", 1, 2, "", 0, 0});
  EXPECT_EQ(h.accepted("level1/23_Softmax", "h200")->content_hash, "hash-manual");
}

TEST(ReportHistory, AnotherKernelReplacesTheAcceptedOneByTheRunsKeepRule) {
  TempDir d;
  History h(d / "history.sqlite");
  h.record_run(night("2026-11-20", 1.0, "hash-a"));
  // 1.1x faster than the accepted kernel, but under a run whose keep threshold is 1.5:
  // not kept in that run's search, so not accepted either.
  RunRecords strict = night("2026-11-21", 1.1, "hash-b");
  strict.info.keep_threshold = 1.5;
  h.record_run(strict);
  EXPECT_EQ(h.accepted("level1/23_Softmax", "h200")->content_hash, "hash-a");
  h.record_run(night("2026-11-22", 1.1, "hash-b"));  // the default 1.01
  EXPECT_EQ(h.accepted("level1/23_Softmax", "h200")->content_hash, "hash-b");
}

TEST(ReportHistory, PersistsAndGivesCosts) {
  TempDir d;
  {
    History h(d / "history.sqlite");
    h.record_run(night("2026-11-20", 1.0, "a"));
  }
  History h(d / "history.sqlite");
  auto cost = h.expected_cost_s("h200");
  EXPECT_DOUBLE_EQ(cost["level3/1_MLP"], 500);
  EXPECT_DOUBLE_EQ(cost["level1/23_Softmax"], 50);
  EXPECT_TRUE(h.expected_cost_s("a100").empty());
}

TEST(ReportHistory, RejectsForeignFiles) {
  TempDir d;
  write_file(d / "not-a-db", "hello, this is not sqlite at all, not even close............");
  EXPECT_THROW(History(d / "not-a-db"), UsageError);
  EXPECT_THROW(History(d / "no/such/dir/h.sqlite"), InfraError);
}

TEST(ReportHistory, WeeklyTrend) {
  TempDir d;
  History h(d / "history.sqlite");
  // A week of nights: speedups of improved/matched problems grow 10% a night; an older night
  // outside the window must not show up.
  h.record_run(night("2026-11-10", 5.0, "old"));
  const char* dates[] = {"2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26",
                         "2026-11-27", "2026-11-28", "2026-11-29"};
  double scale = 1.0;
  for (const char* date : dates) {
    h.record_run(night(date, scale, std::string("h") + date));
    scale *= 1.1;
  }
  WeeklyReport w = weekly_report(h, "");  // default: the 7 days ending with the latest run
  EXPECT_EQ(w.since, "2026-11-23");
  EXPECT_EQ(w.until, "2026-11-30");
  ASSERT_EQ(w.nights.size(), 7u);
  ASSERT_EQ(w.levels.size(), 3u);
  // level3: only 1_MLP is correct -> geomean = its speedup, 1.2 * 1.1^i.
  for (size_t i = 0; i < 7; ++i) {
    ASSERT_TRUE(w.geomean["level3"][i]);
    EXPECT_NEAR(*w.geomean["level3"][i], 1.2 * std::pow(1.1, static_cast<double>(i)), 1e-9);
  }
  EXPECT_LT(*w.geomean["level1"][0], *w.geomean["level1"][6]);  // trending up

  auto has = [](const std::vector<ProblemTrend>& v, const std::string& p) {
    for (const auto& t : v)
      if (t.problem == p) return true;
    return false;
  };
  EXPECT_TRUE(has(w.improved, "level1/23_Softmax"));
  EXPECT_TRUE(has(w.improved, "level3/1_MLP"));
  EXPECT_TRUE(has(w.regressed, "level1/12_Matmul"));          // correctness regression nights
  EXPECT_TRUE(has(w.regressed, "level2/12_Gemm_Multiply_LeakyReLU"));
  EXPECT_FALSE(has(w.improved, "level1/36_RMSNorm"));         // fallback, flat
  ASSERT_FALSE(w.best.empty());
  EXPECT_EQ(w.best[0].problem, "level1/23_Softmax");
  EXPECT_NEAR(w.best[0].best_speedup, 1.8 * std::pow(1.1, 6), 1e-9);
  EXPECT_EQ(w.best[0].best_night, "2026-11-29");

  WeeklyReport explicit_week = weekly_report(h, "2026-11-10");
  EXPECT_EQ(explicit_week.nights.size(), 1u);
  EXPECT_THROW(weekly_report(h, "last tuesday"), UsageError);

  std::string md = weekly_markdown(w);
  EXPECT_NE(md.find("| level3 | 1.200x | 1.320x |"), std::string::npos) << md;
  std::string html = weekly_html(w);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(weekly_json(w)["nights"].size(), 7u);
  expect_golden(md, "weekly.md");
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The weeks before this one, a dip between the endpoints, the accepted line.
TEST(ReportHistory, WeeklyWeeksDipsAndTheAcceptedLine) {
  TempDir d;
  History h(d / "history.sqlite");
  // Three weeks earlier, twice as fast: the first record of 23_Softmax is accepted (3.6x).
  h.record_run(night("2026-11-02", 2.0, "h"));
  const char* dates[] = {"2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-28"};
  for (const char* date : dates) {
    RunRecords run = night(date, 1.0, "h");
    for (auto& r : run.results) {
      if (r.problem == "23_Softmax" && std::string(date) == "2026-11-25") {  // halved, then back
        r.speedup = 0.9;
        r.speedup_lo = 0.85;
        r.speedup_hi = 0.95;
      }
      if (r.problem == "40_LayerNorm" && std::string(date) == "2026-11-24") r.speedup *= 0.99;  // noise
    }
    h.record_run(run);
  }
  WeeklyReport w = weekly_report(h, "");
  ASSERT_EQ(w.nights.size(), 5u);
  ASSERT_EQ(w.weeks.size(), static_cast<size_t>(kWeeklyTrendWeeks));
  // This week: the 7 days ending with the latest night (2026-11-28); 8 weeks back from it.
  EXPECT_EQ(w.since, "2026-11-22");
  EXPECT_EQ(w.weeks.front(), "2026-10-04");
  EXPECT_EQ(w.weeks[4], "2026-11-01");  // holds 2026-11-02
  EXPECT_EQ(w.weeks.back(), "2026-11-22");
  // level3 is 1_MLP alone: 1.2x scaled by its week's night.
  ASSERT_EQ(w.week_geomean["level3"].size(), w.weeks.size());
  EXPECT_FALSE(w.week_geomean["level3"][0]);
  ASSERT_TRUE(w.week_geomean["level3"][4]);
  EXPECT_NEAR(*w.week_geomean["level3"][4], 2.4, 1e-9);
  EXPECT_FALSE(w.week_geomean["level3"][5]);
  ASSERT_TRUE(w.week_geomean["level3"][7]);
  EXPECT_NEAR(*w.week_geomean["level3"][7], 1.2, 1e-9);

  ASSERT_EQ(w.dipped.size(), 1u);  // not 40_LayerNorm's 1 % (within the threshold)
  const ProblemTrend& sm = w.dipped[0];
  EXPECT_EQ(sm.problem, "level1/23_Softmax");
  EXPECT_EQ(sm.dip_night, "2026-11-25");
  EXPECT_DOUBLE_EQ(sm.dip_speedup, 0.9);
  EXPECT_DOUBLE_EQ(sm.first_speedup, 1.8);
  EXPECT_DOUBLE_EQ(sm.last_speedup, 1.8);
  ASSERT_TRUE(sm.accepted_speedup);
  EXPECT_DOUBLE_EQ(*sm.accepted_speedup, 3.6);
  ASSERT_EQ(sm.speedup.size(), 5u);
  ASSERT_TRUE(sm.speedup_lo[2] && sm.speedup_hi[2]);
  EXPECT_DOUBLE_EQ(*sm.speedup_lo[2], 0.85);
  // First and last alone see nothing: the dip is not a regression or an improvement.
  for (const auto& t : w.regressed) EXPECT_NE(t.problem, "level1/23_Softmax");
  for (const auto& t : w.improved) EXPECT_NE(t.problem, "level1/23_Softmax");

  const std::string md = weekly_markdown(w);
  EXPECT_NE(md.find("## Geomean speedup per level per week"), std::string::npos) << md;
  EXPECT_NE(md.find("| level3 | - | - | - | - | 2.400x | - | - | 1.200x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| level1/23_Softmax | 1.800x | 0.900x (2026-11-25) | 1.800x | 3.600x |"), std::string::npos)
      << md;
  const std::string html = weekly_html(w);
  EXPECT_NE(html.find("per level per week"), std::string::npos);
  EXPECT_EQ(count_of(html, "<svg"), count_of(html, "</svg>"));
  EXPECT_GE(count_of(html, "<svg"), 3u);  // per night, per week, the dipped problem
  EXPECT_EQ(count_of(html, "class=\"dip\""), 1u);
  EXPECT_NE(html.find("class=\"whisker\""), std::string::npos);
  EXPECT_NE(html.find("accepted 3.600x"), std::string::npos);
  EXPECT_NE(html.find(">1x</text>"), std::string::npos);  // a log-scale tick
  const nlohmann::json j = weekly_json(w);
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["weeks"].size(), w.weeks.size());
  ASSERT_EQ(j["dipped"].size(), 1u);
  EXPECT_EQ(j["dipped"][0]["dip_night"], "2026-11-25");
  EXPECT_EQ(j["problems"]["level1/23_Softmax"]["speedup"][2], 0.9);
  EXPECT_NEAR(j["week_geomean_speedup"]["level3"][4].get<double>(), 2.4, 1e-9);
}

TEST(ReportHistory, WeeklyOnEmptyHistoryIsAUsageError) {
  TempDir d;
  History h(d / "history.sqlite");
  EXPECT_THROW(weekly_report(h, ""), UsageError);
}

TEST(ReportHistory, CliRecordsAndReportsWeekly) {
  TempDir d;
  std::string db = d / "h.sqlite";
  auto [rc, out] = run_command(kgate_bin() + " report --from " + fixture("run_basic") + " --out " +
                               (d / "r") + " --db " + db);
  EXPECT_EQ(rc, 0) << out;
  auto [rc2, out2] =
      run_command(kgate_bin() + " report --db " + db + " --weekly --out " + (d / "weekly"));
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_NE(read_file(d / "weekly/weekly.md").find("2026-11-29"), std::string::npos);
  auto [rc3, out3] = run_command(kgate_bin() + " report --weekly");
  EXPECT_EQ(rc3, 2) << out3;
}

}  // namespace
}  // namespace kgate::report

// Google Benchmark JSON: the fields tools/compare.py and github-action-benchmark read,
// one iteration entry per sample, aggregates with their names, and a round trip through
// a file and nlohmann.
#include "stats/gbench_json.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

namespace kgate::stats {
namespace {

namespace fs = std::filesystem;

std::vector<GbenchSeries> two_series() {
  GbenchSeries a;
  a.name = "softmax_4096/baseline";
  a.samples_us = {10.0, 12.0, 11.0, 13.0};
  a.iterations = 8;
  a.counters["bytes_per_second"] = 1e9;
  GbenchSeries b;
  b.name = "softmax_4096/candidate";
  b.samples_us = {9.0, 9.5, 10.0};
  return {a, b};
}

TEST(StatsGbenchJson, HasTheContextFieldsToolsRead) {
  GbenchContext ctx = host_context("/usr/bin/kgate");
  ctx.extra["kgate_version"] = "0.1.0";
  const nlohmann::json doc = to_gbench_json(ctx, two_series());
  const nlohmann::json& c = doc.at("context");
  for (const char* k : {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                        "cpu_scaling_enabled", "caches", "load_avg", "library_build_type"})
    EXPECT_TRUE(c.contains(k)) << k;
  EXPECT_EQ(c["executable"], "/usr/bin/kgate");
  EXPECT_EQ(c["kgate_version"], "0.1.0");
  EXPECT_GE(c["num_cpus"].get<int>(), 1);
  EXPECT_EQ(c["library_build_type"], "release");
  EXPECT_TRUE(c["caches"].is_array());
  // ISO 8601 with a colon in the offset: 2026-11-29T12:00:00+00:00
  const std::string date = c["date"];
  ASSERT_EQ(date.size(), 25u) << date;
  EXPECT_EQ(date[10], 'T');
  EXPECT_EQ(date[22], ':');
}

TEST(StatsGbenchJson, OneIterationPerSamplePlusAggregates) {
  const nlohmann::json doc = to_gbench_json(host_context("x"), two_series());
  const nlohmann::json& b = doc.at("benchmarks");
  ASSERT_EQ(b.size(), 4u + 4u + 3u + 4u);
  int iterations = 0;
  std::set<std::string> aggregates;
  for (const auto& e : b) {
    // What compare.py's partitioning and difference report read from every entry.
    for (const char* k : {"name", "run_name", "run_type", "repetitions", "threads",
                          "iterations", "real_time", "cpu_time", "time_unit"})
      ASSERT_TRUE(e.contains(k)) << k << " in " << e.dump();
    EXPECT_EQ(e["time_unit"], "us");
    if (e["run_type"] == "iteration") {
      ++iterations;
      EXPECT_EQ(e["name"], e["run_name"]);
      EXPECT_TRUE(e.contains("repetition_index"));
    } else {
      ASSERT_EQ(e["run_type"], "aggregate");
      aggregates.insert(e["name"].get<std::string>());
      EXPECT_EQ(e["name"].get<std::string>(),
                e["run_name"].get<std::string>() + "_" + e["aggregate_name"].get<std::string>());
    }
  }
  EXPECT_EQ(iterations, 7);
  EXPECT_TRUE(aggregates.count("softmax_4096/baseline_median"));
  EXPECT_TRUE(aggregates.count("softmax_4096/candidate_stddev"));
  // First series: samples in order, batch as iterations, counters copied, right stats.
  EXPECT_EQ(b[0]["name"], "softmax_4096/baseline");
  EXPECT_EQ(b[0]["repetitions"], 4);
  EXPECT_EQ(b[2]["repetition_index"], 2);
  EXPECT_DOUBLE_EQ(b[2]["real_time"].get<double>(), 11.0);
  EXPECT_EQ(b[0]["iterations"], 8);
  EXPECT_DOUBLE_EQ(b[0]["bytes_per_second"].get<double>(), 1e9);
  for (const auto& e : b) {
    if (e["name"] == "softmax_4096/baseline_median") {
      EXPECT_DOUBLE_EQ(e["real_time"].get<double>(), 11.5);
    }
    if (e["name"] == "softmax_4096/baseline_mean") {
      EXPECT_DOUBLE_EQ(e["real_time"].get<double>(), 11.5);
    }
    if (e["name"] == "softmax_4096/candidate_median") {
      EXPECT_DOUBLE_EQ(e["cpu_time"].get<double>(), 9.5);
    }
    if (e["name"] == "softmax_4096/baseline_cv") {
      EXPECT_EQ(e["aggregate_unit"], "percentage");
    }
  }
  // Families are distinct per series (compare.py groups by name).
  EXPECT_EQ(b[8]["name"], "softmax_4096/candidate");
  EXPECT_NE(b[0]["family_index"], b[8]["family_index"]);
}

TEST(StatsGbenchJson, RoundTripsThroughAFile) {
  const fs::path p = fs::temp_directory_path() / ("kgate-gbench-" + std::to_string(::getpid()) + "/out.json");
  const nlohmann::json doc = to_gbench_json(host_context("x"), two_series());
  write_gbench_json(p.string(), doc);
  std::ifstream in(p);
  const nlohmann::json back = nlohmann::json::parse(in);
  EXPECT_EQ(back, doc);
  fs::remove_all(p.parent_path());
}

TEST(StatsGbenchJson, EmptySeriesGivesNoEntries) {
  GbenchSeries s;
  s.name = "empty";
  const nlohmann::json doc = to_gbench_json(host_context("x"), {s});
  EXPECT_TRUE(doc["benchmarks"].empty());
}

}  // namespace
}  // namespace kgate::stats

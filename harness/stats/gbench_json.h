#pragma once
// Timing results in Google Benchmark's JSON format, so its tools/compare.py (U test over
// repetitions) and github-action-benchmark (tool: googlecpp) read kgate's numbers as
// they are. Each sample is one repetition (run_type "iteration"); median, mean, stddev
// and cv follow as aggregates (run_type "aggregate"), as `--benchmark_repetitions` makes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgate::stats {

struct GbenchCache {
  std::string type;      // "Data", "Instruction", "Unified"
  int level = 0;
  int64_t size = 0;      // bytes
  int num_sharing = 0;
};

struct GbenchContext {
  std::string date;               // ISO 8601 with offset, e.g. 2026-11-29T12:00:00+00:00
  std::string host_name;
  std::string executable;
  int num_cpus = 0;
  double mhz_per_cpu = 0;
  bool cpu_scaling_enabled = false;
  std::vector<GbenchCache> caches;
  std::vector<double> load_avg;
  std::string library_build_type = "release";
  // kgate-specific fields (device, backend, timer, git sha...) added to "context".
  std::map<std::string, std::string> extra;
};

// The running machine's context (from /proc and /sys on Linux; fields stay empty/zero
// where unavailable).
GbenchContext host_context(const std::string& executable);

// One benchmark: its per-call samples in microseconds.
struct GbenchSeries {
  std::string name;                   // e.g. "softmax_4096/candidate"
  std::vector<double> samples_us;     // one repetition each
  int64_t iterations = 1;             // calls averaged into each sample (the worker's batch)
  std::string label;
  std::map<std::string, double> counters;  // user counters on every entry (e.g. bytes_per_second)
};

nlohmann::json to_gbench_json(const GbenchContext& ctx, const std::vector<GbenchSeries>& series);

// Writes the document atomically. InfraError on failure.
void write_gbench_json(const std::string& path, const nlohmann::json& doc);

}  // namespace kgate::stats

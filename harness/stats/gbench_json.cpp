#include "stats/gbench_json.h"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "core/error.h"
#include "core/file_io.h"
#include "stats/descriptive.h"

namespace kgate::stats {

namespace fs = std::filesystem;

namespace {

std::string read_first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// "32K" / "1024K" / "36M" -> bytes.
int64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  int64_t mult = 1;
  if (end && *end == 'K') mult = 1024;
  if (end && *end == 'M') mult = 1024 * 1024;
  if (end && *end == 'G') mult = 1024LL * 1024 * 1024;
  return v * mult;
}

// Number of CPUs in a sysfs cpu list such as "0-3,8-11".
int count_cpu_list(const std::string& s) {
  int n = 0;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      if (!part.empty()) ++n;
    } else {
      n += std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
    }
  }
  return n;
}

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  std::string s = buf;  // +0000 -> +00:00 as Google Benchmark writes it
  if (s.size() >= 5) s.insert(s.size() - 2, ":");
  return s;
}

nlohmann::json entry(const GbenchSeries& s, const std::string& name, int family_index,
                     int repetitions) {
  nlohmann::json e;
  e["name"] = name;
  e["family_index"] = family_index;
  e["per_family_instance_index"] = 0;
  e["run_name"] = s.name;
  e["repetitions"] = repetitions;
  e["threads"] = 1;
  e["iterations"] = s.iterations;
  e["time_unit"] = "us";
  if (!s.label.empty()) e["label"] = s.label;
  for (const auto& [k, v] : s.counters) e[k] = v;
  return e;
}

}  // namespace

GbenchContext host_context(const std::string& executable) {
  GbenchContext c;
  c.date = iso_now();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) c.host_name = host;
  c.executable = executable;
  c.num_cpus = static_cast<int>(std::thread::hardware_concurrency());
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("cpu MHz", 0) == 0) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) c.mhz_per_cpu = std::atof(line.c_str() + colon + 1);
        break;
      }
    }
  }
  const std::string gov =
      read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  c.cpu_scaling_enabled = !gov.empty() && gov != "performance";
  std::error_code ec;
  const fs::path cache_dir = "/sys/devices/system/cpu/cpu0/cache";
  for (int i = 0; fs::exists(cache_dir / ("index" + std::to_string(i)), ec); ++i) {
    const fs::path d = cache_dir / ("index" + std::to_string(i));
    GbenchCache k;
    k.type = read_first_line(d / "type");
    k.level = std::atoi(read_first_line(d / "level").c_str());
    k.size = parse_size(read_first_line(d / "size"));
    k.num_sharing = count_cpu_list(read_first_line(d / "shared_cpu_list"));
    c.caches.push_back(k);
  }
  double la[3];
  if (::getloadavg(la, 3) == 3) c.load_avg.assign(la, la + 3);
  return c;
}

nlohmann::json to_gbench_json(const GbenchContext& ctx, const std::vector<GbenchSeries>& series) {
  nlohmann::json doc;
  nlohmann::json& c = doc["context"];
  c["date"] = ctx.date;
  c["host_name"] = ctx.host_name;
  c["executable"] = ctx.executable;
  c["num_cpus"] = ctx.num_cpus;
  c["mhz_per_cpu"] = static_cast<int64_t>(std::llround(ctx.mhz_per_cpu));
  c["cpu_scaling_enabled"] = ctx.cpu_scaling_enabled;
  c["caches"] = nlohmann::json::array();
  for (const GbenchCache& k : ctx.caches)
    c["caches"].push_back(
        {{"type", k.type}, {"level", k.level}, {"size", k.size}, {"num_sharing", k.num_sharing}});
  c["load_avg"] = ctx.load_avg;
  c["library_build_type"] = ctx.library_build_type;
  for (const auto& [k, v] : ctx.extra) c[k] = v;

  nlohmann::json& out = doc["benchmarks"];
  out = nlohmann::json::array();
  int family = 0;
  for (const GbenchSeries& s : series) {
    const int reps = static_cast<int>(s.samples_us.size());
    for (int i = 0; i < reps; ++i) {
      nlohmann::json e = entry(s, s.name, family, reps);
      e["run_type"] = "iteration";
      e["repetition_index"] = i;
      // kgate times device work; the orchestrator's CPU time is not what was measured,
      // so cpu_time carries the same number (tools require the field).
      e["real_time"] = s.samples_us[static_cast<std::size_t>(i)];
      e["cpu_time"] = s.samples_us[static_cast<std::size_t>(i)];
      out.push_back(std::move(e));
    }
    if (reps > 0) {
      const double med = median(s.samples_us);
      const double avg = mean(s.samples_us);
      const double sd = stddev(s.samples_us);
      struct Agg {
        const char* name;
        double value;
        const char* unit;
      };
      const Agg aggs[] = {{"mean", avg, "time"},
                          {"median", med, "time"},
                          {"stddev", sd, "time"},
                          {"cv", avg != 0 ? sd / avg : 0.0, "percentage"}};
      for (const Agg& a : aggs) {
        nlohmann::json e = entry(s, s.name + "_" + a.name, family, reps);
        e["run_type"] = "aggregate";
        e["aggregate_name"] = a.name;
        e["aggregate_unit"] = a.unit;
        e["real_time"] = a.value;
        e["cpu_time"] = a.value;
        out.push_back(std::move(e));
      }
    }
    ++family;
  }
  return doc;
}

void write_gbench_json(const std::string& path, const nlohmann::json& doc) {
  const core::WriteResult w = core::write_file_atomic(path, doc.dump(2) + "\n");
  switch (w.stage) {
    case core::WriteResult::Stage::kOk: return;
    case core::WriteResult::Stage::kCreateDir:  // the temp file cannot be created there either
    case core::WriteResult::Stage::kOpen: throw InfraError(w.tmp + ": error: cannot write");
    case core::WriteResult::Stage::kWrite: throw InfraError(w.tmp + ": error: write failed");
    case core::WriteResult::Stage::kRename:
      throw InfraError(path + ": error: cannot write Google Benchmark JSON: " + w.error);
  }
}

}  // namespace kgate::stats

// kgate_measure_study: the A/A and power study behind docs/measurement.md.
// For each size class it asks a kgate-native worker for interleaved samples of
//   A/A:   the softmax starter against itself, N times -> how many verdicts are not `same`
//   power: the starter followed by a spin kernel of 3% of its median time
//          (tools/study/*_delay.cu) against the starter, N times -> how many are `slower`
// plus one long interleaved run that measures the true size of the injected slowdown.
// Verdicts come from stats::compare with the suite defaults, exactly as the gate uses it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gates/performance_gate.h"
#include "stats/compare.h"
#include "worker/worker.h"

using nlohmann::json;

namespace {

struct SizeClass {
  std::string label;
  std::string op;
  json dims;
  std::string dtype;
  std::string starter;  // under kernelbench/native/starters/
  std::string delayed;  // under tools/study/
};

// Both slots interleaved on the class's shape; max_time_s as the study has always used.
kgate::protocol::TimeParams pair_params(const SizeClass& c, double min_time_s, uint64_t seed) {
  kgate::protocol::TimeParams p;
  p.slots = {"candidate", "baseline"};
  p.dtype = c.dtype;
  p.seed = seed;
  p.min_time_s = min_time_s;
  p.max_time_s = std::max(2.0, 4 * min_time_s);
  return p;
}

kgate::protocol::TimeResult time_pair(kgate::worker::Worker& w, const SizeClass& c,
                                      const kgate::protocol::TimeParams& p) {
  json req = p;
  req["dims"] = c.dims;
  auto r = w.call("time", req, 120);
  if (!r.good()) throw std::runtime_error("time: " + r.describe());
  return r.result.get<kgate::protocol::TimeResult>();
}

kgate::stats::Comparison compare(const kgate::protocol::TimeResult& t) {
  return kgate::stats::compare(t.samples_us.at("baseline"), t.samples_us.at("candidate"), {});
}

// One verdict as the performance gate reaches it: a run, and when it is inconclusive one
// more four times as long, judged together (gates::extended_time_params).
kgate::stats::Comparison verdict(kgate::worker::Worker& w, const SizeClass& c, double min_time_s,
                                 uint64_t seed, bool* extended) {
  const kgate::protocol::TimeParams p = pair_params(c, min_time_s, seed);
  kgate::protocol::TimeResult t = time_pair(w, c, p);
  kgate::stats::Comparison cmp = compare(t);
  *extended = cmp.verdict == kgate::gates::SpeedVerdict::kUnknown;
  if (*extended) cmp = compare(kgate::gates::merge_time_results(t, time_pair(w, c, kgate::gates::extended_time_params(p))));
  return cmp;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kgate measurement study (A/A false alarms, power on an injected slowdown)"};
  std::string native, root = KGATE_SOURCE_DIR, out = "measure_study.json", backend = "cuda";
  int trials = 100;
  double min_time_s = 0.1;
  app.add_option("--native", native, "kgate-native path");
  app.add_option("--root", root, "kgate source tree");
  app.add_option("--out", out, "JSON output");
  app.add_option("--trials", trials, "Comparisons per class and scenario");
  app.add_option("--min-time", min_time_s, "min_time_s per comparison");

  double slowdown = 0.03;
  app.add_option("--slowdown", slowdown, "Injected slowdown, fraction of the median");
  std::vector<std::string> only;
  app.add_option("--classes", only, "Size classes to run (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"5us", "50us", "500us", "5ms"}));
  CLI11_PARSE(app, argc, argv);
  std::vector<SizeClass> all = {
      {"5us", "softmax", {{"R", 256}, {"C", 2048}}, "f16", "softmax.cu", "softmax_delay.cu"},
      {"50us", "softmax", {{"R", 8192}, {"C", 8192}}, "f16", "softmax.cu", "softmax_delay.cu"},
      {"500us", "softmax", {{"R", 16384}, {"C", 32768}}, "f16", "softmax.cu", "softmax_delay.cu"},
      {"5ms", "matmul", {{"M", 12288}, {"N", 12288}, {"K", 12288}}, "bf16", "matmul_cublas.cu",
       "matmul_cublas_delay.cu"}};
  std::vector<SizeClass> classes;
  for (const auto& c : all)
    if (only.empty() || std::find(only.begin(), only.end(), c.label) != only.end())
      classes.push_back(c);
  kgate::worker::WorkerSpec spec;
  spec.argv = {kgate::worker::locate_native_bin(native)};
  json report = {{"version", 1}, {"trials", trials}, {"min_time_s", min_time_s}, {"classes", json::array()}};

  std::printf("%-6s %-12s %8s %8s %8s %8s %8s %9s %8s\n", "class", "scenario", "same", "faster",
              "slower", "unknown", "extended", "median_us", "s/verdict");
  for (const auto& c : classes) {
    kgate::worker::Worker w(spec);
    auto hello = w.call("hello", {{"backend", backend}}, 60);
    if (!hello.good()) {
      std::fprintf(stderr, "hello: %s\n", hello.describe().c_str());
      return 3;
    }
    report["device"] = hello.result["device"];
    w.call("load_problem", {{"problem", {{"id", c.op}, {"op", c.op}}}}, 60);
    const std::string starter = root + "/kernelbench/native/starters/" + c.starter;
    const std::string delayed = root + "/tools/study/" + c.delayed;
    json cls = {{"class", c.label}, {"op", c.op}, {"dims", c.dims}, {"dtype", c.dtype}};
    long long extra_ns = 0;
    for (std::string scenario : {"aa", "power"}) {
      auto comp = w.call("compile", {{"slot", "baseline"}, {"source_path", starter}}, 300);
      auto comp2 = w.call("compile",
                          {{"slot", "candidate"},
                           {"source_path", scenario == "aa" ? starter : delayed},
                           {"defines", {{"EXTRA_NS", std::to_string(extra_ns)}}}},
                          300);
      if (!comp.good() || !comp2.good() || !comp.result.value("compiled", false) ||
          !comp2.result.value("compiled", false)) {
        std::fprintf(stderr, "compile failed: %s %s\n", comp.result.dump().c_str(),
                     comp2.result.dump().c_str());
        return 3;
      }
      int same = 0, faster = 0, slower = 0, unknown = 0, extended = 0;
      std::vector<double> speedups;
      auto t0 = std::chrono::steady_clock::now();
      double median_us = 0;
      for (int i = 0; i < trials; ++i) {
        bool ext = false;
        auto cmp = verdict(w, c, min_time_s, 1, &ext);  // same inputs: the runner caches them
        extended += ext ? 1 : 0;
        median_us = cmp.baseline_median_us;
        speedups.push_back(cmp.speedup);
        switch (cmp.verdict) {
          case kgate::gates::SpeedVerdict::kSame: ++same; break;
          case kgate::gates::SpeedVerdict::kFaster: ++faster; break;
          case kgate::gates::SpeedVerdict::kSlower: ++slower; break;
          case kgate::gates::SpeedVerdict::kUnknown: ++unknown; break;
        }
      }
      double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / trials;
      json s = {{"same", same}, {"faster", faster}, {"slower", slower}, {"unknown", unknown},
                {"extended", extended},
                {"baseline_median_us", median_us}, {"seconds_per_verdict", per},
                {"speedups", speedups}};
      if (scenario == "power") {
        // The true effect: one long interleaved run.
        auto cmp = compare(time_pair(w, c, pair_params(c, 3.0, 1)));
        s["true_slowdown_pct"] = 100.0 * (1.0 / cmp.speedup - 1.0);
        s["true_speedup_ci"] = {cmp.speedup_lo, cmp.speedup_hi};
      }
      if (scenario == "aa") extra_ns = static_cast<long long>(slowdown * median_us * 1000.0);
      s["extra_ns"] = scenario == "aa" ? 0 : extra_ns;
      cls[scenario] = s;
      std::printf("%-6s %-12s %8d %8d %8d %8d %8d %9.2f %8.3f%s\n", c.label.c_str(), scenario.c_str(),
                  same, faster, slower, unknown, extended, median_us, per,
                  scenario == "power"
                      ? (" true slowdown " + std::to_string(s["true_slowdown_pct"].get<double>()) + "%").c_str()
                      : "");
      std::fflush(stdout);
    }
    report["classes"].push_back(cls);
  }
  std::ofstream(out) << report.dump(1) << "\n";
  return 0;
}

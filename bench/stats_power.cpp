// kgate_stats_power: Monte-Carlo verdict rates of stats::compare on synthetic interleaved
// samples (stats/synthetic.h). Prints a Markdown table: for each noise model, noise level
// (CV), samples per side and true effect, how often the verdict is faster / same / slower
// / unknown. Usage: kgate_stats_power [seeds=1000]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "stats/compare.h"
#include "stats/synthetic.h"

using namespace kgate::stats;
using namespace kgate::stats::synthetic;
using kgate::gates::SpeedVerdict;

namespace {

struct Scenario {
  Noise noise;
  double cv;
  int n;
  double ratio;  // candidate / baseline time
  const char* what;
};

void run(const Scenario& s, int seeds) {
  int counts[4] = {0, 0, 0, 0};
  for (int i = 0; i < seeds; ++i) {
    const Pair p = interleaved(500000 + static_cast<uint64_t>(i), s.n, s.ratio, s.cv, s.noise);
    ++counts[static_cast<int>(compare(p.baseline, p.candidate).verdict)];
  }
  auto pct = [&](SpeedVerdict v) { return 100.0 * counts[static_cast<int>(v)] / seeds; };
  std::printf("| %-9s | %4.1f%% | %4d | %-13s | %6.1f%% | %6.1f%% | %6.1f%% | %6.1f%% |\n",
              to_string(s.noise), 100 * s.cv, s.n, s.what, pct(SpeedVerdict::kFaster),
              pct(SpeedVerdict::kSame), pct(SpeedVerdict::kSlower), pct(SpeedVerdict::kUnknown));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (seeds <= 0) {
    std::fprintf(stderr, "usage: kgate_stats_power [seeds>0]\n");
    return 2;
  }
  std::printf("seeds per row: %d; thresholds keep 1.01, regression 1.03, confidence 0.95\n\n",
              seeds);
  std::printf("| noise     |   CV  |    n | truth         |  faster |    same |  slower | unknown |\n");
  std::printf("|-----------|-------|------|---------------|---------|---------|---------|---------|\n");
  const Noise kinds[] = {Noise::kNormal, Noise::kLognormal, Noise::kOutliers, Noise::kBimodal,
                         Noise::kDrift};
  struct Effect {
    double ratio;
    const char* what;
  };
  const Effect effects[] = {{1.0, "A/A"},
                            {1.015, "1.5% slower"},
                            {1.03, "3% slower"},
                            {1.05, "5% slower"},
                            {1 / 1.03, "3% faster"}};
  for (Noise k : kinds)
    for (double cv : {0.005, 0.01, 0.02})
      for (const Effect& e : effects) run({k, cv, 50, e.ratio, e.what}, seeds);
  for (int n : {10, 20, 100, 400})
    for (const Effect& e : effects) run({Noise::kNormal, 0.01, n, e.ratio, e.what}, seeds);
  return 0;
}

#pragma once
// Synthetic interleaved timing samples of known distribution: what the statistics are
// validated against (tests/unit/stats_compare_test.cpp) and what `kgate_stats_power`
// measures the verdict's false-positive rate and power on (docs/measurement.md).
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace kgate::stats::synthetic {

enum class Noise { kNormal, kLognormal, kOutliers, kBimodal, kDrift };

inline const char* to_string(Noise n) {
  switch (n) {
    case Noise::kNormal: return "normal";
    case Noise::kLognormal: return "lognormal";
    case Noise::kOutliers: return "outliers";
    case Noise::kBimodal: return "bimodal";
    case Noise::kDrift: return "drift";
  }
  return "?";
}

// One sample of a kernel whose true time is `t`, with relative noise `cv`.
inline double draw(core::Rng& rng, Noise kind, double t, double cv) {
  switch (kind) {
    case Noise::kNormal:
    case Noise::kDrift:
      return t * (1 + cv * rng.normal());
    case Noise::kLognormal:  // skewed, heavier right tail
      return t * core::portable_exp(cv * rng.normal());
    case Noise::kOutliers:  // 5 % preemption spikes of +20..+200 %
      if (rng.uniform() < 0.05) return t * (1.2 + 1.8 * rng.uniform());
      return t * (1 + cv * rng.normal());
    case Noise::kBimodal:  // two clock states 4 % apart, 70 / 30
      return t * (rng.uniform() < 0.3 ? 1.04 : 1.0) * (1 + cv * rng.normal());
  }
  return t;
}

struct Pair {
  std::vector<double> baseline, candidate;
};

// ABAB... interleaving; `ratio` = candidate time / baseline time (1.03 = 3 % slower).
// Drift: the machine slows by 3 % over the run, seen by both sides alike.
inline Pair interleaved(uint64_t seed, int n, double ratio, double cv,
                        Noise kind = Noise::kNormal, double t_us = 100) {
  core::Rng rng(seed);
  Pair p;
  for (int i = 0; i < n; ++i) {
    const double drift = kind == Noise::kDrift ? 1 + 0.03 * i / n : 1.0;
    p.baseline.push_back(draw(rng, kind, t_us * drift, cv));
    p.candidate.push_back(draw(rng, kind, t_us * drift * ratio, cv));
  }
  return p;
}

}  // namespace kgate::stats::synthetic

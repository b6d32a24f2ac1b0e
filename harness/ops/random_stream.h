#pragma once
// A small, fast deterministic generator for correctness inputs: splitmix64 over a state
// derived from (seed, stream index), so every input tensor of a case has its own stream
// and adding an input never changes the values of the others.
#include <cmath>
#include <cstdint>

namespace kgate::ops {

class RandomStream {
 public:
  RandomStream(uint64_t seed, uint64_t stream) : state_(mix(seed ^ mix(stream + 0x5851f42d4c957f2dULL))) {}

  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix(state_);
  }
  // U[0,1) with 53 random bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // N(0,1) by Marsaglia's polar method; the second value is kept for the next call. Uses
  // only IEEE-exact operations (+ - * / sqrt) and our own log, so the values do not
  // depend on the platform's libm.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2 * uniform01() - 1;
      v = 2 * uniform01() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double f = std::sqrt(-2 * portable_log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }
  // log(x) for finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
  // log m = 2 atanh(z), z = (m - 1)/(m + 1), |z| < 0.172, by its odd series to z^25.
  static double portable_log(double x) {
    int e = 0;
    double m = std::frexp(x, &e);  // exact: m in [0.5, 1)
    if (m < 0.70710678118654752) {
      m *= 2;
      e -= 1;
    }
    const double z = (m - 1) / (m + 1), z2 = z * z;
    double sum = 0;
    for (int k = 25; k >= 3; k -= 2) sum = (sum + 1.0 / k) * z2;
    return 2 * z * (1 + sum) + e * 0.69314718055994531;
  }
  // Uniform integer in [0, bound), bound >= 1 (multiply-shift; bias < 2^-64 * bound).
  uint64_t below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace kgate::ops

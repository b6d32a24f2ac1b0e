#pragma once
// kgate's one random number generator: correctness inputs (ops/op.cpp), bootstrap
// resampling and the synthetic-noise fixtures (stats/). The numbers are the same on every
// platform and standard library, which std::*_distribution and libm do not promise:
// the generator is splitmix64 over a state derived from (seed, stream), so every input
// tensor chunk has its own stream and adding one never changes the others; the
// distributions use only IEEE-exact operations (+ - * / sqrt, frexp, ldexp, floor) and
// the log and exp below, never libm's.
#include <cmath>
#include <cstdint>

namespace kgate::core {

// log(x) for finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(z), z = (m - 1)/(m + 1), |z| < 0.172, by its odd series to z^25.
inline double portable_log(double x) {
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

// exp(x): x = k ln2 + r with |r| <= ln2/2 (ln2 split in two so k ln2 is exact), e^r by
// its Taylor series to r^18, then scaled by 2^k. Overflows to inf, underflows to 0.
inline double portable_exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return HUGE_VAL;
  if (x < -745.1332191019412) return 0.0;
  const double k = std::floor(x * 1.4426950408889634 + 0.5);
  const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  double p = 1;
  for (int n = 18; n >= 1; --n) p = 1 + p * r / n;
  return std::ldexp(p, static_cast<int>(k));
}

// x^y for x > 0.
inline double portable_pow(double x, double y) { return portable_exp(y * portable_log(x)); }

class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0)
      : state_(mix(seed ^ mix(stream + 0x5851f42d4c957f2dULL))) {}

  uint64_t next_u64() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix(state_);
  }
  // U[0,1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // U(0,1): safe to take the logarithm of.
  double uniform_open() {
    double u;
    do u = uniform();
    while (u == 0.0);
    return u;
  }
  // Uniform integer in [0, bound), bound >= 1 (multiply-shift; bias < 2^-64 * bound).
  uint64_t below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * bound) >> 64);
  }
  // N(0,1) by Marsaglia's polar method; the second value is kept for the next call.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2 * uniform() - 1;
      v = 2 * uniform() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double f = std::sqrt(-2 * portable_log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }
  // Gamma(shape, 1) (Marsaglia-Tsang; shape < 1 by the boost U^(1/shape)).
  double gamma(double shape) {
    if (shape < 1.0) return gamma(shape + 1.0) * portable_pow(uniform_open(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform_open();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
      if (portable_log(u) < 0.5 * x * x + d * (1.0 - v + portable_log(v))) return d * v;
    }
  }
  // Beta(a, b) from two gammas.
  double beta(double a, double b) {
    const double x = gamma(a);
    const double y = gamma(b);
    return x / (x + y);
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

}  // namespace kgate::core

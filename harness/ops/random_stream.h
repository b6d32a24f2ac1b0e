#pragma once
// A small, fast deterministic generator for correctness inputs: splitmix64 over a state
// derived from (seed, stream index), so every input tensor of a case has its own stream
// and adding an input never changes the values of the others.
#include <cmath>
#include <cstdint>
#include <numbers>

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
  // N(0,1) by Box-Muller; the second value is kept for the next call.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = uniform01();
    const double u2 = uniform01();
    if (u1 < 0x1.0p-60) u1 = 0x1.0p-60;  // log(0) guard
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
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

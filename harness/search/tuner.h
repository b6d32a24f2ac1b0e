#pragma once
// The built-in tuner's strategy over a TuneSpace: start at the declared default,
// coordinate descent (nearest values first along each axis, axes in a seeded order),
// seeded random restarts when a descent is exhausted, and for large spaces a spread
// sample whose best survivors (halved each round) seed the descents. A point is never
// proposed twice. Deterministic in (space, seed, observations), so a resumed run that
// replays the journal's observations proposes what the killed run would have.
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "search/tune_space.h"

namespace kgate::search {

struct TunerOptions {
  std::size_t large_space = 64;  // above this many points, start from a spread sample
  int spread_samples = 6;        // size of that sample
};

class Tuner {
 public:
  Tuner(TuneSpace space, uint64_t seed, TunerOptions options = {});

  // The next unmeasured point, or nullopt when every point has been measured.
  std::optional<Point> propose();

  // The result of a measured point: `improved` when the search kept it (it became the
  // new best); `cost` is its latency (lower is better) or nullopt when it failed a gate.
  void observe(const Point& point, bool improved, std::optional<double> cost);

  bool measured(const Point& point) const;
  std::size_t measured_count() const { return measured_.size(); }
  const TuneSpace& space() const { return space_; }

 private:
  using Index = std::vector<int>;  // value index per tunable
  Index to_index(const Point& p) const;
  Point to_point(const Index& i) const;
  std::string key(const Index& i) const;
  void rebuild_queue(const Index& center);
  std::optional<Index> random_unmeasured();
  void plan_spread();

  TuneSpace space_;
  TunerOptions options_;
  std::mt19937_64 rng_;
  std::set<std::string> measured_;
  std::vector<Index> queue_;   // front = next
  std::optional<Index> center_;
  std::optional<double> center_cost_;
  bool center_is_best_ = true;     // false while descending from a restart
  std::optional<Index> restart_;   // the random restart proposed last
  // Large spaces: sampled starts (measured) with their cost, best first after each round.
  std::vector<std::pair<Index, double>> survivors_;
  std::vector<Index> spread_;  // still to sample
  bool spread_planned_ = false;
};

}  // namespace kgate::search

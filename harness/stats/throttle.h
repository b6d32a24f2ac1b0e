#pragma once
// Which timing samples count as throttled. A sample whose SM clock is under `fraction` of
// the reference is dropped; the reference is the device's default clock, unless the run's
// own median clock is already below that line: then the kernel itself holds the clock
// down (a power-bound GEMM on an H200 settles well under its boost clock) and every
// sample would be dropped, so the run is judged against its steady clock instead.
#include <string>
#include <vector>

namespace kgate::stats {

struct ThrottleReference {
  double mhz = 0;          // samples under fraction x mhz are throttled; 0 = none are
  bool steady_low = false;  // the run's median clock replaced the default
  std::string note;         // why, when steady_low
};

// `clocks_mhz`: every sample's clock (values <= 0 are unknown and ignored).
ThrottleReference throttle_reference(const std::vector<int>& clocks_mhz, int default_mhz,
                                     double fraction);

}  // namespace kgate::stats

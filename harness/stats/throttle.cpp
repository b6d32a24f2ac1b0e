#include "stats/throttle.h"

#include <algorithm>
#include <cstdio>

namespace kgate::stats {

ThrottleReference throttle_reference(const std::vector<int>& clocks_mhz, int default_mhz,
                                     double fraction) {
  ThrottleReference r;
  if (default_mhz <= 0) return r;
  r.mhz = default_mhz;
  std::vector<int> known;
  for (int c : clocks_mhz)
    if (c > 0) known.push_back(c);
  if (known.empty()) return r;
  auto mid = known.begin() + static_cast<std::ptrdiff_t>(known.size() / 2);
  std::nth_element(known.begin(), mid, known.end());
  const int median = *mid;
  if (median < fraction * default_mhz) {
    r.mhz = median;
    r.steady_low = true;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "SM clock steady at %d MHz, under %.0f%% of the default %d MHz (a power- or "
                  "heat-bound run): throttling judged against %d MHz",
                  median, 100 * fraction, default_mhz, median);
    r.note = buf;
  }
  return r;
}

}  // namespace kgate::stats

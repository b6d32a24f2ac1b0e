#pragma once
// Numbers in messages, one way for every layer.
#include <cstdio>
#include <string>
#include <utility>

namespace kgate::core {

// Compact number for messages: 3 significant digits ("0.00211", "1e-03", "1.31e+05").
inline std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Two numbers a message sets side by side ("got A, want B"): 3 significant digits, more
// where those would print two different values alike (0.021021 and 0.021 as "0.021"
// twice), up to the digits that tell them apart.
inline std::pair<std::string, std::string> fmt_num_pair(double a, double b) {
  char x[40], y[40];
  for (int digits = 3; digits <= 17; ++digits) {
    std::snprintf(x, sizeof x, "%.*g", digits, a);
    std::snprintf(y, sizeof y, "%.*g", digits, b);
    if (a == b || std::string(x) != y) break;
  }
  return {x, y};
}

// A size in bytes for messages: "812.0 MiB", "23.4 GiB".
inline std::string fmt_bytes(long double b) {
  char buf[32];
  const bool gib = b >= static_cast<long double>(1ull << 30);
  std::snprintf(buf, sizeof buf, "%.1f %s", static_cast<double>(b / (gib ? (1ull << 30) : (1ull << 20))),
                gib ? "GiB" : "MiB");
  return buf;
}

}  // namespace kgate::core

#pragma once
// Numbers in messages, one way for every layer.
#include <cstdio>
#include <string>

namespace kgate::core {

// Compact number for messages: 3 significant digits ("0.00211", "1e-03", "1.31e+05").
inline std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
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

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

}  // namespace kgate::core

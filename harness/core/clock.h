#pragma once
// Wall-clock formatting shared by the run journal, run.json and PR-check records.
#include <ctime>
#include <string>

namespace kgate {

// The current UTC time formatted with strftime's `fmt`, e.g. "%Y-%m-%dT%H:%M:%SZ".
inline std::string utc_now(const char* fmt) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

}  // namespace kgate

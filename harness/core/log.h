#pragma once
// Logging: human lines on a TTY, plain timestamped lines in CI (CI=true or not a TTY).
// --quiet shows warnings and errors only; --verbose adds debug lines.
#include <cstdio>
#include <string>
#include <string_view>

namespace kgate::log {

enum class Level { kDebug, kInfo, kWarn, kError };

struct Options {
  bool quiet = false;
  bool verbose = false;
  bool ci = false;   // timestamped plain lines, no progress bar, no colour
  bool tty = false;  // stderr is a terminal
  bool colour = false;  // tty and NO_COLOR unset (no-color.org)
};

// Reads CI / GITHUB_ACTIONS / JENKINS_URL, NO_COLOR and isatty(stderr).
Options detect(bool quiet, bool verbose);
void configure(const Options& opts);
const Options& options();

void write(Level level, std::string_view message);
inline void debug(std::string_view m) { write(Level::kDebug, m); }
inline void info(std::string_view m) { write(Level::kInfo, m); }
inline void warn(std::string_view m) { write(Level::kWarn, m); }
inline void error(std::string_view m) { write(Level::kError, m); }

// A progress bar on a TTY; one line per step() in CI mode; nothing when quiet.
class Progress {
 public:
  Progress(std::string label, int total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void step(std::string_view what);  // one unit done
  void finish();

 private:
  void draw(std::string_view what);
  std::string label_;
  int total_;
  int done_ = 0;
  bool finished_ = false;
};

}  // namespace kgate::log

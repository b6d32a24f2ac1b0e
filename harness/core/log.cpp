#include "core/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace kgate::log {
namespace {

Options g_opts;
std::mutex g_mu;

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  std::string s(v);
  return !(s.empty() || s == "0" || s == "false" || s == "FALSE" || s == "no");
}

std::string timestamp() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t t = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

const char* level_name(Level l) {
  switch (l) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warning";
    case Level::kError: return "error";
  }
  return "?";
}

}  // namespace

Options detect(bool quiet, bool verbose) {
  Options o;
  o.quiet = quiet;
  o.verbose = verbose;
  o.ci = env_true("CI") || env_true("GITHUB_ACTIONS") || std::getenv("JENKINS_URL") != nullptr;
  o.tty = isatty(STDERR_FILENO) == 1 && !o.ci;
  const char* no_colour = std::getenv("NO_COLOR");
  o.colour = o.tty && !(no_colour && *no_colour);
  return o;
}

void configure(const Options& opts) { g_opts = opts; }
const Options& options() { return g_opts; }

void write(Level level, std::string_view message) {
  if (level == Level::kDebug && !g_opts.verbose) return;
  if (level == Level::kInfo && g_opts.quiet) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_opts.tty) {
    std::fputs("\r\033[K", stderr);  // clear a progress bar line
    const char* colour = !g_opts.colour          ? ""
                         : level == Level::kError ? "\033[31m"
                         : level == Level::kWarn  ? "\033[33m"
                                                  : "";
    if (level == Level::kInfo || level == Level::kDebug) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
    } else {
      std::fprintf(stderr, "%skgate: %s:%s %.*s\n", colour, level_name(level), g_opts.colour ? "\033[0m" : "",
                   static_cast<int>(message.size()), message.data());
    }
  } else {
    std::fprintf(stderr, "%s [%s] %.*s\n", timestamp().c_str(), level_name(level),
                 static_cast<int>(message.size()), message.data());
  }
  std::fflush(stderr);
}

Progress::Progress(std::string label, int total) : label_(std::move(label)), total_(total) {}

Progress::~Progress() { finish(); }

void Progress::step(std::string_view what) {
  ++done_;
  draw(what);
}

void Progress::draw(std::string_view what) {
  if (g_opts.quiet) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_opts.tty) {
    const int width = 30;
    int filled = total_ > 0 ? done_ * width / total_ : width;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(width, '.');
    std::fprintf(stderr, "\r\033[K%s [%s] %d/%d %.*s", label_.c_str(), bar.c_str(), done_, total_,
                 static_cast<int>(what.size()), what.data());
  } else {
    std::fprintf(stderr, "%s [info] %s %d/%d %.*s\n", timestamp().c_str(), label_.c_str(), done_,
                 total_, static_cast<int>(what.size()), what.data());
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (g_opts.tty && !g_opts.quiet && done_ > 0) {
    std::lock_guard<std::mutex> lock(g_mu);
    std::fputs("\n", stderr);
  }
}

}  // namespace kgate::log

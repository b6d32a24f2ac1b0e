// libFuzzer target: the YAML config loader (harness/config/loader.h).
//
// The input is the text of one config file, read as one or more of the four kinds `kgate
// validate` knows (GPU target, level, suite, native problem; see below) at a path of the
// source tree where that kind lives, so relative paths in the text resolve as they would
// there.
// Contract (loader.h): parse_*_text() never throw on bad input; every problem is a
// diagnostic, and the strict form turns them into one kgate::UsageError. Anything else --
// an exception of yaml-cpp, nlohmann or the standard library escaping, a crash, a
// sanitizer report -- is a bug in the loader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/diagnostics.h"
#include "config/loader.h"
#include "core/error.h"

namespace {

using namespace kgate::config;

// What `kgate validate` does with the diagnostics: sort, print, exit 2 on an error.
void report(Diagnostics& d) {
  d.sort();
  (void)d.str();
  try {
    d.throw_if_errors();
  } catch (const kgate::UsageError&) {
  }
}

const std::string& root() {
  static const std::string r = KGATE_SOURCE_DIR;
  return r;
}

// A key at the start of a line of the text (top level, block style).
bool has_key(const std::string& text, const char* key) {
  const std::string k = std::string(key) + ":";
  for (std::size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + 1))
    if (at == 0 || text[at - 1] == '\n') return true;
  return false;
}

}  // namespace

// Each input is read as the kinds its top-level keys point at (a suite's `gpus:`, a
// level's `root:`, a GPU target's `match:`, a problem's `op:`), and as all four when none
// does: the kind is where the file lives, so every kind has to cope with every text, but
// four YAML parses per input would quarter the executions.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  bool gpu = has_key(text, "match") || has_key(text, "sm_count") || has_key(text, "peak_tflops");
  bool level = has_key(text, "root") || has_key(text, "select") || has_key(text, "glob");
  bool suite = has_key(text, "gpus") || has_key(text, "levels") || has_key(text, "budget");
  bool problem = has_key(text, "op") || has_key(text, "sweep") || has_key(text, "starters");
  if (!gpu && !level && !suite && !problem) gpu = level = suite = problem = true;
  if (gpu) {
    Diagnostics d;
    (void)parse_gpu_text(root() + "/configs/gpus/fuzz.yaml", text, d);
    report(d);
  }
  if (level) {
    Diagnostics d;
    LevelRefs refs;
    (void)parse_level_text(root() + "/configs/levels/fuzz.yaml", text, d, &refs);
    report(d);
  }
  if (suite) {
    Diagnostics d;
    SuiteRefs refs;
    (void)parse_suite_text(root() + "/suites/fuzz.yaml", text, d, &refs);
    report(d);
  }
  if (problem) {
    Diagnostics d;
    (void)parse_native_problem_text(root() + "/kernelbench/native/fuzz.yaml", text, d);
    report(d);
  }
  return 0;
}

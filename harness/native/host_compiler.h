#pragma once
// Compiles one C++ translation unit into a shared object with the system compiler, cached
// by content hash. Used by the host backend (candidates) and by the runner for user
// float64 references (on every backend: references always run on the host).
#include <map>
#include <string>
#include <vector>

namespace kgate::native {

struct HostCompileRequest {
  std::string text;          // the exact translation unit (starts with a #line for the user file)
  std::string source_dir;    // added with -iquote so the user's relative #includes still work
  std::map<std::string, std::string> defines;  // -DNAME=value
  std::string cache_dir;     // root; objects go to <cache_dir>/host/
};

struct HostCompileOutput {
  bool ok = false;
  bool cache_hit = false;
  double compile_ms = 0;
  std::string so_path;  // the cached shared object when ok
  std::string log;      // compiler output (warnings on success, errors on failure), trimmed
};

class HostCompiler {
 public:
  HostCompiler();
  HostCompileOutput compile(const HostCompileRequest& req);

  // The compiler command (env CXX, default "c++"), split on whitespace.
  const std::vector<std::string>& command() const { return cxx_; }
  // First line of `<cxx> --version`, part of the cache key.
  const std::string& version() const { return version_; }
  // Directory holding kgate/kernel.h: env KGATE_INCLUDE_DIR, else the source tree's.
  static std::string include_dir();
  // The fixed flags (without defines), in order.
  std::vector<std::string> base_flags(const std::string& source_dir) const;

 private:
  std::vector<std::string> cxx_;
  std::string version_;
};


// Keeps the head and tail of a long compiler log (the first error and the summary matter).
std::string trim_log(const std::string& log, std::size_t max_bytes = 32 * 1024);

// Runs argv (no shell), stdout+stderr captured together, stdin from /dev/null.
// Returns the exit status (-1 when it could not start; 128+signal when killed).
int run_capture(const std::vector<std::string>& argv, std::string* output);

}  // namespace kgate::native

#pragma once
// A test's own copy of a config fixture tree with one file's text edited: for cases that
// need a repository the fixtures do not hold as such (a bench past this machine's memory).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kgate::config::testing {

// Copies FROM to $TMPDIR/kgate-TAG-<pid> (replacing an earlier copy) and replaces the
// first `old` in the copy's REL with `replacement`. Returns the copy's root; the caller
// removes it.
inline std::filesystem::path copy_with_edit(const std::string& from, const std::string& tag,
                                            const std::string& rel, const std::string& old,
                                            const std::string& replacement) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / ("kgate-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::copy(from, d, fs::copy_options::recursive);
  const fs::path f = d / rel;
  std::stringstream ss;
  ss << std::ifstream(f).rdbuf();
  std::string text = ss.str();
  if (const auto at = text.find(old); at != std::string::npos) text.replace(at, old.size(), replacement);
  std::ofstream(f, std::ios::trunc) << text;
  return d;
}

}  // namespace kgate::config::testing

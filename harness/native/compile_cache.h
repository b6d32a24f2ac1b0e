#pragma once
// The one object cache of kgate-native's compilers (host C++ and CUDA): content-addressed
// files under <root>/<backend>/, shared by concurrent runners. Every file is written
// under a name unique to its process and call and renamed into place, the object last, so
// a present object is a complete entry.
#include <filesystem>
#include <string>

namespace kgate::native {

// Where objects go when a run names no cache directory: $XDG_CACHE_HOME/kgate, else
// $HOME/.cache/kgate, else /tmp/kgate-cache.
std::string default_cache_dir();

class CompileCache {
 public:
  // <root or default_cache_dir()>/<backend>, created. A directory that cannot be created
  // throws InfraError naming it: the machine's fault, never the candidate's.
  CompileCache(const std::string& root, const std::string& backend);

  const std::filesystem::path& dir() const { return dir_; }
  // <dir>/<hash><ext>
  std::filesystem::path entry(const std::string& hash, const std::string& ext) const;
  // A name beside entry(hash, ext) no other process or call uses: "<hash><ext>.tmp-<pid>-<n>".
  std::filesystem::path temp(const std::string& hash, const std::string& ext) const;
  // Renames `tmp` onto `entry`: "" when done, else the system's reason (`tmp` removed).
  static std::string publish(const std::filesystem::path& tmp, const std::filesystem::path& entry);

 private:
  std::filesystem::path dir_;
};

}  // namespace kgate::native

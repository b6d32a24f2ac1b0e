#pragma once
// The one object cache of kgate-native's compilers (host C++ and CUDA): content-addressed
// files under <root>/<backend>/, shared by concurrent runners. Every file is written
// under a name unique to its process and call and renamed into place, the object last, so
// a present object is a complete entry.
//
// Once a sandboxed worker has loaded compiled code (seal_before_loading), the cache is
// read-only to it: it still finds the entries written before, and writes new ones to a
// directory of its own, so nothing a candidate does can plant or replace an object that
// another worker loads.
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

  // Where entries are written: <root>/<backend>, or the worker's own directory once sealed.
  const std::filesystem::path& dir() const { return write_dir_; }
  // <dir>/<hash><ext>: where the entry is written.
  std::filesystem::path entry(const std::string& hash, const std::string& ext) const;
  // The entry where it exists (the worker's own directory first, then the shared one), else "".
  std::filesystem::path find(const std::string& hash, const std::string& ext) const;
  // A name beside entry(hash, ext) no other process or call uses: "<hash><ext>.tmp-<pid>-<n>".
  std::filesystem::path temp(const std::string& hash, const std::string& ext) const;
  // Renames `tmp` onto `entry`: "" when done, else the system's reason (`tmp` removed).
  static std::string publish(const std::filesystem::path& tmp, const std::filesystem::path& entry);

 private:
  std::filesystem::path dir_;        // <root>/<backend>
  std::filesystem::path write_dir_;  // dir_, or <own>/<backend> once sealed
};

// Called before a compiled slot module is loaded (its constructors run at dlopen). The
// first call in a sandboxed worker (KGATE_WORKER_SEAL=1, set by kgate) narrows the
// process's writes to a directory of its own, <TMPDIR>/kgate-worker-<pid> (then its
// TMPDIR), /dev and the CUDA driver's JIT cache (core::narrow_writes_in_process);
// elsewhere, and on later calls, it does nothing. When the layer cannot be built it says
// why on stderr once and goes on, unless KGATE_SANDBOX=strict (InfraError).
void seal_before_loading();

}  // namespace kgate::native

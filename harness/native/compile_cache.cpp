#include "native/compile_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <system_error>

#include "core/error.h"

namespace kgate::native {

namespace fs = std::filesystem;

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kgate";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kgate";
  return "/tmp/kgate-cache";
}

CompileCache::CompileCache(const std::string& root, const std::string& backend)
    : dir_(fs::path(root.empty() ? default_cache_dir() : root) / backend) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw InfraError("cannot create cache directory " + dir_.string() + ": " + ec.message());
}

fs::path CompileCache::entry(const std::string& hash, const std::string& ext) const {
  return dir_ / (hash + ext);
}

fs::path CompileCache::temp(const std::string& hash, const std::string& ext) const {
  static std::atomic<unsigned> counter{0};
  return dir_ / (hash + ext + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
}

std::string CompileCache::publish(const fs::path& tmp, const fs::path& entry) {
  std::error_code ec;
  fs::rename(tmp, entry, ec);
  if (!ec) return "";
  std::error_code ignored;
  fs::remove(tmp, ignored);
  return ec.message();
}

}  // namespace kgate::native

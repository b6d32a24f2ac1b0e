#include "native/compile_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/sandbox.h"

namespace kgate::native {

namespace fs = std::filesystem;

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kgate";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kgate";
  return "/tmp/kgate-cache";
}

namespace {
// The worker's own directory once sealed, else "".
std::string& sealed_dir() {
  static std::string dir;
  return dir;
}
}  // namespace

void seal_before_loading() {
  static bool tried = false;
  if (tried) return;
  tried = true;
  const char* want = std::getenv("KGATE_WORKER_SEAL");
  if (!want || std::string(want) != "1") return;
  const char* t = std::getenv("TMPDIR");
  const std::string own = std::string(t && *t ? t : "/tmp") + "/kgate-worker-" + std::to_string(::getpid());
  // The CUDA driver's JIT cache stays writable: whether the driver loads a module whose
  // JIT result it cannot store has not been tried on a GPU yet (its entries are keyed by
  // the PTX, a narrower target than the compile cache's).
  std::vector<std::string> keep = {own, "/dev"};
  if (const char* c = std::getenv("CUDA_CACHE_PATH"); c && *c) keep.emplace_back(c);
  else if (const char* h = std::getenv("HOME"); h && *h) keep.push_back(std::string(h) + "/.nv");
  bool every_thread = false;
  const std::string why = core::narrow_writes_in_process(keep, &every_thread);
  if (!why.empty()) {
    const std::string msg = "sandbox: the compile cache stays writable to candidate code: " + why;
    if (core::sandbox_from_env().strict) throw InfraError(msg + " (KGATE_SANDBOX=strict)");
    std::fprintf(stderr, "kgate-native: %s\n", msg.c_str());
    return;
  }
  if (!every_thread)
    std::fprintf(stderr, "kgate-native: sandbox: the compile cache is read-only to the loading thread and "
                         "the threads it starts; threads that already ran keep the spawn-time walls "
                         "(Landlock ABI < 8)\n");
  sealed_dir() = own;
  ::setenv("TMPDIR", own.c_str(), 1);  // the compilers' temporary files
}

CompileCache::CompileCache(const std::string& root, const std::string& backend)
    : dir_(fs::path(root.empty() ? default_cache_dir() : root) / backend),
      write_dir_(sealed_dir().empty() ? dir_ : fs::path(sealed_dir()) / "cache" / backend) {
  std::error_code ec;
  fs::create_directories(write_dir_, ec);
  if (ec) throw InfraError("cannot create cache directory " + write_dir_.string() + ": " + ec.message());
}

fs::path CompileCache::entry(const std::string& hash, const std::string& ext) const {
  return write_dir_ / (hash + ext);
}

fs::path CompileCache::find(const std::string& hash, const std::string& ext) const {
  std::error_code ec;
  // The worker's own entry first: one it rebuilt over a damaged shared entry.
  for (const fs::path& d : {write_dir_, dir_})
    if (fs::exists(d / (hash + ext), ec)) return d / (hash + ext);
  return {};
}

fs::path CompileCache::temp(const std::string& hash, const std::string& ext) const {
  static std::atomic<unsigned> counter{0};
  return write_dir_ / (hash + ext + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
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

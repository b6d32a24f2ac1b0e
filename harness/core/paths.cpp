#include "core/paths.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "kgate/build_info.h"

namespace fs = std::filesystem;

namespace kgate::paths {

std::string install_prefix() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path bin = exe.parent_path();
  if (bin.filename() != "bin") return "";
  fs::path prefix = bin.parent_path();
  if (!fs::is_directory(prefix / "share" / "kgate" / "configs" / "gpus", ec)) return "";
  return prefix.string();
}

std::string data_dir() {
  std::string p = install_prefix();
  return p.empty() ? std::string(build::kSourceDir) : (fs::path(p) / "share" / "kgate").string();
}

std::string include_dir() {
  if (const char* e = std::getenv("KGATE_INCLUDE_DIR"); e && *e) return e;
  std::string p = install_prefix();
  return p.empty() ? (fs::path(build::kSourceDir) / "harness" / "include").string()
                   : (fs::path(p) / "include").string();
}

std::string builtin_gpus_dir() { return (fs::path(data_dir()) / "configs" / "gpus").string(); }

std::string absolute(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

std::string kept_cache_dir() {
  const char* v = std::getenv("KGATE_CACHE_DIR");
  return v && *v ? absolute(v) : std::string();
}

void require_output_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path out(dir);
  for (fs::path p = out; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))
      throw UsageError(dir + ": not a directory (" + (p == out ? std::string("it is a file") : p.string() + " is a file") +
                       "); --out names the output directory");
    if (p == p.parent_path()) break;
  }
}

}  // namespace kgate::paths

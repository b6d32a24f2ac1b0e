#include "core/paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

namespace kgate::paths {
namespace {

namespace fs = std::filesystem;

TEST(CorePaths, AbsoluteIsAgainstTheWorkingDirectoryAndNormal) {
  const std::string cwd = fs::current_path().string();
  EXPECT_EQ(absolute("a/../b/./c.cpp"), (fs::path(cwd) / "b" / "c.cpp").string());
  EXPECT_EQ(absolute("/x/y/../z"), "/x/z");
  EXPECT_EQ(absolute("/x//y/"), "/x/y/");
}

TEST(CorePaths, TheKeptCacheIsKgateCacheDirMadeAbsolute) {
  const char* was = std::getenv("KGATE_CACHE_DIR");
  const std::string saved = was ? was : "";
  ::unsetenv("KGATE_CACHE_DIR");
  EXPECT_EQ(kept_cache_dir(), "");
  ::setenv("KGATE_CACHE_DIR", "", 1);
  EXPECT_EQ(kept_cache_dir(), "");  // empty: unset
  ::setenv("KGATE_CACHE_DIR", "runner/../cache", 1);
  EXPECT_EQ(kept_cache_dir(), (fs::current_path() / "cache").string());
  if (was) ::setenv("KGATE_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("KGATE_CACHE_DIR");
}

}  // namespace
}  // namespace kgate::paths

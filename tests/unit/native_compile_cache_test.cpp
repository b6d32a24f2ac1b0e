// The one object cache of the host and CUDA compilers (native/compile_cache.h).
#include "native/compile_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "native/host_compiler.h"
#include "native_fixture_match.h"

namespace kgate::native {
namespace {
namespace fs = std::filesystem;

TEST(CompileCache, EntriesTempsAndPublishLiveInTheBackendsFolder) {
  const std::string root = testing::make_temp_dir("cc");
  CompileCache c(root, "host");
  EXPECT_EQ(c.dir(), fs::path(root) / "host");
  EXPECT_TRUE(fs::is_directory(c.dir()));
  EXPECT_EQ(c.entry("abc", ".so"), fs::path(root) / "host" / "abc.so");
  // Temps are unique per call (and carry the process id), beside their entry.
  std::set<std::string> names;
  for (int i = 0; i < 4; ++i) names.insert(c.temp("abc", ".so").filename().string());
  EXPECT_EQ(names.size(), 4u);
  const fs::path t = c.temp("abc", ".so");
  EXPECT_EQ(t.parent_path(), c.dir());
  EXPECT_EQ(t.filename().string().rfind("abc.so.tmp-", 0), 0u) << t;
  std::ofstream(t) << "object";
  EXPECT_EQ(CompileCache::publish(t, c.entry("abc", ".so")), "");
  EXPECT_FALSE(fs::exists(t));
  EXPECT_TRUE(fs::exists(c.entry("abc", ".so")));
  // A publish that cannot happen says why and leaves no temp behind.
  const fs::path t2 = c.temp("abc", ".so");
  std::ofstream(t2) << "object";
  EXPECT_NE(CompileCache::publish(t2, c.dir() / "no-such-dir" / "abc.so"), "");
  EXPECT_FALSE(fs::exists(t2));
  fs::remove_all(root);
}

TEST(CompileCache, AFolderThatCannotBeMadeIsTheMachinesFaultNamingIt) {
  const std::string root = testing::make_temp_dir("cc");
  std::ofstream(fs::path(root) / "file") << "not a directory";
  const std::string bad = (fs::path(root) / "file").string();
  try {
    CompileCache c(bad, "cuda");
    ADD_FAILURE() << "a cache under a regular file was made";
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create cache directory " + bad + "/cuda"),
              std::string::npos)
        << e.what();
  }
  // The host compiler's compile is an infrastructure error there too, not a failed
  // compile of the candidate.
  HostCompiler hc;
  HostCompileRequest req;
  req.text = "int x;\n";
  req.cache_dir = bad;
  EXPECT_THROW(hc.compile(req), InfraError);
  fs::remove_all(root);
}

TEST(CompileCache, TheDefaultRootFollowsXdgThenHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(default_cache_dir(), "/x/cache/kgate");
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* h = std::getenv("HOME"); h && *h) {
    EXPECT_EQ(default_cache_dir(), std::string(h) + "/.cache/kgate");
  }
  if (!saved.empty()) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace kgate::native

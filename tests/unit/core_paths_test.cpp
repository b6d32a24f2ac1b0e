#include "core/paths.h"

#include <unistd.h>

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

}  // namespace
}  // namespace kgate::paths

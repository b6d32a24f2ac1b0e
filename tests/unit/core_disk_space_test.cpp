#include "core/disk_space.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <limits>

namespace fs = std::filesystem;
using kgate::core::disk_full_words;
using kgate::core::storage_trouble;

TEST(DiskSpace, TheSystemsWordsAnywhereInALog) {
  // ld's line has no "error" in it; collect2's, after it, has no words of the disk.
  const std::string log =
      "/usr/bin/ld: final link failed: No space left on device\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(disk_full_words(log), "No space left on device");
  EXPECT_EQ(disk_full_words("write: Disk quota exceeded"), "Disk quota exceeded");
  EXPECT_EQ(disk_full_words("x.so: File too large"), "File too large");
  EXPECT_EQ(disk_full_words("x.cpp:3:1: error: expected ';'"), "");
  EXPECT_EQ(storage_trouble({}, log, 0), "No space left on device");
}

TEST(DiskSpace, LowFreeSpaceNamesTheDirectory) {
  const fs::path dir = fs::temp_directory_path() / ("kgate_disk_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto all = std::numeric_limits<std::uintmax_t>::max();
  // Nothing is short of 0 bytes; everything is short of "all of them".
  EXPECT_EQ(storage_trouble({dir.string()}, "compile error", 0), "");
  const std::string why = storage_trouble({dir.string()}, "compile error", all);
  EXPECT_EQ(why.rfind(dir.string() + " has ", 0), 0u) << why;
  EXPECT_NE(why.find(" KiB free"), std::string::npos) << why;
  // A directory not made yet (a cache's first use) is checked where it would be made;
  // an empty entry (no cache directory given) is skipped.
  const std::string later = storage_trouble({"", (dir / "cache" / "host").string()}, "", all);
  EXPECT_EQ(later.rfind((dir / "cache" / "host").string() + " has ", 0), 0u) << later;
  fs::remove_all(dir);
}

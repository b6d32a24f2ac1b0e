#include "core/dir_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace fs = std::filesystem;
using kgate::DirLock;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(DirLock, ASecondHolderIsRefusedWithTheFirstsNote) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kgate_lock_" + std::to_string(getpid())) / "out";
  fs::remove_all(dir.parent_path());
  {
    DirLock a(dir.string(), "kgate run suites/demo.yaml");
    const std::string note = read_all(dir / DirLock::kFile);
    EXPECT_EQ(note.rfind("pid " + std::to_string(getpid()) + " on ", 0), 0u) << note;
    EXPECT_NE(note.find(": kgate run suites/demo.yaml"), std::string::npos) << note;
    try {
      DirLock b(dir.string(), "kgate run other.yaml");
      FAIL() << "a second lock on one directory was granted";
    } catch (const kgate::UsageError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(dir.string() + " is in use by pid " + std::to_string(getpid())), std::string::npos) << msg;
      EXPECT_NE(msg.find("kgate run suites/demo.yaml; wait for it to finish or use another --out"),
                std::string::npos)
          << msg;
    }
    // the refused one left the holder's note alone
    EXPECT_EQ(read_all(dir / DirLock::kFile), note);
  }
  // released: the next one gets it
  DirLock c(dir.string(), "kgate run again.yaml");
  EXPECT_NE(read_all(dir / DirLock::kFile).find("again.yaml"), std::string::npos);
  fs::remove_all(dir.parent_path());
}

#include "core/dir_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

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

// A holder caught between taking the lock and writing its note: the lock file open and
// flock'd (a second open file description, so it conflicts within this process too),
// the note empty.
struct BareHolder {
  int fd = -1;
  explicit BareHolder(const fs::path& dir) {
    fs::create_directories(dir);
    fd = ::open((dir / DirLock::kFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    EXPECT_EQ(::ftruncate(fd, 0), 0);
  }
  ~BareHolder() { ::close(fd); }
  void write_note(const std::string& line) const {
    EXPECT_EQ(::pwrite(fd, line.data(), line.size(), 0), static_cast<ssize_t>(line.size()));
  }
};

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kgate_lock_" + name + "_" + std::to_string(getpid())) / "out";
  fs::remove_all(dir.parent_path());
  return dir;
}

std::string refusal(const fs::path& dir) {
  try {
    DirLock b(dir.string(), "kgate run other.yaml");
  } catch (const kgate::UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "a second lock on one directory was granted";
  return "";
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

// Two runs started at the same instant: the refused one looked while the holder had the
// lock and no note yet, and said "another kgate process". It waits for the note.
TEST(DirLock, ARefusalInTheEmptyNoteWindowWaitsForTheNote) {
  const fs::path dir = fresh_dir("late_note");
  BareHolder holder(dir);
  const std::string note = "pid " + std::to_string(getpid()) + " on testhost since 2026-12-02T10:00:00Z: kgate run suites/demo.yaml\n";
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    holder.write_note(note);
  });
  const std::string msg = refusal(dir);
  late.join();
  EXPECT_NE(msg.find(dir.string() + " is in use by pid " + std::to_string(getpid()) +
                     " on testhost since 2026-12-02T10:00:00Z: kgate run suites/demo.yaml; wait for it"),
            std::string::npos)
      << msg;
  fs::remove_all(dir.parent_path());
}

// A holder that never writes its note (its disk full, or killed right after the lock):
// the refusal still names it, by the kernel's pid, or says how to find it, and does not
// wait for ever.
TEST(DirLock, ARefusalWithoutANoteStillNamesTheHolder) {
  const fs::path dir = fresh_dir("no_note");
  BareHolder holder(dir);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = refusal(dir);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(waited, DirLock::kNoteWaitS + 2) << msg;
  EXPECT_NE(msg.find(dir.string() + " is in use by "), std::string::npos) << msg;
  EXPECT_NE(msg.find("a kgate process that has not written its note yet"), std::string::npos) << msg;
  const bool by_pid = msg.find("is in use by pid " + std::to_string(getpid()) + " (") != std::string::npos;
  const bool how = msg.find("fuser -v .kgate.lock") != std::string::npos;
  EXPECT_TRUE(by_pid || how) << msg;
  fs::remove_all(dir.parent_path());
}

// A note left by a holder killed earlier (kill -9 keeps the file): while the new holder
// has not replaced it, the refusal does not name the dead one when the kernel can tell.
TEST(DirLock, AStaleNoteOfAnEarlierHolderIsNotTakenForTheHolder) {
  const fs::path dir = fresh_dir("stale_note");
  BareHolder holder(dir);
  if (DirLock::describe_holder(holder.fd, 0).rfind("pid " + std::to_string(getpid()) + " (", 0) != 0)
    GTEST_SKIP() << "/proc/locks does not show this process's lock here: the note is all a refusal has";
  holder.write_note("pid 999999 on testhost since 2026-12-01T00:00:00Z: kgate run old.yaml\n");
  const std::string note = "pid " + std::to_string(getpid()) + " on testhost since 2026-12-02T10:00:00Z: kgate run new.yaml";
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    holder.write_note(note + "\n");
    EXPECT_EQ(::ftruncate(holder.fd, static_cast<off_t>(note.size() + 1)), 0);
  });
  const std::string msg = refusal(dir);
  late.join();
  if (msg.find("the kernel shows pid") != std::string::npos)
    GTEST_SKIP() << "/proc/locks shows another pid for this process (a pid namespace): " << msg;
  EXPECT_NE(msg.find("kgate run new.yaml"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("old.yaml"), std::string::npos) << msg;
  fs::remove_all(dir.parent_path());
}

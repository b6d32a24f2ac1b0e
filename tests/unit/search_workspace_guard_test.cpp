#include "search/workspace_guard.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace kgate::search {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct SearchWorkspaceGuard : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kgate-guard-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir / ".git");
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "kernel.cpp") << "candidate\n";
    std::ofstream(dir / "problem.yaml") << "id: p\n";
    std::ofstream(dir / "sub" / "data.txt") << "data\n";
    std::ofstream(dir / ".git" / "HEAD") << "ref\n";
    fs::permissions(dir / "problem.yaml", fs::perms::owner_read, fs::perm_options::replace);
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(SearchWorkspaceGuard, CandidateAndGitChangesAreAllowed) {
  auto snap = snapshot_workspace(dir.string(), {"kernel.cpp"});
  std::ofstream(dir / "kernel.cpp") << "edited\n";
  std::ofstream(dir / ".git" / "HEAD") << "moved\n";
  EXPECT_TRUE(find_violations(snap).empty());
}

TEST_F(SearchWorkspaceGuard, EveryOtherChangeIsCaughtAndUndone) {
  auto snap = snapshot_workspace(dir.string(), {"kernel.cpp"});
  const std::string h = core::workspace_hash(snap);
  fs::permissions(dir / "problem.yaml", fs::perms::owner_all, fs::perm_options::replace);
  std::ofstream(dir / "problem.yaml") << "id: p\ntolerance: 1e9\n";
  fs::remove(dir / "sub" / "data.txt");
  fs::create_directories(dir / "new" / "deep");
  std::ofstream(dir / "new" / "deep" / "cache.bin") << "stolen outputs\n";
  auto v = find_violations(snap);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].describe(), "created new/deep/cache.bin");
  EXPECT_EQ(v[1].describe(), "modified problem.yaml");
  EXPECT_EQ(v[2].describe(), "deleted sub/data.txt");
  restore_workspace(snap);
  EXPECT_TRUE(find_violations(snap).empty());
  EXPECT_EQ(slurp(dir / "problem.yaml"), "id: p\n");
  EXPECT_EQ(slurp(dir / "sub" / "data.txt"), "data\n");
  EXPECT_FALSE(fs::exists(dir / "new"));
  EXPECT_EQ(core::workspace_hash(snapshot_workspace(dir.string(), {"kernel.cpp"})), h);
}

TEST_F(SearchWorkspaceGuard, ModeChangeIsAViolation) {
  auto snap = snapshot_workspace(dir.string(), {"kernel.cpp"});
  fs::permissions(dir / "problem.yaml", fs::perms::owner_all, fs::perm_options::replace);
  auto v = find_violations(snap);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Violation::Kind::kModeChanged);
  restore_workspace(snap);
  EXPECT_TRUE(find_violations(snap).empty());
}

}  // namespace
}  // namespace kgate::search

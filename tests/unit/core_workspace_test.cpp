// core::snapshot_workspace: the one workspace snapshot (the workspace guard and the static
// gate both use it), its .git rule, and the whole-workspace hash.
#include "core/workspace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"

namespace kgate::core {
namespace {

namespace fs = std::filesystem;

class CoreWorkspace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kgate-core-ws-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    fs::create_directories(dir_ / ".git");
    write("kernel.cpp", "int k;");
    write("sub/helper.h", "int h;");
    write(".git/HEAD", "ref: x");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  std::string hash() { return workspace_hash(snapshot_workspace(dir_.string(), {"kernel.cpp"})); }
  fs::path dir_;
};

TEST_F(CoreWorkspace, HashIgnoresTheCandidateAndGitButNotTheRest) {
  const std::string d = dir_.string();
  const std::string h0 = hash();
  EXPECT_EQ(h0, workspace_hash(snapshot_workspace(d, {(dir_ / "kernel.cpp").string()})));  // absolute = relative
  EXPECT_NE(h0, workspace_hash(snapshot_workspace(d, {})));  // nothing exempt
  write("kernel.cpp", "int k2;");
  write(".git/HEAD", "ref: y");
  EXPECT_EQ(hash(), h0);
  write("sub/helper.h", "int h2;");
  const std::string h1 = hash();
  EXPECT_NE(h1, h0);
  write("new.txt", "x");
  const std::string h2 = hash();
  EXPECT_NE(h2, h1);
  fs::permissions(dir_ / "new.txt", fs::perms::owner_read, fs::perm_options::replace);
  EXPECT_NE(hash(), h2);  // the mode is part of the state
}

// A pair experiment's snapshot exempts the candidate and its partner files, and nothing else.
TEST_F(CoreWorkspace, SeveralExemptFilesAreLeftOutAndOnlyThey) {
  const std::string d = dir_.string();
  auto pair = [&] { return workspace_hash(snapshot_workspace(d, {"kernel.cpp", "sub/helper.h", ""})); };
  const std::string h0 = pair();
  EXPECT_EQ(snapshot_workspace(d, {"kernel.cpp", "sub/helper.h"}).exempt,
            (std::vector<std::string>{"kernel.cpp", "sub/helper.h"}));
  write("kernel.cpp", "int k2;");
  write("sub/helper.h", "int h2;");
  EXPECT_EQ(pair(), h0);
  write("new.txt", "x");
  EXPECT_NE(pair(), h0);
}

TEST_F(CoreWorkspace, EntriesAreGitBlobIdsAndModes) {
  write("hello.txt", "hello\n");
  fs::permissions(dir_ / "hello.txt", fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  const WorkspaceSnapshot s = snapshot_workspace(dir_.string(), {"kernel.cpp"}, SnapshotContent::kKeep);
  ASSERT_EQ(s.files.size(), 2u);
  const WorkspaceFile& f = s.files.at("hello.txt");
  // `printf 'hello\n' | git hash-object --stdin`
  EXPECT_EQ(f.id, "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(f.mode, 0600u);
  EXPECT_EQ(f.content, "hello\n");
  EXPECT_EQ(s.exempt, std::vector<std::string>{"kernel.cpp"});
  // Without kKeep the bytes are not held.
  EXPECT_EQ(snapshot_workspace(dir_.string(), {"kernel.cpp"}).files.at("hello.txt").content, "");
}

// The two snapshots this one replaces skipped .git differently: the static gate's skipped
// every entry named .git at any depth, the guard's only the root's. The root's is right:
// it is the only one that experiment commits change, and skipping any other let a change
// under sub/.git/ pass both the guard and the gate unseen.
TEST_F(CoreWorkspace, OnlyTheRootsGitIsSkipped) {
  fs::create_directories(dir_ / "sub" / ".git");
  write("sub/.git/config", "planted");
  write("sub/.git2", "not git");
  const WorkspaceSnapshot before = snapshot_workspace(dir_.string(), {"kernel.cpp"});
  EXPECT_EQ(before.files.count("sub/.git/config"), 1u);
  EXPECT_EQ(before.files.count("sub/.git2"), 1u);
  EXPECT_EQ(before.files.count(".git/HEAD"), 0u);
  write("sub/.git/config", "changed");
  write(".git/HEAD", "moved");
  const std::vector<WorkspaceChange> c = workspace_changes(before, snapshot_workspace(dir_.string(), {"kernel.cpp"}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].describe(), "modified sub/.git/config");
  EXPECT_TRUE(is_root_git(".git"));
  EXPECT_TRUE(is_root_git(".git/objects/ab"));
  EXPECT_FALSE(is_root_git("sub/.git"));
  EXPECT_FALSE(is_root_git(".gitignore"));
}

TEST_F(CoreWorkspace, SymlinksByTargetFifosSkipped) {
  fs::create_symlink("sub/helper.h", dir_ / "link.h");
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  const WorkspaceSnapshot before = snapshot_workspace(dir_.string(), {"kernel.cpp"});  // must not block
  EXPECT_EQ(before.files.count("pipe"), 0u);
  ASSERT_EQ(before.files.count("link.h"), 1u);
  EXPECT_TRUE(before.files.at("link.h").is_link);
  EXPECT_EQ(before.files.at("link.h").link_target, "sub/helper.h");
  fs::remove(dir_ / "link.h");
  fs::create_symlink("kernel.cpp", dir_ / "link.h");
  const std::vector<WorkspaceChange> c = workspace_changes(before, snapshot_workspace(dir_.string(), {"kernel.cpp"}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kind, WorkspaceChange::Kind::kModified);
  EXPECT_EQ(c[0].path, "link.h");
}

TEST_F(CoreWorkspace, ChangesAreKindedInPathOrder) {
  const WorkspaceSnapshot before = snapshot_workspace(dir_.string(), {"kernel.cpp"});
  write("a.txt", "new");
  fs::remove(dir_ / "sub" / "helper.h");
  const std::vector<WorkspaceChange> c = workspace_changes(before, snapshot_workspace(dir_.string(), {"kernel.cpp"}));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].describe(), "created a.txt");
  EXPECT_EQ(c[1].describe(), "deleted sub/helper.h");
}

TEST_F(CoreWorkspace, NotADirectoryIsAnInfraError) {
  EXPECT_THROW(snapshot_workspace((dir_ / "kernel.cpp").string(), {}), InfraError);
  EXPECT_THROW(snapshot_workspace((dir_ / "missing").string(), {}), InfraError);
}

}  // namespace
}  // namespace kgate::core

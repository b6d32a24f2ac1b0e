#include "search/experiment_repo.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.h"

namespace fs = std::filesystem;

namespace kgate::search {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct SearchExperimentRepo : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kgate-repo-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; }
};

TEST_F(SearchExperimentRepo, CommitRevertTagAndTrailers) {
  ExperimentRepo repo(dir.string());
  repo.use_branch("kgate/demo/run1/softmax");
  EXPECT_EQ(repo.head(), "");
  write("kernel.cpp", "v0\n");
  write("problem.yaml", "id: softmax\n");
  std::string c0 = repo.commit("experiment 0: baseline\n\n" +
                               format_trailers({{"Kgate-Experiment", "0"}, {"Kgate-Verdict", "baseline"}}));
  EXPECT_EQ(repo.head(), c0);
  EXPECT_EQ(repo.current_branch(), "kgate/demo/run1/softmax");

  write("kernel.cpp", "v1 faster\n");
  std::string c1 = repo.commit("experiment 1: faster\n\nKgate-Experiment: 1\nKgate-Verdict: keep\n"
                               "Kgate-Speedup: 1.5000 [1.4000, 1.6000]\n");
  repo.tag("kgate/run1/softmax/best", c1);
  repo.set_ref("refs/kgate/run1/softmax/0001", c1);

  write("kernel.cpp", "v2 broken\n");
  std::string c2 = repo.commit("experiment 2: broken\n\nKgate-Experiment: 2\nKgate-Verdict: revert\n"
                               "Kgate-Gate: correctness\n");
  repo.set_ref("refs/kgate/run1/softmax/0002", c2);
  repo.reset_hard(c1);
  EXPECT_EQ(repo.head(), c1);
  EXPECT_EQ(slurp(dir / "kernel.cpp"), "v1 faster\n");  // worktree follows the reset

  auto log = repo.log(repo.head());
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].summary, "experiment 1: faster");
  EXPECT_EQ(log[0].trailers.at("Kgate-Verdict"), "keep");
  EXPECT_EQ(log[0].trailers.at("Kgate-Speedup"), "1.5000 [1.4000, 1.6000]");
  EXPECT_EQ(log[1].id, c0);
  EXPECT_TRUE(log[1].parents.empty());
  // The reverted experiment stays reachable through its ref.
  EXPECT_EQ(repo.read(c2).trailers.at("Kgate-Gate"), "correctness");
  EXPECT_EQ(repo.resolve("refs/tags/kgate/run1/softmax/best"), c1);
  EXPECT_EQ(repo.refs("refs/kgate/run1/").size(), 2u);
  EXPECT_EQ(repo.file_at(c2, "kernel.cpp"), "v2 broken\n");
  repo.delete_ref("refs/kgate/run1/softmax/0002");
  EXPECT_EQ(repo.refs("refs/kgate/run1/").size(), 1u);
}

TEST_F(SearchExperimentRepo, ReopensAndStartsANewBranchPerRun) {
  std::string first;
  {
    ExperimentRepo repo(dir.string());
    repo.use_branch("kgate/demo/run1/p");
    write("kernel.cpp", "a\n");
    first = repo.commit("experiment 0\n");
  }
  ExperimentRepo repo(dir.string());
  EXPECT_EQ(repo.head(), first);
  repo.use_branch("kgate/demo/run2/p");
  EXPECT_EQ(repo.head(), "");
  write("kernel.cpp", "b\n");
  std::string second = repo.commit("experiment 0\n");
  EXPECT_TRUE(repo.read(second).parents.empty());
  EXPECT_EQ(repo.resolve("refs/heads/kgate/demo/run1/p"), first);
  // Deleted files leave the next commit.
  fs::remove(dir / "kernel.cpp");
  write("other.cpp", "c\n");
  std::string third = repo.commit("experiment 1\n");
  EXPECT_THROW(repo.file_at(third, "kernel.cpp"), std::exception);
  EXPECT_EQ(repo.file_at(third, "other.cpp"), "c\n");
}

TEST_F(SearchExperimentRepo, GitignoredFilesAreNotCommitted) {
  ExperimentRepo repo(dir.string());
  repo.use_branch("b");
  write(".gitignore", "task.md\n");
  write("task.md", "instructions\n");
  write("kernel.cpp", "x\n");
  std::string c = repo.commit("experiment 0\n");
  EXPECT_THROW(repo.file_at(c, "task.md"), std::exception);
  EXPECT_EQ(repo.file_at(c, "kernel.cpp"), "x\n");
}

// A kill -9 mid-commit leaves git's lock files; with them every later commit fails until
// they are removed, and removing them leaves the repository whole.
TEST_F(SearchExperimentRepo, StaleLockFilesOfAKilledWriterAreRemoved) {
  ExperimentRepo repo(dir.string());
  repo.use_branch("kgate/demo/run1/softmax");
  write("kernel.cpp", "v0\n");
  const std::string c0 = repo.commit("experiment 0\n");
  std::ofstream(dir / ".git" / "index.lock") << "";
  fs::create_directories(dir / ".git" / "refs" / "heads" / "kgate");
  std::ofstream(dir / ".git" / "refs" / "heads" / "kgate" / "x.lock") << "";
  write("kernel.cpp", "v1\n");
  EXPECT_THROW(repo.commit("experiment 1\n"), InfraError);
  std::vector<std::string> removed = repo.remove_stale_locks();
  std::sort(removed.begin(), removed.end());
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(fs::path(removed[0]).filename(), "index.lock");
  EXPECT_EQ(fs::path(removed[1]).filename(), "x.lock");
  const std::string c1 = repo.commit("experiment 1\n");
  EXPECT_EQ(repo.read(c1).parents, std::vector<std::string>{c0});
  EXPECT_TRUE(repo.remove_stale_locks().empty());
}

}  // namespace
}  // namespace kgate::search

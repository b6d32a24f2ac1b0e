#include "search/command_agent.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace kgate::search {
namespace {

namespace fs = std::filesystem;

struct SearchCommandAgent : ::testing::Test {
  fs::path dir;
  AgentContext ctx;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kgate-cmd-agent-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "ws");
    std::ofstream(dir / "ws" / "kernel.cpp") << "int k;\n";
    ctx.problem = "p1";
    ctx.workspace = (dir / "ws").string();
    ctx.candidate = "kernel.cpp";
    ctx.experiment = 4;
    ctx.log_path = (dir / "logs" / "agent.log").string();
    ctx.feedback = nlohmann::json::object();
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(SearchCommandAgent, RunsInTheWorkspaceWithItsVariables) {
  CommandAgent a("echo \"$KGATE_PROBLEM $KGATE_EXPERIMENT $(basename \"$KGATE_CANDIDATE\") $(pwd)\" > seen.txt; "
                 "echo 'kgate-description: tiled the loop'; cat; echo edited >> \"$KGATE_CANDIDATE\"",
                 30);
  Proposal p = a.propose(ctx);
  EXPECT_EQ(p.status, Proposal::Status::kProposed) << p.error;
  EXPECT_EQ(p.description, "tiled the loop");
  std::ifstream in(dir / "ws" / "seen.txt");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "p1 4 kernel.cpp " + fs::canonical(dir / "ws").string());
}

TEST_F(SearchCommandAgent, FailureAndTimeout) {
  CommandAgent fails("exit 5", 30);
  Proposal p = fails.propose(ctx);
  EXPECT_EQ(p.status, Proposal::Status::kFailed);
  EXPECT_EQ(p.error, "agent exited with status 5");
  CommandAgent slow("sleep 30", 0.3);
  p = slow.propose(ctx);
  EXPECT_EQ(p.status, Proposal::Status::kTimeout);
  EXPECT_NE(p.error.find("timeout"), std::string::npos) << p.error;
  ctx.workspace = (dir / "gone").string();
  p = fails.propose(ctx);
  EXPECT_EQ(p.status, Proposal::Status::kFailed);
  EXPECT_NE(p.error.find("gone"), std::string::npos) << p.error;
}

}  // namespace
}  // namespace kgate::search

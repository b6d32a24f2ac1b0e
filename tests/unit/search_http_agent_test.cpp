#include "search/http_agent.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace kgate::search {
namespace {

namespace fs = std::filesystem;

// Was: an unreadable candidate was read as "" (no check) and sent to the model as an
// empty file; now the turn fails before any request, saying why.
TEST(SearchHttpAgent, UnreadableCandidateFailsTheTurnBeforeAnyRequest) {
  if (!http_agent_available()) GTEST_SKIP() << "built without libcurl";
  const fs::path ws = fs::temp_directory_path() / ("kgate-http-agent-" + std::to_string(::getpid()));
  fs::create_directories(ws);
  // Port 9 (discard) on localhost: a request would fail with a connection error instead.
  HttpAgent agent("http://127.0.0.1:9", "model", "", 5);
  AgentContext ctx;
  ctx.problem = "p";
  ctx.workspace = ws.string();
  ctx.candidate = "missing.cpp";
  ctx.feedback = nlohmann::json::object();
  Proposal p = agent.propose(ctx);
  EXPECT_EQ(p.status, Proposal::Status::kFailed);
  EXPECT_NE(p.error.find("cannot read the candidate"), std::string::npos) << p.error;
  EXPECT_NE(p.error.find("missing.cpp"), std::string::npos) << p.error;
  fs::remove_all(ws);
}

}  // namespace
}  // namespace kgate::search

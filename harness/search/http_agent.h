#pragma once
// An OpenAI-compatible chat-completions agent: POST {url}/chat/completions with the model
// and messages (task, current candidate, last verdict, history); the first fenced code
// block of the reply becomes the candidate. The API key comes from the environment
// variable the suite names and is never logged or written anywhere.
#include <string>

#include "search/agent.h"

namespace kgate::search {

class HttpAgent : public Agent {
 public:
  HttpAgent(std::string url, std::string model, std::string api_key_env, double timeout_s);
  std::string name() const override { return "http"; }
  void prepare(const AgentContext& ctx) override;
  Proposal propose(const AgentContext& ctx) override;

 private:
  std::string url_, model_, api_key_env_;
  double timeout_s_;
};

// The first ``` fenced block of `reply` (language tag dropped); nullopt when none.
std::optional<std::string> first_code_block(const std::string& reply);

// True when this build can speak HTTP (libcurl was found at configure time).
bool http_agent_available();

}  // namespace kgate::search

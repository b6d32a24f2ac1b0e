#pragma once
// An external agent (any LLM coding CLI) run as `/bin/sh -c COMMAND` in the workspace,
// in its own process group, killed at its timeout. It finds the candidate through
// KGATE_CANDIDATE, the workspace through KGATE_WORKSPACE, and reads task.md,
// history.tsv and feedback.json there. A stdout line `kgate-description: TEXT` names
// the edit.
#include "search/agent.h"

namespace kgate::search {

class CommandAgent : public Agent {
 public:
  CommandAgent(std::string command, double timeout_s);
  std::string name() const override { return "command"; }
  void prepare(const AgentContext& ctx) override;
  Proposal propose(const AgentContext& ctx) override;

 private:
  std::string command_;
  double timeout_s_;
};

// Writes task.md, history.tsv and feedback.json into the workspace (shared with http).
void write_agent_files(const AgentContext& ctx);

}  // namespace kgate::search

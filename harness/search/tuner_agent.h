#pragma once
// The built-in, offline agent: walks the candidate's declared tunable space with Tuner
// and writes each point into the candidate's default lines.
#include "search/agent.h"
#include "search/tuner.h"

namespace kgate::search {

class TunerAgent : public Agent {
 public:
  TunerAgent(TuneSpace space, uint64_t seed);
  std::string name() const override { return "tuner"; }
  Proposal propose(const AgentContext& ctx) override;
  void observe(const Point& point, bool kept, std::optional<double> cost_us) override;
  void replay(const Point& point, bool kept, std::optional<double> cost_us) override;

 private:
  Tuner tuner_;
  Point best_;
};

}  // namespace kgate::search

#pragma once
// The offline agent of dispatch-aware mode: first kgate's own Triton templates that
// matched the kernel (instantiated by the worker's inventory behind the kernel's call-site
// contract, one whole-file experiment each), then the tuner over the kernel file that
// won: a kept template's declared space, else Inductor's launch config. With no templates
// (another mode, or nothing matched) it is the tuner.
#include <memory>
#include <string>
#include <vector>

#include "search/agent.h"
#include "search/tuner_agent.h"

namespace kgate::search {

// A template instantiated for one kernel: its name, the file (absolute path, in the
// workspace) and why it matched.
struct TemplateOffer {
  std::string name;
  std::string file;
  std::string why;
};

// The Point key of a template experiment: not an identifier, so no default line of a
// kernel file can match it (apply_point leaves the file alone, no -D reaches the worker).
inline constexpr const char* kTemplatePointKey = "@template";

class TemplateAgent : public Agent {
 public:
  TemplateAgent(std::vector<TemplateOffer> offers, std::string starter_source, std::string starter_name,
                uint64_t seed);
  std::string name() const override { return "template"; }
  Proposal propose(const AgentContext& ctx) override;
  void observe(const Point& point, bool kept, std::optional<double> cost_us) override;
  void replay(const Point& point, bool kept, std::optional<double> cost_us) override;

 private:
  // The tuner over the winning file, built when the template phase is over (live and on
  // replay alike, so a resumed run draws the same points); null when it declares no space.
  TunerAgent* tuner();
  void record(const Point& point, bool kept, std::optional<double> cost_us, bool replaying);

  std::vector<TemplateOffer> offers_;
  std::string starter_source_, starter_name_;
  uint64_t seed_;
  size_t tried_ = 0;                  // templates measured so far
  int kept_ = -1;                     // index of the kept template, -1: none
  std::optional<double> start_cost_;  // the kernel's starting latency
  std::optional<double> kept_cost_;   // the kept template's latency
  bool tuner_built_ = false;
  std::unique_ptr<TunerAgent> tuner_;
};

}  // namespace kgate::search

#pragma once
// The offline agent of dispatch-aware mode: first kgate's own Triton templates that
// matched the kernel (instantiated by the worker's inventory behind the kernel's call-site
// contract, one whole-file experiment each), then the tuner over the kernel file that
// won: a kept template's declared space. A template that lost at its first point but came
// close (within kCloseLoser of the kernel's latency) has its own space tuned before it is
// dropped: a template's first point is a guess from the sizes, its tuned best can be well
// ahead of it. Last, or when no template came close, Inductor's launch config. With no
// templates (another mode, or nothing matched) it is the tuner.
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

// A template whose first point measured at most this many times the kernel's latency is
// tuned before it is dropped.
inline constexpr double kCloseLoser = 1.25;
// A tuned point of such a template advances its tuning when it is at least 1 % faster than
// the template's best so far: the tuner's walk moves there. The tuning ends after
// kLoserPatience tuned points in a row that neither advance it nor beat the kernel; the
// kernel's move-on rule does not count tuned template points (the patience bounds them),
// so Inductor's own launch-config tuner still gets its turn (docs/search.md, "template").
inline bool advances_template(double cost_us, double best_us) { return cost_us < best_us * 0.99; }
inline constexpr int kLoserPatience = 3;

// Whether `point` is a tuned point of a template that lost at its first point (the
// template's name under kTemplatePointKey, and its own tunables).
inline bool is_tuned_template_point(const Point& point) {
  return point.size() > 1 && point.count(kTemplatePointKey) > 0;
}

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
  // The tuner over the close loser's own space (null: none came close, or it declares no
  // space); its points are written into the loser's file, whole, every time.
  TunerAgent* loser_tuner();
  // Whether the search is tuning the close loser now (the phase after the templates' own
  // first points, before the winning file's tuner).
  bool tuning_loser();
  void record(const Point& point, bool kept, std::optional<double> cost_us, bool replaying);

  std::vector<TemplateOffer> offers_;
  std::string starter_source_, starter_name_;
  uint64_t seed_;
  size_t tried_ = 0;                  // templates measured so far
  int kept_ = -1;                     // index of the kept template, -1: none
  std::optional<double> start_cost_;  // the kernel's starting latency
  std::optional<double> kept_cost_;   // the kept template's latency
  int close_ = -1;                    // the closest losing template, -1: none came close
  std::optional<double> close_cost_;  // its latency at its first point
  std::optional<double> loser_best_;  // the best latency of its tuned points so far
  bool loser_kept_ = false;           // a tuned point of it beat the kernel
  bool loser_done_ = false;           // its tuner has nothing left, or its patience ran out
  int loser_stale_ = 0;               // tuned points in a row that did not advance it
  bool loser_built_ = false;
  std::unique_ptr<TunerAgent> loser_tuner_;
  bool tuner_built_ = false;
  std::unique_ptr<TunerAgent> tuner_;
};

}  // namespace kgate::search

#include "search/template_agent.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::search {
namespace {

std::string read_file(const std::string& path, const char* what) {
  return core::read_file_or_throw<InfraError>(path, path + ": cannot read " + what);
}

}  // namespace

TemplateAgent::TemplateAgent(std::vector<TemplateOffer> offers, std::string starter_source,
                             std::string starter_name, uint64_t seed)
    : offers_(std::move(offers)),
      starter_source_(std::move(starter_source)),
      starter_name_(std::move(starter_name)),
      seed_(seed) {}

TunerAgent* TemplateAgent::tuner() {
  if (!tuner_built_) {
    tuner_built_ = true;
    const bool from_template = kept_ >= 0;
    const std::string name = from_template ? offers_[kept_].file : starter_name_;
    const std::string text = from_template ? read_file(name, "the kept template") : starter_source_;
    TuneSpace space = parse_tune_space(text, name);
    if (!space.empty()) {
      tuner_ = std::make_unique<TunerAgent>(std::move(space), seed_);
      // The tuner starts where the template phase left the kernel.
      tuner_->replay(Point{}, true, from_template ? kept_cost_ : start_cost_);
    }
  }
  return tuner_.get();
}

Proposal TemplateAgent::propose(const AgentContext& ctx) {
  if (tried_ < offers_.size()) {
    const TemplateOffer& o = offers_[tried_];
    const std::string path = (std::filesystem::path(ctx.workspace) / ctx.candidate).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw InfraError(path + ": cannot write the candidate");
    out << read_file(o.file, "a template instance");
    Proposal p;
    p.defines = {{kTemplatePointKey, o.name}};
    p.description = "template " + o.name + (o.why.empty() ? "" : ": " + o.why);
    return p;
  }
  if (TunerAgent* t = tuner()) {
    Proposal p = t->propose(ctx);
    if (kept_ >= 0 && p.status == Proposal::Status::kProposed)
      p.description = offers_[kept_].name + " " + p.description;
    return p;
  }
  Proposal p;
  p.status = Proposal::Status::kExhausted;
  p.description = kept_ >= 0 ? "template " + offers_[kept_].name + " kept; it declares no tunables"
                             : "no template matched and the kernel declares no tunables";
  return p;
}

void TemplateAgent::record(const Point& point, bool kept, std::optional<double> cost_us, bool replaying) {
  auto it = point.find(kTemplatePointKey);
  if (it != point.end()) {
    if (tried_ < offers_.size()) ++tried_;
    if (kept) {
      for (size_t i = 0; i < offers_.size(); ++i)
        if (offers_[i].name == it->second) kept_ = static_cast<int>(i);
      kept_cost_ = cost_us;
    }
    return;
  }
  if (point.empty() && tried_ == 0 && !tuner_built_) {
    // The kernel's starting point (its file as written), observed before any experiment.
    if (kept) start_cost_ = cost_us;
    return;
  }
  tried_ = offers_.size();  // a tuner point: the template phase is over
  if (TunerAgent* t = tuner()) {
    if (replaying) t->replay(point, kept, cost_us);
    else t->observe(point, kept, cost_us);
  }
}

void TemplateAgent::observe(const Point& point, bool kept, std::optional<double> cost_us) {
  record(point, kept, cost_us, false);
}

void TemplateAgent::replay(const Point& point, bool kept, std::optional<double> cost_us) {
  record(point, kept, cost_us, true);
}

}  // namespace kgate::search

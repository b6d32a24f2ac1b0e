#include "search/template_agent.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::search {
namespace {

std::string read_file(const std::string& path, const char* what) {
  return core::read_file_or_throw<InfraError>(path, path + ": cannot read " + what);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InfraError(path + ": cannot write the candidate");
  out << text;
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
    if (loser_kept_) return nullptr;  // the winning file is the loser's: its space is walked
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

TunerAgent* TemplateAgent::loser_tuner() {
  if (!loser_built_) {
    loser_built_ = true;
    const std::string& name = offers_[close_].file;
    TuneSpace space = parse_tune_space(read_file(name, "a template instance"), name);
    if (!space.empty()) {
      loser_tuner_ = std::make_unique<TunerAgent>(std::move(space), seed_);
      loser_tuner_->replay(Point{}, true, close_cost_);  // its first point, measured
      loser_best_ = close_cost_;
    }
  }
  return loser_tuner_.get();
}

bool TemplateAgent::tuning_loser() {
  if (loser_done_ || kept_ >= 0 || close_ < 0 || tried_ < offers_.size()) return false;
  if (loser_tuner() == nullptr) loser_done_ = true;
  return !loser_done_;
}

Proposal TemplateAgent::propose(const AgentContext& ctx) {
  const std::string path = (std::filesystem::path(ctx.workspace) / ctx.candidate).string();
  if (tried_ < offers_.size()) {
    const TemplateOffer& o = offers_[tried_];
    write_file(path, read_file(o.file, "a template instance"));
    Proposal p;
    p.defines = {{kTemplatePointKey, o.name}};
    p.description = "template " + o.name + (o.why.empty() ? "" : ": " + o.why);
    return p;
  }
  if (tuning_loser()) {
    // The point is written into the loser's file, whole: the candidate file is the
    // kernel's best (Inductor's, or a tuned point of the loser that beat it).
    const TemplateOffer& o = offers_[close_];
    const std::string before = read_file(path, "the candidate");
    write_file(path, read_file(o.file, "a template instance"));
    Proposal p = loser_tuner_->propose(ctx);
    if (p.status == Proposal::Status::kProposed) {
      p.defines[kTemplatePointKey] = o.name;
      p.description = o.name + " (close at its first point) " + p.description;
      return p;
    }
    write_file(path, before);
    loser_done_ = true;
  }
  if (TunerAgent* t = tuner()) {
    Proposal p = t->propose(ctx);
    if (kept_ >= 0 && p.status == Proposal::Status::kProposed)
      p.description = offers_[kept_].name + " " + p.description;
    return p;
  }
  Proposal p;
  p.status = Proposal::Status::kExhausted;
  p.description = loser_kept_ ? "template " + offers_[close_].name + " kept after tuning; its space is walked"
                : kept_ >= 0  ? "template " + offers_[kept_].name + " kept; it declares no tunables"
                              : "no template matched and the kernel declares no tunables";
  return p;
}

void TemplateAgent::record(const Point& point, bool kept, std::optional<double> cost_us, bool replaying) {
  auto it = point.find(kTemplatePointKey);
  if (it != point.end() && is_tuned_template_point(point)) {
    // A tuned point of the close loser: its tuner moves on from the best of them.
    const bool advanced = cost_us && loser_best_ && advances_template(*cost_us, *loser_best_);
    if (cost_us && (advanced || kept)) loser_best_ = std::min(*cost_us, loser_best_.value_or(*cost_us));
    if (kept) loser_kept_ = true;
    loser_stale_ = advanced || kept ? 0 : loser_stale_ + 1;
    if (loser_stale_ >= kLoserPatience) loser_done_ = true;
    if (TunerAgent* t = close_ >= 0 ? loser_tuner() : nullptr) {
      if (replaying) t->replay(point, kept || advanced, cost_us);
      else t->observe(point, kept || advanced, cost_us);
    }
    return;
  }
  if (it != point.end()) {
    if (tried_ < offers_.size()) ++tried_;
    int i = -1;
    for (size_t j = 0; j < offers_.size(); ++j)
      if (offers_[j].name == it->second) i = static_cast<int>(j);
    if (kept) {
      kept_ = i;
      kept_cost_ = cost_us;
    } else if (i >= 0 && cost_us && start_cost_ && *cost_us <= *start_cost_ * kCloseLoser &&
               (!close_cost_ || *cost_us < *close_cost_)) {
      close_ = i;
      close_cost_ = cost_us;
    }
    return;
  }
  if (point.empty() && tried_ == 0 && !tuner_built_) {
    // The kernel's starting point (its file as written), observed before any experiment.
    if (kept) start_cost_ = cost_us;
    return;
  }
  tried_ = offers_.size();  // a point of the winning file's tuner: the template phases are over
  loser_done_ = true;
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

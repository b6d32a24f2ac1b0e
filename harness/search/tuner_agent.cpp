#include "search/tuner_agent.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::search {
namespace {

std::string read_text(const std::string& path) {
  return core::read_file_or_throw<InfraError>(path, path + ": cannot read the candidate");
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InfraError(path + ": cannot write the candidate");
  out << text;
}

}  // namespace

TunerAgent::TunerAgent(TuneSpace space, uint64_t seed)
    : tuner_(std::move(space), seed), best_(tuner_.space().default_point()) {}

Proposal TunerAgent::propose(const AgentContext& ctx) {
  Proposal p;
  auto point = tuner_.propose();
  if (!point) {
    p.status = Proposal::Status::kExhausted;
    p.description = "every point of the tunable space has been measured";
    return p;
  }
  std::string path = (std::filesystem::path(ctx.workspace) / ctx.candidate).string();
  write_text(path, apply_point(read_text(path), *point));
  p.defines = *point;
  std::string changed;
  for (const auto& [k, v] : *point) {
    auto it = best_.find(k);
    if (it != best_.end() && it->second == v) continue;
    if (!changed.empty()) changed += ", ";
    changed += k + " " + (it == best_.end() ? "?" : it->second) + "->" + v;
  }
  p.description = "tune " + (changed.empty() ? format_point(*point) : changed);
  return p;
}

void TunerAgent::observe(const Point& point, bool kept, std::optional<double> cost_us) {
  tuner_.observe(point, kept, cost_us);
  // The baseline (the starter as written) is observed with an empty point: its values are
  // the declared defaults, which experiment descriptions compare against ("BLOCK 64->128").
  if (kept) best_ = point.empty() ? tuner_.space().default_point() : point;
}

void TunerAgent::replay(const Point& point, bool kept, std::optional<double> cost_us) {
  // Draw the proposal the live run drew (keeps the seeded sequence aligned), then
  // record what was actually measured.
  if (tuner_.measured_count() > 0) (void)tuner_.propose();
  observe(point, kept, cost_us);
}

}  // namespace kgate::search

#pragma once
// An agent proposes one edit of the candidate file per experiment. The search loop owns
// everything else: the workspace guard, the gates, keep/revert, the journal.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/types.h"
#include "search/tune_space.h"

namespace kgate::search {

struct AgentContext {
  std::string problem;        // problem id
  std::string problem_title;
  std::string op;
  std::string backend;        // "host" | "cuda"
  std::string workspace;      // absolute path of the workspace repository
  std::string candidate;      // candidate path relative to the workspace
  std::string problem_file;   // read-only problem material, relative to the workspace
  int experiment = 0;         // number of the experiment being proposed
  std::string history_tsv;    // this problem's results so far (header + rows)
  nlohmann::json feedback;    // the last verdict, summarised (see docs/search.md)
  double starter_us = 0;
  double best_us = 0;
  double best_speedup = 1;    // best vs starter
  double keep_threshold = 1.01;
  std::string log_path;       // where an external agent's output goes (outside the workspace)
  // Compiled mode: the Inductor Triton kernel the candidate file holds ("" otherwise); the
  // task then explains the kernel file's contract instead of the kgate_run ABI.
  std::string kernel;
  // Compiled mode: kgate's template instances for that kernel (workspace-relative paths,
  // read-only), listed in the task as starting points.
  std::vector<std::string> templates;
  // Compiled mode: the kernel's pair partners (workspace-relative kernel files whose every
  // write only this kernel reads), which an experiment may change with the candidate.
  std::vector<std::string> partners;
  const std::atomic<bool>* interrupted = nullptr;
};

struct Proposal {
  enum class Status {
    kProposed,   // the candidate file holds the edit
    kExhausted,  // the agent has nothing left to try
    kFailed,     // the agent failed (exit status, bad reply): recorded, reverted
    kTimeout,    // killed at its timeout: recorded, reverted
  };
  Status status = Status::kProposed;
  std::string description;  // one line for the TSV and the commit summary
  Point defines;            // -D values for the gates (tuner); empty for free-form edits
  std::string error;        // why it failed
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string name() const = 0;
  // Writes the files the agent reads (task.md, history.tsv, feedback.json). Runs before
  // the workspace snapshot, so these are the harness's files, not the agent's.
  virtual void prepare(const AgentContext&) {}
  virtual Proposal propose(const AgentContext& ctx) = 0;
  // The outcome of the last proposal: kept (new best), and its latency when it passed.
  virtual void observe(const Point&, bool /*kept*/, std::optional<double> /*cost_us*/) {}
  // Replays a journaled experiment on resume so a deterministic agent reaches the
  // state it had when the run stopped.
  virtual void replay(const Point& point, bool kept, std::optional<double> cost_us) {
    observe(point, kept, cost_us);
  }
};

struct TemplateOffer;

// Builds the configured agent. `starter_source` is the starter's text (the tuner reads
// its tunable space from it), `starter_name` its file name for errors; `templates` the
// template instances the template agent tries first (compiled mode).
std::unique_ptr<Agent> make_agent(const config::AgentConfig& cfg, const std::string& starter_source,
                                  const std::string& starter_name, uint64_t seed,
                                  const std::vector<TemplateOffer>& templates = {});

// Whether the agent kind walks a declared tunable space (tuner, template): a starter
// without one gives it nothing to do.
bool tunes_declared_space(const std::string& kind);

// task.md: the problem, the rules, and the optimisation playbook (command/http agents).
std::string task_markdown(const AgentContext& ctx);

}  // namespace kgate::search

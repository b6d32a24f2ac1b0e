#pragma once
// Catalog: every GPU target, level, suite and native problem of a repository, checked
// across files (duplicate ids, names that point nowhere), and the plan a suite resolves to.
//
// Problem ids are "<level id>/<problem name>": "native/softmax", "level1/19_ReLU".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostics.h"
#include "config/loader.h"
#include "config/types.h"

namespace kgate::config {

struct Catalog {
  std::vector<std::string> files;       // every file read, in load order
  std::vector<GpuTarget> gpus;          // sorted by id
  std::vector<LevelConfig> levels;      // sorted by id
  std::vector<Suite> suites;            // sorted by id
  std::vector<NativeProblem> problems;  // every native problem read, sorted by file

  const GpuTarget* gpu(std::string_view id) const;
  const LevelConfig* level(std::string_view id) const;
  const Suite* suite(std::string_view id) const;
};

// One problem of a level.
struct LevelProblem {
  std::string level;  // level id
  std::string id;     // "<level>/<name>"
  std::string name;   // native: the problem's id; kernelbench: path below root without ".py"
  const NativeProblem* native = nullptr;  // native levels; points into the Catalog
  std::string source;                     // native: the problem YAML; kernelbench: the .py file
};

// Every problem under the level's root, by name.
std::vector<LevelProblem> available_problems(const Catalog& cat, const LevelConfig& level);
// What the level's `select` picks, in order: list order for `list`, by name otherwise.
std::vector<LevelProblem> selected_problems(const Catalog& cat, const LevelConfig& level);

// Loads the given files and directories (directories recursively: *.yaml, *.yml), plus
// what they depend on: for a suite, the configs/ directory beside its suites/ directory;
// for a native level, the problem YAMLs in its root. Reports every error to `diags`
// (sorted by file and position) and returns what could be loaded.
Catalog load_catalog(const std::vector<std::string>& paths, Diagnostics& diags,
                     const OpCatalog& ops = builtin_op_catalog());

// The repository whose configs a command uses: $KGATE_ROOT when set, else kgate's own data
// (an installed kgate's share/kgate, else the source tree it was built from).
std::string default_repo_root();
// The repository a file belongs to: the nearest ancestor directory holding configs/, or
// "" when there is none.
std::string repo_root_of(const std::string& file);
// configs/, suites/ and kernelbench/native/ of a repository (those that exist).
Catalog load_repo_catalog(const std::string& root, Diagnostics& diags);

// A problem by "<level>/<name>", or by bare name when exactly one level holds it.
const NativeProblem* find_problem(const Catalog& cat, std::string_view id);

// The target whose match rules accept a device. `cc` is the CUDA compute capability
// ("9.0"); an empty cc means a host (CPU) device and matches host targets only. Targets
// that pin a cc win over ones that do not; ties go to the first by id.
const GpuTarget* match_gpu(const Catalog& cat, const std::string& device_name,
                           const std::string& cc);
// Every target of `targets` whose match rules accept the device, best first: those that
// pin the cc, then those that match by name only (each group in the given order). The
// rule match_gpu applies, over a suite's own targets.
std::vector<const GpuTarget*> matching_gpus(const std::vector<const GpuTarget*>& targets,
                                            const std::string& device_name, const std::string& cc);

struct PlanItem {
  std::string level;    // level id
  std::string problem;  // "<level>/<name>"
  std::string kind;     // level kind: "native" | "kernelbench"
  std::optional<NativeProblem> native;
  std::string source;  // native: problem YAML; kernelbench: the .py file
  GpuTarget gpu;
  std::string backend;      // "host" | "cuda"
  std::string starter;      // native: the starter for `backend` (absolute), "" if none
  std::string skip_reason;  // "" = runnable; else why the run records it as skipped
};

struct Plan {
  Suite suite;
  std::vector<PlanItem> items;  // per GPU (suite order), the suite's levels then extra problems

  std::vector<const PlanItem*> for_gpu(std::string_view gpu_id) const;
};

// Resolves a suite against the catalog. Throws UsageError if the suite names a level,
// problem or GPU the catalog does not have (load_catalog reports those first).
Plan plan_suite(const Catalog& cat, const Suite& suite);
// The same, its errors added to `diags` instead of thrown (`kgate validate` counts them
// with the files' own); the plan is incomplete when it added errors.
Plan plan_suite(const Catalog& cat, const Suite& suite, Diagnostics& diags);

// Why the suite cannot be planned on this machine ("" = it can): every level it names that
// is unavailable here (LevelConfig::unavailable), "level 'ID' REASON (FILE:LINE)" each,
// joined by "; ".
// plan_suite reports it as an error; `kgate validate --plan` as "not planned here".
std::string unavailable_reason(const Catalog& cat, const Suite& suite);
// Loads the suite file, its repository's configs and problems, and plans it. Throws
// UsageError listing every configuration error.
Plan plan_suite_file(const std::string& suite_path);

}  // namespace kgate::config

#pragma once
// Loading the four config file kinds into the structs of config/types.h.
//
// Which kind a file is follows from where it lives: the nearest enclosing directory named
// `gpus` (GPU targets), `levels` (levels), `suites` (suites) or `native` (native problem
// specs). Files a level's `root` points at are native problems wherever they live.
// Every file carries `version: 1`.
//
// parse_*_file() never throw on bad input: every problem goes to Diagnostics as
// "file:line:col: error: what" and the best-effort struct is still returned (nullopt only
// when the file could not be read or parsed as YAML at all). load_*() are the strict
// variants for callers that need one valid file: they throw UsageError with every
// diagnostic in the message.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostics.h"
#include "config/types.h"

namespace kgate::config {

inline constexpr int kConfigVersion = 1;

enum class FileKind { kGpu, kLevel, kSuite, kProblem };
std::string_view to_string(FileKind k);  // "gpu target", "level", "suite", "native problem"

// The kind implied by the path's directories, nullopt when none of them says.
std::optional<FileKind> file_kind_of(const std::string& path);
// The kind a file outside those directories is, by its top-level keys (a suite's `levels`
// or `budget`, a GPU target's `match`, a level's `root`, a problem's `op`): nullopt when it
// cannot be read as a YAML mapping, has none of them, or has keys of two kinds. A file that
// cannot be read, is empty or is not valid YAML gets that error (file:line:col) in `diags`.
std::optional<FileKind> file_kind_by_keys(const std::string& path, Diagnostics* diags = nullptr);

// How a native problem's `op` is resolved; tests substitute their own ops.
struct OpCatalog {
  std::function<const ops::Op*(std::string_view)> find;
  std::function<std::vector<std::string>()> names;
};
OpCatalog builtin_op_catalog();  // kgate::ops::find_op + op_names

// "" when one shape of problem `p` fits in a host worker here, else "needs X at D (...),
// more than ..." with the bound it passes: the worker's address-space cap or this machine's
// MemAvailable, whichever is less. `timed`: the timed shape (inputs, baseline and candidate
// outputs, the outputs' float64 truth, in bench_dtype); else a checked shape (inputs, one
// output and its truth, in the widest of p.dtypes).
std::string host_memory_problem(const NativeProblem& p, const ops::Op& op, const ops::Dims& d, bool timed);
// "" when the timed shape `d` of `p` (inputs, the baseline's and the candidate's outputs, in
// bench_dtype) fits the GPU target's memory_bytes (or the target declares none), else
// "needs X of GPU memory at D (...), more than the Y of GPU (memory_bytes in FILE)".
std::string device_memory_problem(const NativeProblem& p, const ops::Op& op, const ops::Dims& d,
                                  const GpuTarget& gpu);
// The same bound against `memory_bytes` (0: none) of the GPU `whose` names: the device a
// worker reported at hello, where no target file is at hand (`kgate bench`).
std::string device_memory_problem(const NativeProblem& p, const ops::Op& op, const ops::Dims& d,
                                  int64_t memory_bytes, const std::string& whose);

// Positions of the names a file refers to, so cross-file checks (Catalog) can point at
// the exact list entry that dangles.
struct LevelRefs {
  SourceLoc id, root;
  std::vector<SourceLoc> problems;
};
struct SuiteRefs {
  SourceLoc id, backend;
  std::vector<SourceLoc> levels, problems, gpus;
};

std::optional<GpuTarget> parse_gpu_file(const std::string& path, Diagnostics& diags);
std::optional<LevelConfig> parse_level_file(const std::string& path, Diagnostics& diags,
                                            LevelRefs* refs = nullptr);
std::optional<Suite> parse_suite_file(const std::string& path, Diagnostics& diags,
                                      SuiteRefs* refs = nullptr);
std::optional<NativeProblem> parse_native_problem_file(const std::string& path, Diagnostics& diags);
std::optional<NativeProblem> parse_native_problem_file(const std::string& path, Diagnostics& diags,
                                                       const OpCatalog& ops);

// The same readers on text in memory (what parse_*_file() do once the file is read):
// `path` names the text in diagnostics and is where relative paths in it resolve from; it
// is never read. Never throw on bad input either.
std::optional<GpuTarget> parse_gpu_text(const std::string& path, const std::string& text,
                                        Diagnostics& diags);
std::optional<LevelConfig> parse_level_text(const std::string& path, const std::string& text,
                                            Diagnostics& diags, LevelRefs* refs = nullptr);
std::optional<Suite> parse_suite_text(const std::string& path, const std::string& text,
                                      Diagnostics& diags, SuiteRefs* refs = nullptr);
std::optional<NativeProblem> parse_native_problem_text(const std::string& path,
                                                       const std::string& text, Diagnostics& diags,
                                                       const OpCatalog& ops = builtin_op_catalog());

// Strict single-file loaders: throw UsageError listing every error.
GpuTarget load_gpu_target(const std::string& path);
LevelConfig load_level(const std::string& path);
Suite load_suite(const std::string& path);
NativeProblem load_native_problem(const std::string& path);

}  // namespace kgate::config

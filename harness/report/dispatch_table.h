#pragma once
// The dispatch-aware tables as cells, one source for every report that shows them
// (report.md, report.html): per level, KernelOPT's table (the compiled-mode problems, how
// many improved, the fallbacks by kind, the geomeans against both torch.compile modes and
// eager, what an experiment cost); then one row per problem (Triton share, kernels
// searched and kept, the fallback's reason).
#include <string>
#include <vector>

#include "report/summary.h"

namespace kgate::report {

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;                   // per column: right-aligned figures
  std::vector<std::vector<std::string>> rows;  // plain text; each reporter escapes it
  int total_row = -1;                          // the row over all levels, -1 when none
};

// Whether the run has dispatch-aware (compiled-mode) problems at all.
bool has_dispatch(const Summary& s);
Table dispatch_level_table(const Summary& s);
Table dispatch_problem_table(const Summary& s);

// What a fallback's result is, said under the level table.
inline constexpr const char* kFallbackNote = "A fallback's result is torch.compile's own model (speedup 1 against it).";

}  // namespace kgate::report

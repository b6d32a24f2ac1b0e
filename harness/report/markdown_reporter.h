#pragma once
// Markdown report from a Summary, sized for $GITHUB_STEP_SUMMARY (GitHub caps it at 1 MiB
// per step): when the per-problem table would not fit, rows are cut with a note saying how
// many were left out and where the full list is.
#include <cstddef>
#include <string>

#include "report/summary.h"

namespace kgate::report {

inline constexpr size_t kMarkdownMaxBytes = 1000 * 1000;  // a margin under 1 MiB

std::string markdown_report(const Summary& s, size_t max_bytes = kMarkdownMaxBytes);

// The level table alone (also used by the weekly report).
std::string markdown_level_table(const Summary& s);

// Dispatch-aware (compiled-mode) problems: the per-level table of outcomes, fallbacks by
// kind and geomeans vs torch.compile / max-autotune / eager, then one row per problem
// (Triton share, kernels searched and kept). "" when the run has none.
std::string markdown_dispatch_tables(const Summary& s, size_t max_bytes);

// Every result compared with its accepted result in the history (ProblemResult::vs_accepted):
// the accepted and current time, the speed ratio with its CI and p, and the verdict.
// "" when the run was compared with nothing.
std::string markdown_accepted_table(const Summary& s, size_t max_bytes);

}  // namespace kgate::report

#pragma once
// The statistics draw from kgate's one generator, core::Rng (core/rng.h). This alias
// stays only for bench/stats_bench.cpp, which still names stats::Rng.
#include "core/rng.h"

namespace kgate::stats {
using Rng = core::Rng;
}  // namespace kgate::stats

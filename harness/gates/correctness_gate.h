#pragma once
// Gate 2: one correctness case's numbers (from the worker's `check`) against the rules.
// Plain function of data, so the policy is testable with canned results.
#include "core/number_format.h"
#include <string>

#include "gates/case_plan.h"
#include "verdict/verdict.h"
#include "protocol/messages.h"

namespace kgate::gates {

// A row for the case: pass, or the first broken rule in this order (each one explains
// the ones after it): return code, output shape, unwritten elements, NaN/Inf where the
// truth is finite, elements over tolerance, inputs modified, repeats not bitwise equal.
// `error`/`limit` are the worst |got - want| and atol + rtol*|want| there.
CaseRow judge_correctness_case(const CorrectnessCase& c, const protocol::CaseResult& r);

// "[3,4096]" for flat index 16384 of shape {8, 4096}; "[i]" when the shape is unknown.
std::string format_index(int64_t flat, const std::vector<int64_t>& shape);

using core::fmt_num;  // core/number_format.h

}  // namespace kgate::gates

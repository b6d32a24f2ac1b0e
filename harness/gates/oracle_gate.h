#pragma once
// Gate 3, the float64 oracle: the candidate's error against the float64 truth may be at
// most rho times the baseline's own error on the same case (with a floor, so an exact
// baseline does not make every rounding a failure). This separates real bugs from
// low-precision rounding that the tolerance gate cannot tell apart.
#include "config/types.h"
#include "gates/case_plan.h"
#include "verdict/verdict.h"
#include "protocol/messages.h"

namespace kgate::gates {

// Machine epsilon of a float dtype (2^-10 f16, 2^-7 bf16, 2^-23 f32, 2^-52 f64); 0 else.
double dtype_epsilon(DType d);

// Per output: cand.rel_l2_err <= rho * max(anchor, rho_floor_ulps * eps(dtype)). The anchor:
// the float32 reference's own error where the worker reports it (KernelBench; in dispatch
// mode the larger of it and torch.compile's model's own), else the baseline's.
// The row's error/limit are the worst output's candidate error and bound.
CaseRow judge_oracle_case(const CorrectnessCase& c, const protocol::CaseResult& candidate,
                          const protocol::CaseResult& baseline, const config::GateThresholds& t);

}  // namespace kgate::gates

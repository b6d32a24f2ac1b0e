#include "gates/oracle_gate.h"

#include <cmath>

#include "gates/correctness_gate.h"

namespace kgate::gates {

double dtype_epsilon(DType d) {
  switch (d) {
    case DType::kF16: return 9.765625e-4;            // 2^-10
    case DType::kBF16: return 7.8125e-3;             // 2^-7
    case DType::kF32: return 1.1920928955078125e-7;  // 2^-23
    case DType::kF64: return 2.220446049250313e-16;  // 2^-52
    default: return 0;
  }
}

CaseRow judge_oracle_case(const CorrectnessCase& c, const protocol::CaseResult& candidate,
                          const protocol::CaseResult& baseline, const config::GateThresholds& t) {
  CaseRow row;
  row.case_id = c.check.case_id;
  const DType dtype = parse_dtype(c.check.dtype).value_or(DType::kF32);
  const double floor = t.rho_floor_ulps * dtype_epsilon(dtype);
  double worst_ratio = -1;
  std::string notes;
  for (const auto& o : candidate.outputs) {
    // The anchor: the float32 reference's own error where the worker measured it (a
    // KernelBench problem: fixed per case, so neither a wrong starter nor a chain of kept
    // candidates can loosen the bound), else the baseline's. In dispatch mode the larger of
    // the reference's and torch.compile's model's own (the fallback, none of the search's
    // kernels swapped in: fixed per case too), so a candidate as accurate as either passes.
    double anchor = o.reference_rel_l2_err;
    std::string whose = "the reference's", which = "reference", other;
    if (!(anchor >= 0)) {
      const protocol::OutputError* b = nullptr;
      for (const auto& bo : baseline.outputs)
        if (bo.name == o.name) b = &bo;
      if (!b) {
        row.pass = false;
        row.detail = "the baseline reported no output " + o.name;
        return row;
      }
      anchor = b->rel_l2_err;
      whose = "baseline's";
      which = "baseline";
    } else if (o.compiled_rel_l2_err > anchor) {
      other = "reference " + fmt_num(anchor);
      anchor = o.compiled_rel_l2_err;
      whose = "torch.compile's";
      which = "torch.compile";
    } else if (o.compiled_rel_l2_err >= 0) {
      other = "torch.compile " + fmt_num(o.compiled_rel_l2_err);
    }
    if (!std::isfinite(anchor)) {
      // Without a finite anchor error there is no bound to hold the candidate to; the
      // correctness gate already judged NaN/Inf against the truth.
      notes = whose + " error not finite (" + fmt_num(anchor) + "); no bound";
      continue;
    }
    const double base_err = std::max(anchor, floor);
    const double bound = t.rho * base_err;
    const double ratio = o.rel_l2_err / base_err;
    const std::string who = candidate.outputs.size() > 1 ? "output " + o.name + ": " : "";
    if (!(o.rel_l2_err <= bound)) {  // NaN fails too
      row.pass = false;
      row.error = o.rel_l2_err;
      row.limit = bound;
      row.detail = who + "rel_l2_err " + fmt_num(o.rel_l2_err) + " vs float64 truth > " +
                   fmt_num(t.rho) + " x " + whose + " " + fmt_num(anchor) +
                   (other.empty() ? std::string() : " (" + other + ")") +
                   (anchor < floor ? " (floor " + fmt_num(floor) + " used)" : std::string()) +
                   " = " + fmt_num(bound) + " (ratio " + fmt_num(ratio) + ")";
      return row;
    }
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      row.error = o.rel_l2_err;
      row.limit = bound;
      row.detail = who + "rel_l2_err " + fmt_num(o.rel_l2_err) + " (" + which + " " + fmt_num(anchor) +
                   (other.empty() ? std::string() : ", " + other) + ", bound " + fmt_num(bound) + ", ratio " + fmt_num(ratio) + ")";
    }
  }
  if (worst_ratio < 0) row.detail = notes;
  return row;
}

}  // namespace kgate::gates

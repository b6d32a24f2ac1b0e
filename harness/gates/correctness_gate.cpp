#include "gates/correctness_gate.h"

#include <cmath>

namespace kgate::gates {

std::string format_index(int64_t flat, const std::vector<int64_t>& shape) {
  if (flat < 0) return "[?]";
  if (shape.size() <= 1) return "[" + std::to_string(flat) + "]";
  std::vector<int64_t> idx(shape.size());
  int64_t rest = flat;
  for (std::size_t k = shape.size(); k-- > 0;) {
    int64_t d = std::max<int64_t>(shape[k], 1);
    idx[k] = rest % d;
    rest /= d;
  }
  std::string s = "[";
  for (std::size_t k = 0; k < idx.size(); ++k) s += (k ? "," : "") + std::to_string(idx[k]);
  return s + "]";
}

namespace {
// The first non-finite element's value as the workers name it (worst_kind; worst_got
// carries no NaN or infinity through JSON).
std::string nonfinite_text(const protocol::OutputError& o) {
  if (o.worst_kind == "nan") return "NaN";
  if (o.worst_kind == "inf") return "Inf";
  if (o.worst_kind == "-inf") return "-Inf";
  return fmt_num(o.worst_got);
}
}  // namespace

CaseRow judge_correctness_case(const CorrectnessCase& c, const protocol::CaseResult& r) {
  CaseRow row;
  row.case_id = c.check.case_id;
  row.limit = c.check.atol;
  // The case plan's shape of an output (native problems), else the one the worker
  // reported (KernelBench); empty when neither has one.
  auto shape_of = [&](const protocol::OutputError& o) {
    auto it = c.output_shapes.find(o.name);
    return it == c.output_shapes.end() ? o.shape : it->second;
  };
  auto numel_of = [&](const protocol::OutputError& o) -> int64_t {
    const std::vector<int64_t> shape = shape_of(o);
    if (shape.empty() && c.output_shapes.find(o.name) == c.output_shapes.end()) return -1;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  };
  auto of_total = [&](int64_t k, const protocol::OutputError& o) {
    int64_t n = numel_of(o);
    return std::to_string(k) + (n >= 0 ? " of " + std::to_string(n) : "");
  };
  auto fail = [&](std::string detail) {
    row.pass = false;
    row.detail = std::move(detail);
    return row;
  };
  // Several outputs: name the one that fails (single-output ops read better without).
  const bool multi = r.outputs.size() > 1;
  auto out_name = [&](const protocol::OutputError& o) { return multi ? " of output " + o.name : std::string(); };

  if (r.return_code != 0)
    return fail(r.error.empty() ? "kgate_run returned " + std::to_string(r.return_code) : "raised " + r.error);
  if (!r.cannot_judge.empty()) {
    row.not_judged = true;
    row.detail = "not judged: " + r.cannot_judge;
    return row;
  }
  // A write past a buffer's end explains whatever else went wrong after it.
  if (!r.out_of_bounds.empty()) return fail("out-of-bounds write: " + r.out_of_bounds);
  if (r.outputs.empty()) return fail("the worker reported no outputs for this case");
  for (const auto& o : r.outputs)
    if (!o.shape_ok) return fail("output " + o.name + " has the wrong shape");
  // The reference's output dtype is part of the contract (KernelBench's own comparison
  // refuses two dtypes): a float64 output of a float32 problem is not a match.
  for (const auto& o : r.outputs)
    if (!o.reference_dtype.empty() && !o.dtype.empty() && o.dtype != o.reference_dtype)
      return fail("output " + o.name + " is " + o.dtype + ", the reference's is " + o.reference_dtype);
  for (const auto& o : r.outputs) {
    if (o.unwritten > 0) {
      return fail(of_total(o.unwritten, o) + " elements" + out_name(o) +
                  " never written (still hold the poison value)");
    }
  }
  for (const auto& o : r.outputs) {
    if (o.nan > 0 || o.inf > 0) {
      row.error = std::numeric_limits<double>::infinity();
      std::string what = o.nan > 0 && o.inf > 0 ? std::to_string(o.nan) + " NaN and " + std::to_string(o.inf) + " Inf"
                         : o.nan > 0            ? std::to_string(o.nan) + " NaN"
                                                : std::to_string(o.inf) + " Inf";
      int64_t n = numel_of(o);
      return fail(what + (n >= 0 ? " of " + std::to_string(n) : "") + " elements" + out_name(o) +
                  " where the float64 truth is finite (first at " +
                  format_index(o.worst_index, shape_of(o)) + ": got " + nonfinite_text(o) +
                  ", want " + fmt_num(o.worst_want) + ")");
    }
  }
  // The case's error: the output with the largest max_abs_err.
  const protocol::OutputError* worst = &r.outputs.front();
  for (const auto& o : r.outputs)
    if (o.max_abs_err > worst->max_abs_err) worst = &o;
  row.error = worst->max_abs_err;
  row.limit = c.check.atol + c.check.rtol * std::abs(worst->worst_want);
  for (const auto& o : r.outputs) {
    if (o.over_tol > 0) {
      row.error = o.max_abs_err;
      row.limit = c.check.atol + c.check.rtol * std::abs(o.worst_want);
      // The element named is one over tolerance: its own error against its own limit.
      const double err = o.worst_abs_err > 0 ? o.worst_abs_err : o.max_abs_err;
      const auto [got, want] = core::fmt_num_pair(o.worst_got, o.worst_want);
      return fail(of_total(o.over_tol, o) + " elements" + out_name(o) + " over tolerance (worst at " +
                  format_index(o.worst_index, shape_of(o)) + ": got " + got + ", want " + want + ", |err| " + fmt_num(err) + " > atol " + fmt_num(c.check.atol) +
                  " + rtol " + fmt_num(c.check.rtol) + "·|want|; max_abs_err " + fmt_num(o.max_abs_err) + ")");
    }
  }
  if (r.inputs_modified) return fail("the candidate modified its inputs (inputs are read-only)");
  if (!r.deterministic) {
    return fail(std::to_string(c.check.repeats) +
                " runs on identical inputs were not bitwise identical (nondeterministic)");
  }
  row.detail = "max_abs_err " + fmt_num(row.error) + " <= " + fmt_num(row.limit);
  for (const auto& n : r.notes) row.detail += "; " + n;
  return row;
}

}  // namespace kgate::gates

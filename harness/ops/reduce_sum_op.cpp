// reduce_sum: y[r] = sum_c x[r,c].
#include <algorithm>

#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

class ReduceSumOp final : public Op {
 public:
  std::string_view name() const override { return "reduce_sum"; }
  std::string_view summary() const override { return "sum of each row of x[R,C] into y[R]"; }
  std::string independent_dim() const override { return "R"; }
  std::vector<std::string> dims() const override { return {"R", "C"}; }
  std::vector<TensorDecl> inputs() const override { return {{"x", {"R", "C"}, {}}}; }
  std::vector<TensorDecl> outputs() const override { return {{"y", {"R"}, {}}}; }
  std::string torch_form() const override { return R"(x.sum(dim=-1))"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t rows = dims.at("R"), cols = dims.at("C");
    const std::vector<double> x = in[0].to_doubles();
    std::vector<double> y(static_cast<std::size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      // Neumaier-compensated: the truth must not carry the error it is meant to judge.
      double sum = 0, comp = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double v = x[r * cols + c];
        const double t = sum + v;
        comp += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
        sum = t;
      }
      y[r] = sum + comp;
    }
    return {f64_output(*this, 0, dims, y)};
  }
  double flops(const Dims& d) const override { return 1.0 * d.at("R") * d.at("C"); }

  // f16: a row sum of N(0, S^2) values has sigma S sqrt(C); keep 8 sigma below 65504.
  double large_scale(const Dims& d, DType dt) const override {
    if (dt == DType::kF16) return 65504.0 / (8.0 * std::sqrt(static_cast<double>(d.at("C"))));
    return 1e30;
  }
  // A float32 running sum over C terms errs by about eps * C * rms(x); the tolerances
  // allow sequential float accumulation for C up to ~10^4.
  Tolerance default_tolerance(DType dt) const override {
    switch (dt) {
      case DType::kF16: return {1e-2, 4e-3};
      case DType::kBF16: return {1e-1, 2e-2};
      case DType::kF32: return {1e-3, 1e-5};
      case DType::kF64: return {1e-10, 1e-10};
      default: return {0, 0};
    }
  }
};

}  // namespace

const Op& reduce_sum_op() {
  static const ReduceSumOp op;
  return op;
}

}  // namespace kgate::ops

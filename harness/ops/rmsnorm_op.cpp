// rmsnorm: y[r,c] = x[r,c] / sqrt(mean_c(x[r,c]^2) + 1e-6) * w[c].
#include <algorithm>

#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

constexpr double kEps = 1e-6;

class RmsnormOp final : public RowNormOp {
 public:
  std::string_view name() const override { return "rmsnorm"; }
  std::string_view summary() const override { return "RMS normalisation of x[R,C] rows, scaled by w[C] (eps 1e-6)"; }
  std::string independent_dim() const override { return "R"; }
  std::vector<std::string> dims() const override { return {"R", "C"}; }
  std::vector<TensorDecl> inputs() const override { return {{"x", {"R", "C"}, {}}, {"w", {"C"}, {}}}; }
  std::vector<TensorDecl> outputs() const override { return {{"y", {"R", "C"}, {}}}; }
  std::string torch_form() const override { return R"(F.rms_norm(x, (x.shape[-1],), w, eps=1e-6))"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t rows = dims.at("R"), cols = dims.at("C");
    std::vector<double> x = in[0].to_doubles();
    const std::vector<double> w = in[1].to_doubles();
    for (int64_t r = 0; r < rows; ++r) {
      double* row = x.data() + r * cols;
      double ss = 0;
      for (int64_t c = 0; c < cols; ++c) ss += row[c] * row[c];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + kEps);
      for (int64_t c = 0; c < cols; ++c) row[c] = row[c] * inv * w[c];
    }
    return {f64_output(*this, 0, dims, x)};
  }
  // square+add per element, then scale and weight: 4 per element.
  double flops(const Dims& d) const override { return 4.0 * d.at("R") * d.at("C"); }
};

}  // namespace

const Op& rmsnorm_op() {
  static const RmsnormOp op;
  return op;
}

}  // namespace kgate::ops

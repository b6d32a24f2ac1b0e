// layernorm: y = (x - mean) / sqrt(var + 1e-5) * w + b per row, biased variance.
#include <algorithm>

#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

constexpr double kEps = 1e-5;

class LayernormOp final : public RowNormOp {
 public:
  std::string_view name() const override { return "layernorm"; }
  std::string_view summary() const override {
    return "layer normalisation of x[R,C] rows with w[C], b[C] (eps 1e-5, biased variance)";
  }
  std::string independent_dim() const override { return "R"; }
  std::vector<std::string> dims() const override { return {"R", "C"}; }
  std::vector<TensorDecl> inputs() const override {
    return {{"x", {"R", "C"}, {}}, {"w", {"C"}, {}}, {"b", {"C"}, {}}};
  }
  std::vector<TensorDecl> outputs() const override { return {{"y", {"R", "C"}, {}}}; }
  std::string torch_form() const override { return R"(F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5))"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t rows = dims.at("R"), cols = dims.at("C");
    std::vector<double> x = in[0].to_doubles();
    const std::vector<double> w = in[1].to_doubles();
    const std::vector<double> b = in[2].to_doubles();
    const double n = static_cast<double>(cols);
    for (int64_t r = 0; r < rows; ++r) {
      double* row = x.data() + r * cols;
      double mean = 0;
      for (int64_t c = 0; c < cols; ++c) mean += row[c];
      mean /= n;
      double var = 0;  // two-pass: exact enough in double even for huge means
      for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
      var /= n;
      const double inv = 1.0 / std::sqrt(var + kEps);
      for (int64_t c = 0; c < cols; ++c) row[c] = (row[c] - mean) * inv * w[c] + b[c];
    }
    return {f64_output(*this, 0, dims, x)};
  }
  // mean 1, variance 3, normalise+affine 4: 8 per element.
  double flops(const Dims& d) const override { return 8.0 * d.at("R") * d.at("C"); }
};

}  // namespace

const Op& layernorm_op() {
  static const LayernormOp op;
  return op;
}

}  // namespace kgate::ops

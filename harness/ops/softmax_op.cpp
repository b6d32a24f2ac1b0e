// softmax: y[r,c] = exp(x[r,c] - max_r) / sum_c exp(x[r,c] - max_r), row by row.
#include <algorithm>

#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

class SoftmaxOp final : public Op {
 public:
  std::string_view name() const override { return "softmax"; }
  std::string_view summary() const override { return "row-wise softmax of x[R,C]"; }
  std::string independent_dim() const override { return "R"; }
  std::vector<std::string> dims() const override { return {"R", "C"}; }
  std::vector<TensorDecl> inputs() const override { return {{"x", {"R", "C"}, {}}}; }
  std::vector<TensorDecl> outputs() const override { return {{"y", {"R", "C"}, {}}}; }
  std::string torch_form() const override { return R"(torch.softmax(x, dim=-1))"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t rows = dims.at("R"), cols = dims.at("C");
    std::vector<double> x = in[0].to_doubles();
    for (int64_t r = 0; r < rows; ++r) {
      double* row = x.data() + r * cols;
      const double m = *std::max_element(row, row + cols);
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        row[c] = std::exp(row[c] - m);
        sum += row[c];
      }
      for (int64_t c = 0; c < cols; ++c) row[c] /= sum;
    }
    return {f64_output(*this, 0, dims, x)};
  }
  // max, subtract, exp, add, divide: 5 per element.
  double flops(const Dims& d) const override { return 5.0 * d.at("R") * d.at("C"); }
};

}  // namespace

const Op& softmax_op() {
  static const SoftmaxOp op;
  return op;
}

}  // namespace kgate::ops

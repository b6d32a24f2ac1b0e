// bias_gelu: z = x + b (b broadcast over rows), y = 0.5 z (1 + tanh(0.7978845608 (z + 0.044715 z^3))).
#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

class BiasGeluOp final : public Op {
 public:
  std::string_view name() const override { return "bias_gelu"; }
  std::string_view summary() const override { return "bias add then tanh-approximated GELU over x[R,C], b[C]"; }
  std::string independent_dim() const override { return "R"; }
  std::vector<std::string> dims() const override { return {"R", "C"}; }
  std::vector<TensorDecl> inputs() const override { return {{"x", {"R", "C"}, {}}, {"b", {"C"}, {}}}; }
  std::vector<TensorDecl> outputs() const override { return {{"y", {"R", "C"}, {}}}; }
  std::string torch_form() const override { return R"(F.gelu(x + b, approximate="tanh"))"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t rows = dims.at("R"), cols = dims.at("C");
    std::vector<double> x = in[0].to_doubles();
    const std::vector<double> b = in[1].to_doubles();
    for (int64_t r = 0; r < rows; ++r) {
      double* row = x.data() + r * cols;
      for (int64_t c = 0; c < cols; ++c) {
        const double z = row[c] + b[c];
        row[c] = 0.5 * z * (1.0 + std::tanh(0.7978845608 * (z + 0.044715 * z * z * z)));
      }
    }
    return {f64_output(*this, 0, dims, x)};
  }
  // add 1, cube 2, fma-style polynomial 3, tanh 1, final 3: 10 per element.
  double flops(const Dims& d) const override { return 10.0 * d.at("R") * d.at("C"); }

  // f16: x + b must stay below 65504 (2 * 4S); wider: z^3 must stay finite in float32.
  double large_scale(const Dims&, DType dt) const override { return dt == DType::kF16 ? 8000.0 : 1e11; }
};

}  // namespace

const Op& bias_gelu_op() {
  static const BiasGeluOp op;
  return op;
}

}  // namespace kgate::ops

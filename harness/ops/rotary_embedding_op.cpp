// rotary_embedding (rotate-half): for i < D/2,
//   y[i] = x[i] cos[s,i] - x[i+D/2] sin[s,i];  y[i+D/2] = x[i+D/2] cos[s,i] + x[i] sin[s,i].
#include <cmath>

#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

class RotaryEmbeddingOp final : public Op {
 public:
  std::string_view name() const override { return "rotary_embedding"; }
  std::string_view summary() const override {
    return "rotate-half rotary position embedding of x[B,H,S,D] with cos/sin[S,D/2]";
  }
  std::string independent_dim() const override { return "B"; }
  std::vector<std::string> dims() const override { return {"B", "H", "S", "D"}; }
  std::vector<TensorDecl> inputs() const override {
    return {{"x", {"B", "H", "S", "D"}, {}}, {"cos", {"S", "D/2"}, {}}, {"sin", {"S", "D/2"}, {}}};
  }
  std::vector<TensorDecl> outputs() const override { return {{"y", {"B", "H", "S", "D"}, {}}}; }
  std::string torch_form() const override {
    return "torch.cat((x[..., : x.shape[-1] // 2] * cos - x[..., x.shape[-1] // 2 :] * sin,\n"
           "                   x[..., x.shape[-1] // 2 :] * cos + x[..., : x.shape[-1] // 2] * sin), dim=-1)";
  }

  std::string check_dims(const Dims& dims) const override {
    std::string why = Op::check_dims(dims);
    if (!why.empty()) return why;
    if (dims.at("D") % 2 != 0) return "D must be even (got " + std::to_string(dims.at("D")) + ")";
    return "";
  }

  // cos/sin are real rotation tables (theta = s * 10000^(-2i/D), rounded to the dtype) in
  // every distribution, so each (i, i+D/2) pair is rotated; only x follows `dist`.
  std::vector<HostTensor> make_inputs(const Dims& dims, DType dtype, uint64_t seed,
                                      Distribution dist) const override {
    std::vector<HostTensor> in = Op::make_inputs(dims, dtype, seed, dist);
    const int64_t seq = dims.at("S"), half = dims.at("D") / 2;
    for (int64_t s = 0; s < seq; ++s) {
      for (int64_t i = 0; i < half; ++i) {
        const double theta = static_cast<double>(s) *
                             std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
        in[1].set(s * half + i, std::cos(theta));
        in[2].set(s * half + i, std::sin(theta));
      }
    }
    return in;
  }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t bh = dims.at("B") * dims.at("H"), seq = dims.at("S"), d = dims.at("D"), half = d / 2;
    const std::vector<double> x = in[0].to_doubles();
    const std::vector<double> cs = in[1].to_doubles();
    const std::vector<double> sn = in[2].to_doubles();
    std::vector<double> y(x.size());
    for (int64_t p = 0; p < bh; ++p) {
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t base = (p * seq + s) * d;
        for (int64_t i = 0; i < half; ++i) {
          const double a = x[base + i], b = x[base + i + half];
          const double c = cs[s * half + i], sv = sn[s * half + i];
          y[base + i] = a * c - b * sv;
          y[base + i + half] = b * c + a * sv;
        }
      }
    }
    return {f64_output(*this, 0, dims, y)};
  }
  // Two multiplies and one add per output element.
  double flops(const Dims& d) const override {
    return 3.0 * d.at("B") * d.at("H") * d.at("S") * d.at("D");
  }
  // f16: |y| <= |x_i| + |x_{i+D/2}| <= 8S must fit 65504.
  double large_scale(const Dims&, DType dt) const override { return dt == DType::kF16 ? 8000.0 : 1e30; }
};

}  // namespace

const Op& rotary_embedding_op() {
  static const RotaryEmbeddingOp op;
  return op;
}

}  // namespace kgate::ops

// cross_entropy: loss = mean_r (logsumexp(logits[r,:]) - logits[r, targets[r]]).
#include <algorithm>

#include "core/error.h"
#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

class CrossEntropyOp final : public Op {
 public:
  std::string_view name() const override { return "cross_entropy"; }
  std::string_view summary() const override {
    return "mean cross-entropy of logits[R,V] against i64 targets[R] (scalar loss)";
  }
  std::vector<std::string> dims() const override { return {"R", "V"}; }
  std::vector<TensorDecl> inputs() const override {
    return {{"logits", {"R", "V"}, {}}, {"targets", {"R"}, DType::kI64}};
  }
  std::vector<TensorDecl> outputs() const override { return {{"loss", {}, {}}}; }
  std::string torch_form() const override { return R"(F.cross_entropy(logits, targets))"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t rows = dims.at("R"), vocab = dims.at("V");
    const std::vector<double> x = in[0].to_doubles();
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * vocab;
      const double t = in[1].get(r);
      if (!(t >= 0 && t < static_cast<double>(vocab))) {
        throw UsageError("cross_entropy: target " + std::to_string(t) + " of row " + std::to_string(r) +
                         " is outside [0, " + std::to_string(vocab) + ")");
      }
      const double m = *std::max_element(row, row + vocab);
      double sum = 0;
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - m);
      total += m + std::log(sum) - row[static_cast<int64_t>(t)];
    }
    return {f64_output(*this, 0, dims, {total / static_cast<double>(rows)})};
  }
  // logsumexp: max, subtract, exp, add per logit.
  double flops(const Dims& d) const override { return 4.0 * d.at("R") * d.at("V"); }

  // f16: the loss is at most max - min + log V <= 8S + log V; keep it below 65504.
  double large_scale(const Dims&, DType dt) const override { return dt == DType::kF16 ? 7000.0 : 1e30; }
  int64_t integer_bound(const TensorDecl&, const Dims& d) const override { return d.at("V"); }
};

}  // namespace

const Op& cross_entropy_op() {
  static const CrossEntropyOp op;
  return op;
}

}  // namespace kgate::ops

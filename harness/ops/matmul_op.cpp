// matmul: C[M,N] = A[M,K] B[K,N].
#include <algorithm>

#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

class MatmulOp final : public Op {
 public:
  std::string_view name() const override { return "matmul"; }
  std::string_view summary() const override { return "dense matrix product A[M,K] x B[K,N] -> C[M,N]"; }
  std::string independent_dim() const override { return "M"; }
  std::vector<std::string> dims() const override { return {"M", "N", "K"}; }
  std::vector<TensorDecl> inputs() const override { return {{"A", {"M", "K"}, {}}, {"B", {"K", "N"}, {}}}; }
  std::vector<TensorDecl> outputs() const override { return {{"C", {"M", "N"}, {}}}; }
  std::string torch_form() const override { return R"(A @ B)"; }

  std::vector<HostTensor> reference_f64(const Dims& dims, const std::vector<HostTensor>& in) const override {
    check_reference_inputs(*this, dims, in);
    const int64_t m = dims.at("M"), n = dims.at("N"), k = dims.at("K");
    const std::vector<double> a = in[0].to_doubles();
    const std::vector<double> b = in[1].to_doubles();
    std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
    // i-k-j order over K and N blocks: the inner loop streams rows of B and C.
    constexpr int64_t kBlockK = 128, kBlockN = 512;
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      const int64_t k1 = std::min(k, k0 + kBlockK);
      for (int64_t n0 = 0; n0 < n; n0 += kBlockN) {
        const int64_t n1 = std::min(n, n0 + kBlockN);
        for (int64_t i = 0; i < m; ++i) {
          double* crow = c.data() + i * n;
          for (int64_t kk = k0; kk < k1; ++kk) {
            const double av = a[i * k + kk];
            const double* brow = b.data() + kk * n;
            for (int64_t j = n0; j < n1; ++j) crow[j] += av * brow[j];
          }
        }
      }
    }
    return {f64_output(*this, 0, dims, c)};
  }
  double flops(const Dims& d) const override { return 2.0 * d.at("M") * d.at("N") * d.at("K"); }

  // C has sigma S^2 sqrt(K); keep 8 sigma below the output's range (float32's for the
  // wider types, so a float32 accumulator stays finite).
  double large_scale(const Dims& d, DType dt) const override {
    const double range = dt == DType::kF16 ? 65504.0 : kF32Max;
    return std::min(dt == DType::kF16 ? 60000.0 : 1e30,
                    std::sqrt(range / (8.0 * std::sqrt(static_cast<double>(d.at("K"))))));
  }
  // A K-long dot product accumulates K roundings on partial sums of size ~sqrt(k): the
  // error of an output element grows about linearly in K relative to the float32 unit
  // roundoff, while |C| itself grows like sqrt(K). The defaults hold up to K = 256; beyond,
  // atol grows with K (float32/float64) or sqrt(K) (half types, where the output's own
  // rounding, covered by rtol, dominates). The float64 oracle still bounds the candidate
  // against the baseline's error at every K.
  Tolerance tolerance_at(DType dt, const Dims& d) const override {
    Tolerance t = default_tolerance(dt);
    auto it = d.find("K");
    const double k = it == d.end() ? 0 : static_cast<double>(it->second);
    const double growth = std::max(1.0, k / 256.0);
    t.atol *= (dt == DType::kF16 || dt == DType::kBF16) ? std::sqrt(growth) : growth;
    return t;
  }
  Tolerance default_tolerance(DType dt) const override {
    switch (dt) {
      case DType::kF16: return {1e-2, 1e-2};
      case DType::kBF16: return {2e-2, 2e-2};
      case DType::kF32: return {1e-4, 1e-4};
      case DType::kF64: return {1e-10, 1e-10};
      default: return {0, 0};
    }
  }
};

}  // namespace

const Op& matmul_op() {
  static const MatmulOp op;
  return op;
}

}  // namespace kgate::ops

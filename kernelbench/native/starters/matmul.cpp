// Host starter: matmul C[M,N] = A[M,K] B[K,N] (i-k-j loop order, one row of C at a time).
// Simple and correct: every element read through load(), math in double, dtypes f16,
// bf16, f32, f64. Assumes contiguous row-major tensors (the harness passes dense ones).
#include <cmath>
#include <vector>

#include "kgate/starter_host.h"

using namespace kgate::starter;

namespace {

bool supported(kgate_dtype d) { return d == KGATE_F16 || d == KGATE_BF16 || d == KGATE_F32 || d == KGATE_F64; }

}  // namespace

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* /*stream*/) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor &a = inputs[0], &b = inputs[1];
  kgate_tensor& c = outputs[0];
  if (a.ndim != 2 || b.ndim != 2 || c.ndim != 2) return 2;
  if (!supported(a.dtype) || b.dtype != a.dtype || c.dtype != a.dtype) return 2;
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (b.shape[0] != k || c.shape[0] != m || c.shape[1] != n) return 2;
  std::vector<double> bd(static_cast<size_t>(k * n)), row(static_cast<size_t>(n));
  for (int64_t i = 0; i < k * n; ++i) bd[i] = load(b, i);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const double av = load(a, i * k + kk);
      const double* brow = bd.data() + kk * n;
      for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
    }
    for (int64_t j = 0; j < n; ++j) store(c, i * n + j, row[j]);
  }
  return 0;
}

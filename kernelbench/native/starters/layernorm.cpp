// Host starter: layernorm y = (x - mean) / sqrt(var + 1e-5) * w + b per row of x[R,C]
// (biased variance). Inputs: x[R,C], w[C], b[C]; outputs: y[R,C].
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
  if (n_inputs != 3 || n_outputs != 1) return 1;
  const kgate_tensor &x = inputs[0], &w = inputs[1], &b = inputs[2];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || w.ndim != 1 || b.ndim != 1 || y.ndim != 2) return 2;
  if (!supported(x.dtype) || w.dtype != x.dtype || b.dtype != x.dtype || y.dtype != x.dtype) return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<double> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (int64_t c = 0; c < cols; ++c) mean += row[c] = load(x, r * cols + c);
    mean /= static_cast<double>(cols);
    double var = 0;
    for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(cols) + 1e-5);
    for (int64_t c = 0; c < cols; ++c) store(y, r * cols + c, (row[c] - mean) * inv * load(w, c) + load(b, c));
  }
  return 0;
}

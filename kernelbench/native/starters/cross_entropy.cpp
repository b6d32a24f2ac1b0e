// Host starter: cross_entropy loss = mean_r(logsumexp(logits[r,:]) - logits[r, targets[r]]).
// Inputs: logits[R,V] (float), targets[R] (i64); outputs: loss (scalar, ndim 0, logits dtype).
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
  const kgate_tensor &x = inputs[0], &t = inputs[1];
  kgate_tensor& loss = outputs[0];
  if (x.ndim != 2 || t.ndim != 1 || loss.ndim != 0) return 2;
  if (!supported(x.dtype) || t.dtype != KGATE_I64 || loss.dtype != x.dtype) return 2;
  const int64_t rows = x.shape[0], vocab = x.shape[1];
  const int64_t* targets = static_cast<const int64_t*>(t.data);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] < 0 || targets[r] >= vocab) return 3;
    double m = -INFINITY;
    for (int64_t v = 0; v < vocab; ++v) m = std::fmax(m, load(x, r * vocab + v));
    double s = 0;
    for (int64_t v = 0; v < vocab; ++v) s += std::exp(load(x, r * vocab + v) - m);
    total += m + std::log(s) - load(x, r * vocab + targets[r]);
  }
  store(loss, 0, total / static_cast<double>(rows));
  return 0;
}

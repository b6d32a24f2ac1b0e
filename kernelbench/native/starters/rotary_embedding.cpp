// Host starter: rotary_embedding (rotate-half) over x[B,H,S,D] with cos[S,D/2], sin[S,D/2]:
// for i < D/2, y[i] = x[i] cos - x[i+D/2] sin, y[i+D/2] = x[i+D/2] cos + x[i] sin.
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
  const kgate_tensor &x = inputs[0], &cs = inputs[1], &sn = inputs[2];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 4 || cs.ndim != 2 || sn.ndim != 2 || y.ndim != 4) return 2;
  if (!supported(x.dtype) || cs.dtype != x.dtype || sn.dtype != x.dtype || y.dtype != x.dtype) return 2;
  const int64_t bh = x.shape[0] * x.shape[1], seq = x.shape[2], d = x.shape[3], half = d / 2;
  if (d % 2 != 0 || cs.shape[0] != seq || cs.shape[1] != half) return 2;
  for (int64_t p = 0; p < bh; ++p) {
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t base = (p * seq + s) * d;
      for (int64_t i = 0; i < half; ++i) {
        const double a = load(x, base + i), b = load(x, base + i + half);
        const double c = load(cs, s * half + i), sv = load(sn, s * half + i);
        store(y, base + i, a * c - b * sv);
        store(y, base + i + half, b * c + a * sv);
      }
    }
  }
  return 0;
}

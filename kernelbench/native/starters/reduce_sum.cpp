// Host starter: reduce_sum y[r] = sum_c x[r,c]. Inputs: x[R,C]; outputs: y[R].
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
  if (n_inputs != 1 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || y.ndim != 1 || !supported(x.dtype) || y.dtype != x.dtype) return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += load(x, r * cols + c);
    store(y, r, s);
  }
  return 0;
}

// Host starter: rmsnorm y[r,c] = x[r,c] / sqrt(mean_c(x[r,c]^2) + 1e-6) * w[c].
// Inputs: x[R,C], w[C]; outputs: y[R,C]; dtypes f16, bf16, f32 (math in float).
// Assumes contiguous row-major tensors (the harness passes dense ones).
//
// The defaults below are deliberately slow so a tuner has something real to find.
// kgate:tune ACC=[1,2,4,8,16]
// kgate:tune RECIP=[0,1]
// kgate:tune VEC_CVT=[0,1]
#include <cmath>
#include <vector>

#include "kgate/starter_host.h"

#ifndef ACC  // independent partial sums of squares (1 = one serial dependency chain)
#define ACC 1
#endif
#ifndef RECIP  // 1: multiply by 1/rms once per row instead of dividing every element
#define RECIP 0
#endif
#ifndef VEC_CVT  // 1: convert f16 rows with F16C instructions when the target has them
#define VEC_CVT 0
#endif

using namespace kgate::starter;

namespace {

bool supported(kgate_dtype d) { return d == KGATE_F32 || d == KGATE_F16 || d == KGATE_BF16; }

}  // namespace

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* /*stream*/) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  const kgate_tensor& w = inputs[1];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || w.ndim != 1 || y.ndim != 2 || !supported(x.dtype) || w.dtype != x.dtype ||
      y.dtype != x.dtype)
    return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<float> row(static_cast<size_t>(cols)), wf(static_cast<size_t>(cols));
  load_row<VEC_CVT != 0>(w, 0, cols, wf.data());
  for (int64_t r = 0; r < rows; ++r) {
    load_row<VEC_CVT != 0>(x, r * cols, cols, row.data());
    float s[ACC];
    for (int a = 0; a < ACC; ++a) s[a] = 0.0f;
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC)
      for (int a = 0; a < ACC; ++a) s[a] += row[c + a] * row[c + a];
    for (; c < cols; ++c) s[0] += row[c] * row[c];
    float ss = 0.0f;
    for (int a = 0; a < ACC; ++a) ss += s[a];
    const float rms = std::sqrt(ss / static_cast<float>(cols) + 1e-6f);
#if RECIP
    const float inv = 1.0f / rms;
    for (c = 0; c < cols; ++c) row[c] = row[c] * inv * wf[c];
#else
    for (c = 0; c < cols; ++c) row[c] = row[c] / rms * wf[c];
#endif
    store_row<VEC_CVT != 0>(y, r * cols, cols, row.data());
  }
  return 0;
}

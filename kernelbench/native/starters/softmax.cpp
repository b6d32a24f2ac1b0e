// Host starter: row-wise softmax y[R,C] = exp(x - max) / sum(exp(x - max)).
// Inputs: x[R,C]; outputs: y[R,C]; dtypes f16, bf16, f32 (math in float).
// Assumes contiguous row-major tensors (the harness passes dense ones).
//
// The defaults below are deliberately slow so a tuner has something real to find.
// kgate:tune STORE_EXP=[0,1]
// kgate:tune ACC=[1,4,8,16]
// kgate:tune FAST_EXP=[0,1]
// kgate:tune VEC_CVT=[0,1]
#include <cmath>
#include <vector>

#include "kgate/starter_host.h"

#ifndef STORE_EXP  // 1: keep exp(x - max) in a scratch row (one exp per element, not two)
#define STORE_EXP 0
#endif
#ifndef ACC  // independent partial accumulators for the max and the sum (lets them vectorize)
#define ACC 1
#endif
#ifndef FAST_EXP  // 1: branch-free polynomial exp that the compiler can vectorize
#define FAST_EXP 0
#endif
#ifndef VEC_CVT  // 1: convert f16 rows with F16C instructions when the target has them
#define VEC_CVT 0
#endif

using namespace kgate::starter;

namespace {

inline float expf_(float x) {
#if FAST_EXP
  return poly_exp(x);
#else
  return std::exp(x);
#endif
}

bool supported(kgate_dtype d) { return d == KGATE_F32 || d == KGATE_F16 || d == KGATE_BF16; }

}  // namespace

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* /*stream*/) {
  if (n_inputs != 1 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || y.ndim != 2 || !supported(x.dtype) || y.dtype != x.dtype) return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<float> row(static_cast<size_t>(cols)), e(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    load_row<VEC_CVT != 0>(x, r * cols, cols, row.data());
    float m[ACC], s[ACC];
    for (int a = 0; a < ACC; ++a) m[a] = -INFINITY, s[a] = 0.0f;
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC)
      for (int a = 0; a < ACC; ++a) m[a] = row[c + a] > m[a] ? row[c + a] : m[a];
    for (; c < cols; ++c) m[0] = row[c] > m[0] ? row[c] : m[0];
    float mx = m[0];
    for (int a = 1; a < ACC; ++a) mx = m[a] > mx ? m[a] : mx;
#if STORE_EXP
    for (c = 0; c < cols; ++c) e[c] = expf_(row[c] - mx);
    const float* src = e.data();
#else
    const float* src = row.data();
#endif
    c = 0;
    for (; c + ACC <= cols; c += ACC)
      for (int a = 0; a < ACC; ++a) s[a] += STORE_EXP ? src[c + a] : expf_(src[c + a] - mx);
    for (; c < cols; ++c) s[0] += STORE_EXP ? src[c] : expf_(src[c] - mx);
    float sum = 0.0f;
    for (int a = 0; a < ACC; ++a) sum += s[a];
    const float inv = 1.0f / sum;
    for (c = 0; c < cols; ++c) e[c] = (STORE_EXP ? src[c] : expf_(src[c] - mx)) * inv;
    store_row<VEC_CVT != 0>(y, r * cols, cols, e.data());
  }
  return 0;
}

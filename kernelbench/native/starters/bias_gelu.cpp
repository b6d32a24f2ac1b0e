// Host starter: bias_gelu z = x + b[c], y = 0.5 z (1 + tanh(0.7978845608 (z + 0.044715 z^3))).
// Inputs: x[R,C], b[C]; outputs: y[R,C]; dtypes f16, bf16, f32.
// Assumes contiguous row-major tensors (the harness passes dense ones).
//
// The defaults below are deliberately slow so a tuner has something real to find.
// kgate:tune MATH=[0,1,2]
// kgate:tune VEC_CVT=[0,1]
#include <cmath>
#include <vector>

#include "kgate/starter_host.h"

#ifndef MATH  // 0: double tanh; 1: float tanhf; 2: float z * sigmoid(2u) with a polynomial exp
#define MATH 0
#endif
#ifndef VEC_CVT  // 1: convert f16 rows with F16C instructions when the target has them
#define VEC_CVT 0
#endif

using namespace kgate::starter;

namespace {

inline float gelu(float z) {
#if MATH == 0
  const double zd = z;
  return static_cast<float>(0.5 * zd * (1.0 + std::tanh(0.7978845608 * (zd + 0.044715 * zd * zd * zd))));
#elif MATH == 1
  return 0.5f * z * (1.0f + std::tanh(0.7978845608f * (z + 0.044715f * z * z * z)));
#else
  // 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)): no cancellation for negative z.
  const float u = 0.7978845608f * (z + 0.044715f * z * z * z);
  return z / (1.0f + poly_exp(-2.0f * u));
#endif
}

bool supported(kgate_dtype d) { return d == KGATE_F32 || d == KGATE_F16 || d == KGATE_BF16; }

}  // namespace

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* /*stream*/) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  const kgate_tensor& b = inputs[1];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || b.ndim != 1 || y.ndim != 2 || !supported(x.dtype) || b.dtype != x.dtype ||
      y.dtype != x.dtype)
    return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<float> row(static_cast<size_t>(cols)), bf(static_cast<size_t>(cols));
  load_row<VEC_CVT != 0>(b, 0, cols, bf.data());
  for (int64_t r = 0; r < rows; ++r) {
    load_row<VEC_CVT != 0>(x, r * cols, cols, row.data());
    for (int64_t c = 0; c < cols; ++c) row[c] = gelu(row[c] + bf[c]);
    store_row<VEC_CVT != 0>(y, r * cols, cols, row.data());
  }
  return 0;
}

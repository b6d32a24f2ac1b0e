// Host starter: bias_gelu z = x + b[c], y = 0.5 z (1 + tanh(0.7978845608 (z + 0.044715 z^3))).
// Inputs: x[R,C], b[C]; outputs: y[R,C]; dtypes f16, bf16, f32.
// Assumes contiguous row-major tensors (the harness passes dense ones).
//
// The defaults below are deliberately slow so a tuner has something real to find.
// kgate:tune MATH=[0,1,2]
// kgate:tune VEC_CVT=[0,1]
#include <cmath>
#include <vector>

#include "kgate/kernel.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

#ifndef MATH  // 0: double tanh; 1: float tanhf; 2: float z * sigmoid(2u) with a polynomial exp
#define MATH 0
#endif
#ifndef VEC_CVT  // 1: convert f16 rows with F16C instructions when the target has them
#define VEC_CVT 0
#endif

namespace {

// exp via Cody-Waite reduction and a degree-7 polynomial (relative error < 1e-7),
// clamped to the float range; branch-free so the loop vectorizes.
inline float poly_exp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float t = x * 1.44269504f;
  const float kf = (t + 12582912.0f) - 12582912.0f;  // round to nearest integer
  const float r = (x - kf * 0.693145752f) - kf * 1.42860677e-6f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int n = static_cast<int>(kf);
  const uint32_t bits = static_cast<uint32_t>(n + 127) << 23;
  return p * kgate_bits_to_f32(bits);
}

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

void load_row(const kgate_tensor& t, int64_t off, int64_t n, float* dst) {
  switch (t.dtype) {
    case KGATE_F32: {
      const float* p = static_cast<const float*>(t.data) + off;
      for (int64_t i = 0; i < n; ++i) dst[i] = p[i];
      return;
    }
    case KGATE_F16: {
      const uint16_t* p = static_cast<const uint16_t*>(t.data) + off;
      int64_t i = 0;
#if VEC_CVT && defined(__F16C__)
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
#endif
      for (; i < n; ++i) dst[i] = kgate_f16_to_f32(p[i]);
      return;
    }
    case KGATE_BF16: {
      const uint16_t* p = static_cast<const uint16_t*>(t.data) + off;
      for (int64_t i = 0; i < n; ++i) dst[i] = kgate_bf16_to_f32(p[i]);
      return;
    }
    default: return;
  }
}

void store_row(kgate_tensor& t, int64_t off, int64_t n, const float* src) {
  switch (t.dtype) {
    case KGATE_F32: {
      float* p = static_cast<float*>(t.data) + off;
      for (int64_t i = 0; i < n; ++i) p[i] = src[i];
      return;
    }
    case KGATE_F16: {
      uint16_t* p = static_cast<uint16_t*>(t.data) + off;
      int64_t i = 0;
#if VEC_CVT && defined(__F16C__)
      for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
      for (; i < n; ++i) p[i] = kgate_f32_to_f16(src[i]);
      return;
    }
    case KGATE_BF16: {
      uint16_t* p = static_cast<uint16_t*>(t.data) + off;
      for (int64_t i = 0; i < n; ++i) p[i] = kgate_f32_to_bf16(src[i]);
      return;
    }
    default: return;
  }
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
  load_row(b, 0, cols, bf.data());
  for (int64_t r = 0; r < rows; ++r) {
    load_row(x, r * cols, cols, row.data());
    for (int64_t c = 0; c < cols; ++c) row[c] = gelu(row[c] + bf[c]);
    store_row(y, r * cols, cols, row.data());
  }
  return 0;
}

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

#include "kgate/kernel.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

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

namespace {

// exp for x <= 0 (and modest positive x): Cody-Waite reduction x = n ln2 + r, degree-7
// Taylor polynomial on |r| <= ln2/2 (relative error < 1e-7); clamped so 2^n stays normal.
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

inline float expf_(float x) {
#if FAST_EXP
  return poly_exp(x);
#else
  return std::exp(x);
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
  if (n_inputs != 1 || n_outputs != 1) return 1;
  const kgate_tensor& x = inputs[0];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || y.ndim != 2 || !supported(x.dtype) || y.dtype != x.dtype) return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<float> row(static_cast<size_t>(cols)), e(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    load_row(x, r * cols, cols, row.data());
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
    store_row(y, r * cols, cols, e.data());
  }
  return 0;
}

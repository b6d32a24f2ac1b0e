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

#include "kgate/kernel.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

#ifndef ACC  // independent partial sums of squares (1 = one serial dependency chain)
#define ACC 1
#endif
#ifndef RECIP  // 1: multiply by 1/rms once per row instead of dividing every element
#define RECIP 0
#endif
#ifndef VEC_CVT  // 1: convert f16 rows with F16C instructions when the target has them
#define VEC_CVT 0
#endif

namespace {

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
  const kgate_tensor& w = inputs[1];
  kgate_tensor& y = outputs[0];
  if (x.ndim != 2 || w.ndim != 1 || y.ndim != 2 || !supported(x.dtype) || w.dtype != x.dtype ||
      y.dtype != x.dtype)
    return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  std::vector<float> row(static_cast<size_t>(cols)), wf(static_cast<size_t>(cols));
  load_row(w, 0, cols, wf.data());
  for (int64_t r = 0; r < rows; ++r) {
    load_row(x, r * cols, cols, row.data());
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
    store_row(y, r * cols, cols, row.data());
  }
  return 0;
}

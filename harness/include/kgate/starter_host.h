/* kgate starter helpers, host (.cpp) candidates: the pieces the native starters
 * (kernelbench/native/starters, the .cpp files) share, kept in one place.
 *
 *   load_row<VEC>(t, off, n, dst) / store_row<VEC>(t, off, n, src)
 *       n elements of an f32/f16/bf16 tensor from element `off` on, to/from floats; VEC
 *       (true) converts f16 eight at a time with F16C instructions where the target has
 *       them (-march=native on a CPU with F16C), bit-exact with the scalar conversion.
 *   load(t, i) / store(t, i, v)
 *       one element of an f16/bf16/f32/f64 tensor as a double (others read 0, write nothing).
 *   poly_exp(x)
 *       float exp by Cody-Waite reduction and a degree-7 polynomial (relative error < 1e-7),
 *       clamped to the float range, branch-free so a loop over it vectorizes.
 *
 * Tunable knobs stay in the starter (`// kgate:tune` and its `#define NAME v` lines, which
 * the tuner rewrites): this header reads no knob macro; a starter passes its knob as the
 * template argument, e.g. load_row<VEC_CVT != 0>(...). Everything here has internal linkage
 * (an anonymous namespace), so two candidates built with different knobs never share a
 * definition. The functions keep the inline-ness they had in the starters (load/store are
 * not `inline`: that keyword changes GCC's inlining of them, so the starters' code would
 * change); [[maybe_unused]] keeps a starter that uses only some of them free of warnings.
 * C++17 (the host backend compiles with -std=c++17).
 */
#ifndef KGATE_STARTER_HOST_H_
#define KGATE_STARTER_HOST_H_

#include <stdint.h>

#include "kgate/kernel.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kgate::starter {
namespace {

template <bool kVecCvt>
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
#if defined(__F16C__)
      if constexpr (kVecCvt)
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

template <bool kVecCvt>
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
#if defined(__F16C__)
      if constexpr (kVecCvt)
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

[[maybe_unused]] double load(const kgate_tensor& t, int64_t i) {
  switch (t.dtype) {
    case KGATE_F16: return kgate_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
    case KGATE_BF16: return kgate_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
    case KGATE_F32: return static_cast<const float*>(t.data)[i];
    case KGATE_F64: return static_cast<const double*>(t.data)[i];
    default: return 0;
  }
}

[[maybe_unused]] void store(kgate_tensor& t, int64_t i, double v) {
  switch (t.dtype) {
    case KGATE_F16: static_cast<uint16_t*>(t.data)[i] = kgate_f32_to_f16(static_cast<float>(v)); return;
    case KGATE_BF16: static_cast<uint16_t*>(t.data)[i] = kgate_f32_to_bf16(static_cast<float>(v)); return;
    case KGATE_F32: static_cast<float*>(t.data)[i] = static_cast<float>(v); return;
    case KGATE_F64: static_cast<double*>(t.data)[i] = v; return;
    default: return;
  }
}

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

}  // namespace
}  // namespace kgate::starter

#endif /* KGATE_STARTER_HOST_H_ */

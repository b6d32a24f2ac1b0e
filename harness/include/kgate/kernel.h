/* kgate candidate ABI, version 1.
 *
 * Every native candidate (host .cpp or CUDA .cu) exports exactly one entry point:
 *
 *   extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs,
 *                            kgate_tensor* outputs, int32_t n_outputs, void* stream);
 *
 * Inputs come in the order the op lists them, outputs after. Strides are in elements.
 * `stream` is the cudaStream_t to launch on for the cuda backend, NULL for host.
 * Return 0 on success; any other value is reported as a kernel error.
 *
 * Tunables: `// kgate:tune NAME=[v1,v2,...]` comments declare a search space; the harness
 * passes the chosen values as preprocessor macros (-DNAME=v). Guard defaults with #ifndef.
 */
#ifndef KGATE_KERNEL_H_
#define KGATE_KERNEL_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KGATE_ABI_VERSION 1
#define KGATE_MAX_DIMS 8

typedef enum {
  KGATE_F16 = 0,
  KGATE_BF16 = 1,
  KGATE_F32 = 2,
  KGATE_F64 = 3,
  KGATE_I32 = 4,
  KGATE_I64 = 5
} kgate_dtype;

typedef struct {
  void* data;
  kgate_dtype dtype;
  int32_t ndim;
  int64_t shape[KGATE_MAX_DIMS];
  int64_t strides[KGATE_MAX_DIMS];
} kgate_tensor;

typedef int (*kgate_run_fn)(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                            int32_t n_outputs, void* stream);

#ifdef __cplusplus
}
#endif

/* ---- Host-side helpers for 16-bit floats (bit-exact, round-to-nearest-even) ---------- */
#if !defined(__CUDACC__) || defined(KGATE_HOST_HELPERS)

static inline float kgate_bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint32_t kgate_f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float kgate_bf16_to_f32(uint16_t h) { return kgate_bits_to_f32((uint32_t)h << 16); }

static inline uint16_t kgate_f32_to_bf16(float f) {
  uint32_t u = kgate_f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline float kgate_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return kgate_bits_to_f32(sign);
    /* subnormal: renormalise */
    exp = 127 - 15 + 1;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      exp--;
    }
    man &= 0x3ffu;
    return kgate_bits_to_f32(sign | (exp << 23) | (man << 13));
  }
  if (exp == 0x1f) return kgate_bits_to_f32(sign | 0x7f800000u | (man << 13));
  return kgate_bits_to_f32(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

static inline uint16_t kgate_f32_to_f16(float f) {
  uint32_t u = kgate_f32_to_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow -> inf */
  if (absu < 0x38800000u) { /* subnormal or zero in f16 */
    if (absu < 0x33000000u) return (uint16_t)sign;
    uint32_t exp = absu >> 23;
    uint32_t man = (absu & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp; /* 14 + (113 - exp) - 1 */
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t r = absu + 0xfffu + ((absu >> 13) & 1u) - (112u << 23);
  return (uint16_t)(sign | (r >> 13));
}

#endif /* host helpers */

#endif /* KGATE_KERNEL_H_ */

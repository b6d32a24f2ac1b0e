// HostTensor: dense row-major tensors stored in their real element width.
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "kgate/kernel.h"
#include "ops/op.h"

namespace kgate::ops {
namespace {

// Rounds a double to float with round-to-odd: truncate toward zero and set the last bit
// when inexact. A second rounding of that float to f16/bf16 (<= 11 significant bits, far
// fewer than float's 24) is then exactly the round-to-nearest-even of the double, which a
// plain double->float->half chain is not (double rounding).
float round_to_odd_f32(double v) {
  if (!std::isfinite(v)) return static_cast<float>(v);
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v) || std::isinf(f)) {
    f = std::nextafter(f, 0.0f);  // toward zero (inf -> FLT_MAX)
  }
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u |= 1u;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

double dtype_max(DType d) {
  switch (d) {
    case DType::kF16: return 65504.0;
    case DType::kBF16: return static_cast<double>(kgate_bf16_to_f32(0x7f7f));
    case DType::kF32: return std::numeric_limits<float>::max();
    case DType::kF64: return std::numeric_limits<double>::max();
    case DType::kI32: return std::numeric_limits<int32_t>::max();
    case DType::kI64: return static_cast<double>(std::numeric_limits<int64_t>::max());
  }
  return 0;
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> st(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

double HostTensor::get(int64_t i) const {
  const unsigned char* p = bytes.data() + static_cast<std::size_t>(i) * dtype_size(dtype);
  switch (dtype) {
    case DType::kF16: return kgate_f16_to_f32(load<uint16_t>(p));
    case DType::kBF16: return kgate_bf16_to_f32(load<uint16_t>(p));
    case DType::kF32: return load<float>(p);
    case DType::kF64: return load<double>(p);
    case DType::kI32: return load<int32_t>(p);
    case DType::kI64: return static_cast<double>(load<int64_t>(p));
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  unsigned char* p = bytes.data() + static_cast<std::size_t>(i) * dtype_size(dtype);
  switch (dtype) {
    case DType::kF16: store<uint16_t>(p, kgate_f32_to_f16(round_to_odd_f32(v))); return;
    case DType::kBF16: store<uint16_t>(p, kgate_f32_to_bf16(round_to_odd_f32(v))); return;
    case DType::kF32: store<float>(p, static_cast<float>(v)); return;
    case DType::kF64: store<double>(p, v); return;
    case DType::kI32: {
      double r = std::nearbyint(v);
      if (!(r >= -2147483648.0 && r <= 2147483647.0)) r = r > 0 ? 2147483647.0 : -2147483648.0;
      store<int32_t>(p, static_cast<int32_t>(r));
      return;
    }
    case DType::kI64: {
      double r = std::nearbyint(v);
      constexpr double kLim = 9223372036854775807.0;  // rounds to 2^63
      int64_t out;
      if (r >= kLim) out = std::numeric_limits<int64_t>::max();
      else if (!(r >= -kLim)) out = std::numeric_limits<int64_t>::min();
      else out = static_cast<int64_t>(r);
      store<int64_t>(p, out);
      return;
    }
  }
}

HostTensor HostTensor::make(DType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  for (int64_t s : shape) {
    if (s < 0) throw std::invalid_argument("HostTensor::make: negative dimension");
  }
  t.shape = std::move(shape);
  t.bytes.assign(static_cast<std::size_t>(t.numel()) * dtype_size(dtype), 0);
  return t;
}

std::vector<double> HostTensor::to_doubles() const {
  const int64_t n = numel();
  std::vector<double> out(static_cast<std::size_t>(n));
  const unsigned char* p = bytes.data();
  switch (dtype) {
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) out[i] = kgate_f16_to_f32(load<uint16_t>(p + 2 * i));
      break;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) out[i] = kgate_bf16_to_f32(load<uint16_t>(p + 2 * i));
      break;
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) out[i] = load<float>(p + 4 * i);
      break;
    case DType::kF64: std::memcpy(out.data(), p, static_cast<std::size_t>(n) * 8); break;
    case DType::kI32:
      for (int64_t i = 0; i < n; ++i) out[i] = load<int32_t>(p + 4 * i);
      break;
    case DType::kI64:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(load<int64_t>(p + 8 * i));
      break;
  }
  return out;
}

}  // namespace kgate::ops

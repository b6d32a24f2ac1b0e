#pragma once
// Element types shared by configs, the protocol, the op library and the candidate ABI.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kgate {

// Values match kgate_dtype in kgate/kernel.h.
enum class DType : int { kF16 = 0, kBF16 = 1, kF32 = 2, kF64 = 3, kI32 = 4, kI64 = 5 };

constexpr std::string_view to_string(DType d) {
  switch (d) {
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "?";
}

constexpr std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "f16" || s == "fp16" || s == "float16") return DType::kF16;
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "f32" || s == "fp32" || s == "float32") return DType::kF32;
  if (s == "f64" || s == "fp64" || s == "float64") return DType::kF64;
  if (s == "i32" || s == "int32") return DType::kI32;
  if (s == "i64" || s == "int64") return DType::kI64;
  return std::nullopt;
}

constexpr std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kF32:
    case DType::kI32: return 4;
    case DType::kF64:
    case DType::kI64: return 8;
  }
  return 0;
}

constexpr bool is_float(DType d) { return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64; }

}  // namespace kgate

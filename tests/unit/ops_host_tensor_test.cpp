// HostTensor storage, exact 16-bit rounding, and dtype_max.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kgate/kernel.h"
#include "ops/op.h"

namespace kgate::ops {
namespace {

TEST(OpsHostTensor, MakeNumelStrides) {
  HostTensor t = HostTensor::make(DType::kF16, {2, 3, 4});
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.bytes.size(), 48u);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{12, 4, 1}));
  HostTensor s = HostTensor::make(DType::kF32, {});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_TRUE(s.strides().empty());
  EXPECT_EQ(s.get(0), 0.0);
}

TEST(OpsHostTensor, RoundTripsEveryDtype) {
  for (DType dt : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64}) {
    HostTensor t = HostTensor::make(dt, {4});
    t.set(0, 1.0);
    t.set(1, -2.5);
    t.set(2, 0.0);
    t.set(3, 96.0);
    EXPECT_EQ(t.get(0), 1.0) << to_string(dt);
    EXPECT_EQ(t.get(1), is_float(dt) ? -2.5 : -2.0) << to_string(dt);  // ints round half to even
    EXPECT_EQ(t.get(3), 96.0);
    EXPECT_EQ(t.to_doubles(), (std::vector<double>{t.get(0), t.get(1), t.get(2), t.get(3)}));
  }
}

TEST(OpsHostTensor, F16RoundsToNearestEven) {
  HostTensor t = HostTensor::make(DType::kF16, {1});
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
  t.set(0, 1.0 + std::ldexp(1.0, -11));
  EXPECT_EQ(t.get(0), 1.0);
  // Just above halfway rounds up; via float this would double-round to 1 when the excess
  // is below float precision.
  t.set(0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  EXPECT_EQ(t.get(0), 1.0 + std::ldexp(1.0, -10));
  t.set(0, 65504.0);
  EXPECT_EQ(t.get(0), 65504.0);
  t.set(0, 70000.0);
  EXPECT_TRUE(std::isinf(t.get(0)));
  t.set(0, std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(t.get(0), std::ldexp(1.0, -24));
  t.set(0, std::nan(""));
  EXPECT_TRUE(std::isnan(t.get(0)));
}

TEST(OpsHostTensor, Bf16RoundsToNearestEven) {
  HostTensor t = HostTensor::make(DType::kBF16, {1});
  t.set(0, 1.0 + std::ldexp(1.0, -8));  // halfway between 1 and 1 + 2^-7
  EXPECT_EQ(t.get(0), 1.0);
  t.set(0, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -45));
  EXPECT_EQ(t.get(0), 1.0 + std::ldexp(1.0, -7));
  t.set(0, 3.0 + std::ldexp(1.0, -7));  // halfway between 3 and 3 + 2^-6: to even (3)
  EXPECT_EQ(t.get(0), 3.0);
  t.set(0, 1e300);
  EXPECT_TRUE(std::isinf(t.get(0)));
}

TEST(OpsHostTensor, SixteenBitStorageMatchesKernelHelpers) {
  HostTensor h = HostTensor::make(DType::kF16, {1});
  HostTensor b = HostTensor::make(DType::kBF16, {1});
  for (float f : {0.1f, -3.14159f, 1234.5f, 1e-5f, -65000.0f}) {
    h.set(0, f);
    b.set(0, f);
    uint16_t hb, bb;
    std::memcpy(&hb, h.bytes.data(), 2);
    std::memcpy(&bb, b.bytes.data(), 2);
    EXPECT_EQ(hb, kgate_f32_to_f16(f));
    EXPECT_EQ(bb, kgate_f32_to_bf16(f));
  }
}

TEST(OpsHostTensor, IntegerSaturates) {
  HostTensor t = HostTensor::make(DType::kI32, {2});
  t.set(0, 1e12);
  t.set(1, -1e12);
  EXPECT_EQ(t.get(0), 2147483647.0);
  EXPECT_EQ(t.get(1), -2147483648.0);
}

TEST(OpsHostTensor, DtypeMax) {
  EXPECT_EQ(dtype_max(DType::kF16), 65504.0);
  EXPECT_EQ(dtype_max(DType::kF32), std::numeric_limits<float>::max());
  EXPECT_NEAR(dtype_max(DType::kBF16), 3.3895e38, 1e34);
}

}  // namespace
}  // namespace kgate::ops

// Float64 references against hand-computed values and mathematical properties.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op.h"

namespace kgate::ops {
namespace {

HostTensor tensor(DType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  HostTensor t = HostTensor::make(dt, std::move(shape));
  for (std::size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

std::vector<double> run(const std::string& op, const Dims& d, const std::vector<HostTensor>& in) {
  auto out = find_op(op)->reference_f64(d, in);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DType::kF64);
  return out[0].to_doubles();
}

TEST(OpsReference, SoftmaxHandValues) {
  auto y = run("softmax", {{"R", 2}, {"C", 2}}, {tensor(DType::kF64, {2, 2}, {0, std::log(3.0), 1000, 1000})});
  EXPECT_NEAR(y[0], 0.25, 1e-15);
  EXPECT_NEAR(y[1], 0.75, 1e-15);
  EXPECT_DOUBLE_EQ(y[2], 0.5);    // stable: no overflow at 1000
  EXPECT_DOUBLE_EQ(y[3], 0.5);
}

TEST(OpsReference, SoftmaxRowsSumToOne) {
  const Op& op = *find_op("softmax");
  const Dims d = {{"R", 9}, {"C", 1023}};
  auto y = op.reference_f64(d, op.make_inputs(d, DType::kBF16, 3, Distribution::kLarge))[0].to_doubles();
  for (int r = 0; r < 9; ++r) {
    double s = 0;
    for (int c = 0; c < 1023; ++c) s += y[r * 1023 + c];
    EXPECT_NEAR(s, 1.0, 1e-12);
  }
}

TEST(OpsReference, RmsnormHandValues) {
  // row (3, 4): mean square 12.5, rms sqrt(12.5 + 1e-6)
  auto y = run("rmsnorm", {{"R", 1}, {"C", 2}},
               {tensor(DType::kF64, {1, 2}, {3, 4}), tensor(DType::kF64, {2}, {1, 2})});
  const double rms = std::sqrt(12.5 + 1e-6);
  EXPECT_DOUBLE_EQ(y[0], 3 / rms);
  EXPECT_DOUBLE_EQ(y[1], 4 / rms * 2);
}

TEST(OpsReference, RmsnormIsScaleInvariant) {
  const Op& op = *find_op("rmsnorm");
  const Dims d = {{"R", 4}, {"C", 64}};
  auto in = op.make_inputs(d, DType::kF64, 7, Distribution::kNormal);
  auto y1 = op.reference_f64(d, in)[0].to_doubles();
  for (int64_t i = 0; i < in[0].numel(); ++i) in[0].set(i, in[0].get(i) * 1024.0);
  auto y2 = op.reference_f64(d, in)[0].to_doubles();
  for (std::size_t i = 0; i < y1.size(); ++i) EXPECT_NEAR(y1[i], y2[i], 1e-6 * (1 + std::fabs(y1[i])));
}

TEST(OpsReference, LayernormHandValues) {
  // row (1, 3): mean 2, biased var 1 -> normalized (-1, 1) / sqrt(1 + 1e-5)
  auto y = run("layernorm", {{"R", 1}, {"C", 2}},
               {tensor(DType::kF32, {1, 2}, {1, 3}), tensor(DType::kF32, {2}, {2, 1}),
                tensor(DType::kF32, {2}, {0.5, -1})});
  const double inv = 1 / std::sqrt(1 + 1e-5);
  EXPECT_DOUBLE_EQ(y[0], -inv * 2 + 0.5);
  EXPECT_DOUBLE_EQ(y[1], inv * 1 - 1);
}

TEST(OpsReference, BiasGeluHandValues) {
  auto y = run("bias_gelu", {{"R", 1}, {"C", 3}},
               {tensor(DType::kF32, {1, 3}, {0, 1, -10}), tensor(DType::kF32, {3}, {0, 0, 0})});
  EXPECT_EQ(y[0], 0.0);
  const double z = 1;
  EXPECT_DOUBLE_EQ(y[1], 0.5 * z * (1 + std::tanh(0.7978845608 * (z + 0.044715))));
  EXPECT_NEAR(y[1], 0.841192, 1e-6);  // tanh-GELU(1)
  EXPECT_NEAR(y[2], 0.0, 1e-20);
  auto shifted = run("bias_gelu", {{"R", 1}, {"C", 1}},
                     {tensor(DType::kF32, {1, 1}, {0.25}), tensor(DType::kF32, {1}, {0.75})});
  EXPECT_DOUBLE_EQ(shifted[0], y[1]);  // z = x + b
}

TEST(OpsReference, ReduceSumHandValues) {
  auto y = run("reduce_sum", {{"R", 2}, {"C", 3}}, {tensor(DType::kF16, {2, 3}, {1, 2, 3, -1, 0.5, 0.25})});
  EXPECT_EQ(y, (std::vector<double>{6, -0.25}));
  // Compensated: 1e16 + 1 - 1e16 is 1, not 0.
  auto c = run("reduce_sum", {{"R", 1}, {"C", 3}}, {tensor(DType::kF64, {1, 3}, {1e16, 1, -1e16})});
  EXPECT_EQ(c[0], 1.0);
}

TEST(OpsReference, CrossEntropyHandValues) {
  // row 0: logits (0, ln 3), target 1 -> log(4) - ln 3; row 1: (2, 2), target 0 -> log 2
  HostTensor t = HostTensor::make(DType::kI64, {2});
  t.set(0, 1);
  t.set(1, 0);
  auto y = run("cross_entropy", {{"R", 2}, {"V", 2}},
               {tensor(DType::kF64, {2, 2}, {0, std::log(3.0), 2, 2}), t});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_NEAR(y[0], ((std::log(4.0) - std::log(3.0)) + std::log(2.0)) / 2, 1e-15);
}

TEST(OpsReference, CrossEntropyOfUniformLogitsIsLogV) {
  const Op& op = *find_op("cross_entropy");
  const Dims d = {{"R", 5}, {"V", 50257}};
  auto in = op.make_inputs(d, DType::kF32, 1, Distribution::kNormal);
  for (int64_t i = 0; i < in[0].numel(); ++i) in[0].set(i, 3.5);
  EXPECT_NEAR(op.reference_f64(d, in)[0].get(0), std::log(50257.0), 1e-12);
}

TEST(OpsReference, RotaryHandValues) {
  // D = 4, S = 1: pairs (x0, x2), (x1, x3) rotated by angles with cos/sin given.
  auto y = run("rotary_embedding", {{"B", 1}, {"H", 1}, {"S", 1}, {"D", 4}},
               {tensor(DType::kF64, {1, 1, 1, 4}, {1, 2, 3, 4}), tensor(DType::kF64, {1, 2}, {0, 0.6}),
                tensor(DType::kF64, {1, 2}, {1, 0.8})});
  EXPECT_DOUBLE_EQ(y[0], 1 * 0 - 3 * 1);
  EXPECT_DOUBLE_EQ(y[1], 2 * 0.6 - 4 * 0.8);
  EXPECT_DOUBLE_EQ(y[2], 3 * 0 + 1 * 1);
  EXPECT_DOUBLE_EQ(y[3], 4 * 0.6 + 2 * 0.8);
}

TEST(OpsReference, RotaryPreservesPairNorms) {
  const Op& op = *find_op("rotary_embedding");
  const Dims d = {{"B", 2}, {"H", 3}, {"S", 17}, {"D", 32}};
  auto in = op.make_inputs(d, DType::kF64, 11, Distribution::kNormal);
  auto x = in[0].to_doubles();
  auto y = op.reference_f64(d, in)[0].to_doubles();
  for (std::size_t base = 0; base < x.size(); base += 32) {
    for (int i = 0; i < 16; ++i) {
      const double nx = std::hypot(x[base + i], x[base + i + 16]);
      const double ny = std::hypot(y[base + i], y[base + i + 16]);
      ASSERT_NEAR(nx, ny, 1e-12 * (1 + nx));
    }
  }
  // Position 0 is the identity rotation.
  EXPECT_EQ(in[1].get(0), 1.0);
  EXPECT_EQ(in[2].get(0), 0.0);
}

TEST(OpsReference, MatmulHandValues) {
  auto y = run("matmul", {{"M", 2}, {"N", 2}, {"K", 3}},
               {tensor(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor(DType::kF32, {3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(y, (std::vector<double>{58, 64, 139, 154}));
}

TEST(OpsReference, MatmulBlockedEqualsNaiveAcrossBlockEdges) {
  const Op& op = *find_op("matmul");
  const Dims d = {{"M", 3}, {"N", 600}, {"K", 130}};
  auto in = op.make_inputs(d, DType::kF64, 2, Distribution::kSigned);
  auto a = in[0].to_doubles(), b = in[1].to_doubles();
  auto c = op.reference_f64(d, in)[0].to_doubles();
  for (int i = 0; i < 3; ++i) {
    for (int j : {0, 511, 512, 599}) {
      double s = 0;
      for (int k = 0; k < 130; ++k) s += a[i * 130 + k] * b[k * 600 + j];
      EXPECT_NEAR(c[i * 600 + j], s, 1e-12);
    }
  }
}

}  // namespace
}  // namespace kgate::ops

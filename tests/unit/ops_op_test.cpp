// Op registry, dims checks, input generation (determinism, distributions) and formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ops/op.h"

namespace kgate::ops {
namespace {

TEST(OpsRegistry, FindsEveryBuiltinOp) {
  const std::vector<std::string> want = {"bias_gelu", "cross_entropy", "layernorm", "matmul",
                                         "reduce_sum", "rmsnorm", "rotary_embedding", "softmax"};
  EXPECT_EQ(op_names(), want);
  for (const std::string& n : want) {
    const Op* op = find_op(n);
    ASSERT_NE(op, nullptr) << n;
    EXPECT_EQ(op->name(), n);
    EXPECT_FALSE(op->summary().empty());
    EXPECT_FALSE(op->outputs().empty());
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
}

TEST(OpsDistribution, ParseRoundTrips) {
  for (Distribution d : {Distribution::kNormal, Distribution::kUniform01, Distribution::kSigned,
                         Distribution::kLarge, Distribution::kTiny, Distribution::kMixed}) {
    EXPECT_EQ(parse_distribution(to_string(d)), d);
  }
  EXPECT_EQ(parse_distribution("gaussian_foo"), std::nullopt);
}

TEST(OpsOp, CheckDims) {
  const Op& sm = *find_op("softmax");
  EXPECT_EQ(sm.check_dims({{"R", 4}, {"C", 5}}), "");
  EXPECT_NE(sm.check_dims({{"R", 4}}), "");
  EXPECT_NE(sm.check_dims({{"R", 0}, {"C", 5}}), "");
  EXPECT_NE(sm.check_dims({{"R", 1}, {"C", 5}, {"Z", 3}}), "");
  const Op& rot = *find_op("rotary_embedding");
  EXPECT_EQ(rot.check_dims({{"B", 1}, {"H", 2}, {"S", 3}, {"D", 8}}), "");
  EXPECT_NE(rot.check_dims({{"B", 1}, {"H", 2}, {"S", 3}, {"D", 7}}), "");
}

TEST(OpsOp, ShapeOfDerivedDims) {
  const Op& rot = *find_op("rotary_embedding");
  const Dims d = {{"B", 2}, {"H", 3}, {"S", 5}, {"D", 8}};
  EXPECT_EQ(rot.shape_of(rot.inputs()[0], d), (std::vector<int64_t>{2, 3, 5, 8}));
  EXPECT_EQ(rot.shape_of(rot.inputs()[1], d), (std::vector<int64_t>{5, 4}));
  const Op& ce = *find_op("cross_entropy");
  EXPECT_TRUE(ce.shape_of(ce.outputs()[0], {{"R", 3}, {"V", 7}}).empty());
}

TEST(OpsInputs, DeterministicAndSeedSensitive) {
  const Op& op = *find_op("layernorm");
  const Dims d = {{"R", 7}, {"C", 33}};
  auto a = op.make_inputs(d, DType::kF16, 42, Distribution::kNormal);
  auto b = op.make_inputs(d, DType::kF16, 42, Distribution::kNormal);
  auto c = op.make_inputs(d, DType::kF16, 43, Distribution::kNormal);
  ASSERT_EQ(a.size(), 3u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_NE(a[i].bytes, c[i].bytes);
    EXPECT_EQ(a[i].dtype, DType::kF16);
  }
  EXPECT_NE(a[1].bytes, a[2].bytes);  // w and b come from different streams
}

TEST(OpsReference, ThreadedSlicesEqualOneCall) {
  const std::vector<std::pair<std::string, Dims>> cases = {
      {"softmax", {{"R", 64}, {"C", 16384}}},
      {"rmsnorm", {{"R", 63}, {"C", 16385}}},
      {"layernorm", {{"R", 64}, {"C", 16384}}},
      {"bias_gelu", {{"R", 65}, {"C", 16384}}},
      {"reduce_sum", {{"R", 67}, {"C", 16384}}},
      {"matmul", {{"M", 97}, {"N", 64}, {"K", 8192}}},
      {"rotary_embedding", {{"B", 5}, {"H", 4}, {"S", 256}, {"D", 256}}},
      {"cross_entropy", {{"R", 64}, {"V", 16384}}},  // no independent dim: one call
  };
  for (const auto& [name, d] : cases) {
    const Op& op = *find_op(name);
    ASSERT_EQ(op.check_dims(d), "") << name;
    auto in = op.make_inputs(d, DType::kF32, 11, Distribution::kNormal);
    set_input_threads(1);
    auto serial = reference_f64_threaded(op, d, in);
    set_input_threads(3);
    auto threaded = reference_f64_threaded(op, d, in);
    set_input_threads(0);
    auto direct = op.reference_f64(d, in);
    ASSERT_EQ(serial.size(), threaded.size()) << name;
    for (std::size_t j = 0; j < serial.size(); ++j) {
      EXPECT_EQ(threaded[j].shape, direct[j].shape) << name;
      EXPECT_EQ(threaded[j].bytes, direct[j].bytes) << name << " output " << j;
      EXPECT_EQ(serial[j].bytes, direct[j].bytes) << name << " output " << j;
    }
  }
}

TEST(OpsInputs, SameValuesWhateverTheThreadCount) {
  // Large enough to be drawn in parallel chunks, with a partial last chunk.
  const Op& op = *find_op("softmax");
  const Dims d = {{"R", 9}, {"C", kInputChunk - 3}};
  for (auto dist : {Distribution::kNormal, Distribution::kMixed, Distribution::kSigned}) {
    set_input_threads(1);
    auto serial = op.make_inputs(d, DType::kF32, 7, dist);
    set_input_threads(3);
    auto threaded = op.make_inputs(d, DType::kF32, 7, dist);
    set_input_threads(0);
    ASSERT_EQ(serial.size(), threaded.size());
    EXPECT_EQ(serial[0].bytes, threaded[0].bytes);
    // Chunks are independent streams: the first two chunks differ.
    auto v = serial[0].to_doubles();
    EXPECT_NE(v[0], v[static_cast<std::size_t>(kInputChunk)]);
  }
  // An integer input (cross_entropy targets) too.
  const Op& ce = *find_op("cross_entropy");
  const Dims dc = {{"R", 4 * kInputChunk + 5}, {"V", 3}};
  set_input_threads(1);
  auto a = ce.make_inputs(dc, DType::kF32, 3, Distribution::kNormal);
  set_input_threads(2);
  auto b = ce.make_inputs(dc, DType::kF32, 3, Distribution::kNormal);
  set_input_threads(0);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].bytes, b[i].bytes) << i;
}

double min_of(const HostTensor& t) {
  auto v = t.to_doubles();
  return *std::min_element(v.begin(), v.end());
}
double max_abs(const HostTensor& t) {
  double m = 0;
  for (double v : t.to_doubles()) m = std::max(m, std::fabs(v));
  return m;
}

TEST(OpsInputs, DistributionRanges) {
  const Op& op = *find_op("softmax");
  const Dims d = {{"R", 16}, {"C", 256}};
  auto u = op.make_inputs(d, DType::kF32, 1, Distribution::kUniform01)[0].to_doubles();
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
  auto s = op.make_inputs(d, DType::kF32, 1, Distribution::kSigned)[0];
  EXPECT_LT(min_of(s), -0.5);
  EXPECT_LE(max_abs(s), 1.0);
  auto n = op.make_inputs(d, DType::kF64, 1, Distribution::kNormal)[0].to_doubles();
  double mean = 0, var = 0;
  for (double v : n) mean += v;
  mean /= static_cast<double>(n.size());
  for (double v : n) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n.size());
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.1);
  auto big16 = op.make_inputs(d, DType::kF16, 1, Distribution::kLarge)[0];
  EXPECT_GT(max_abs(big16), 3e4);
  EXPECT_LE(max_abs(big16), 65504.0);
  auto big32 = op.make_inputs(d, DType::kF32, 1, Distribution::kLarge)[0];
  EXPECT_GT(max_abs(big32), 1e29);
  EXPECT_TRUE(std::isfinite(max_abs(big32)));
  auto tiny = op.make_inputs(d, DType::kF32, 1, Distribution::kTiny)[0];
  EXPECT_LT(max_abs(tiny), 1e-5);
  EXPECT_GT(max_abs(tiny), 1e-7);
  auto mixed = op.make_inputs(d, DType::kF32, 1, Distribution::kMixed)[0].to_doubles();
  double row0 = 0, row1 = 0;
  for (int c = 0; c < 256; ++c) {
    row0 = std::max(row0, std::fabs(mixed[c]));
    row1 = std::max(row1, std::fabs(mixed[256 + c]));
  }
  EXPECT_GT(row0, 100.0);
  EXPECT_LT(row1, 0.01);
}

TEST(OpsInputs, CrossEntropyTargetsInRangeWhateverTheDistribution) {
  const Op& op = *find_op("cross_entropy");
  const Dims d = {{"R", 500}, {"V", 37}};
  for (Distribution dist : {Distribution::kNormal, Distribution::kLarge, Distribution::kTiny}) {
    auto in = op.make_inputs(d, DType::kBF16, 9, dist);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].dtype, DType::kBF16);
    EXPECT_EQ(in[1].dtype, DType::kI64);  // fixed dtype kept
    auto t = in[1].to_doubles();
    EXPECT_GE(*std::min_element(t.begin(), t.end()), 0.0);
    EXPECT_LE(*std::max_element(t.begin(), t.end()), 36.0);
    EXPECT_GT(*std::max_element(t.begin(), t.end()), 30.0);  // spread over the range
  }
}

TEST(OpsInputs, LargeKeepsTheTruthFinite) {
  const std::map<std::string, Dims> shapes = {
      {"softmax", {{"R", 8}, {"C", 300}}},
      {"rmsnorm", {{"R", 8}, {"C", 300}}},
      {"layernorm", {{"R", 8}, {"C", 300}}},
      {"bias_gelu", {{"R", 8}, {"C", 300}}},
      {"reduce_sum", {{"R", 8}, {"C", 4097}}},
      {"cross_entropy", {{"R", 8}, {"V", 1000}}},
      {"rotary_embedding", {{"B", 1}, {"H", 2}, {"S", 16}, {"D", 64}}},
      {"matmul", {{"M", 16}, {"N", 16}, {"K", 1024}}},
  };
  for (const auto& [name, d] : shapes) {
    const Op& op = *find_op(name);
    for (DType dt : {DType::kF16, DType::kBF16, DType::kF32}) {
      for (Distribution dist : {Distribution::kLarge, Distribution::kMixed}) {
        auto in = op.make_inputs(d, dt, 5, dist);
        auto out = op.reference_f64(d, in);
        for (double v : out[0].to_doubles()) {
          ASSERT_TRUE(std::isfinite(v)) << name << " " << to_string(dt);
          ASSERT_LE(std::fabs(v), dtype_max(dt)) << name << " " << to_string(dt) << " " << to_string(dist);
        }
      }
    }
  }
}

TEST(OpsFormulas, FlopsAndMinBytes) {
  const Dims rc = {{"R", 10}, {"C", 20}};
  EXPECT_EQ(find_op("softmax")->flops(rc), 5.0 * 200);
  EXPECT_EQ(find_op("softmax")->min_bytes(rc, DType::kF16), 2.0 * 200 * 2);
  EXPECT_EQ(find_op("rmsnorm")->flops(rc), 4.0 * 200);
  EXPECT_EQ(find_op("rmsnorm")->min_bytes(rc, DType::kF32), 4.0 * (200 + 20 + 200));
  EXPECT_EQ(find_op("layernorm")->flops(rc), 8.0 * 200);
  EXPECT_EQ(find_op("layernorm")->min_bytes(rc, DType::kBF16), 2.0 * (200 + 20 + 20 + 200));
  EXPECT_EQ(find_op("bias_gelu")->flops(rc), 10.0 * 200);
  EXPECT_EQ(find_op("bias_gelu")->min_bytes(rc, DType::kF16), 2.0 * (200 + 20 + 200));
  EXPECT_EQ(find_op("reduce_sum")->flops(rc), 200.0);
  EXPECT_EQ(find_op("reduce_sum")->min_bytes(rc, DType::kF32), 4.0 * (200 + 10));
  const Dims rv = {{"R", 10}, {"V", 100}};
  EXPECT_EQ(find_op("cross_entropy")->flops(rv), 4.0 * 1000);
  EXPECT_EQ(find_op("cross_entropy")->min_bytes(rv, DType::kF16), 2.0 * 1000 + 8.0 * 10 + 2.0);
  const Dims rot = {{"B", 2}, {"H", 3}, {"S", 4}, {"D", 8}};
  EXPECT_EQ(find_op("rotary_embedding")->flops(rot), 3.0 * 192);
  EXPECT_EQ(find_op("rotary_embedding")->min_bytes(rot, DType::kF16), 2.0 * (192 + 16 + 16 + 192));
  const Dims mnk = {{"M", 4}, {"N", 5}, {"K", 6}};
  EXPECT_EQ(find_op("matmul")->flops(mnk), 2.0 * 4 * 5 * 6);
  EXPECT_EQ(find_op("matmul")->min_bytes(mnk, DType::kF32), 4.0 * (24 + 30 + 20));
}

TEST(OpsFormulas, TolerancesLoosenWithNarrowerDtypes) {
  for (const std::string& n : op_names()) {
    const Op& op = *find_op(n);
    const Tolerance f64 = op.default_tolerance(DType::kF64), f32 = op.default_tolerance(DType::kF32);
    const Tolerance f16 = op.default_tolerance(DType::kF16), bf16 = op.default_tolerance(DType::kBF16);
    EXPECT_LE(f64.rtol, 1e-10) << n;
    EXPECT_LT(f64.rtol, f32.rtol) << n;
    EXPECT_LT(f32.rtol, f16.rtol) << n;
    EXPECT_LT(f16.rtol, bf16.rtol) << n;
    // Output rounding alone (unit roundoff) must pass.
    EXPECT_GE(f16.rtol, std::ldexp(1.0, -11)) << n;
    EXPECT_GE(bf16.rtol, std::ldexp(1.0, -8)) << n;
  }
}

TEST(OpsReference, RejectsWrongInputs) {
  const Op& op = *find_op("softmax");
  const Dims d = {{"R", 2}, {"C", 3}};
  EXPECT_ANY_THROW(op.reference_f64(d, {}));
  EXPECT_ANY_THROW(op.reference_f64(d, {HostTensor::make(DType::kF32, {3, 2})}));
  const Op& ce = *find_op("cross_entropy");
  auto in = ce.make_inputs({{"R", 2}, {"V", 3}}, DType::kF32, 1, Distribution::kNormal);
  in[1].set(0, 3);
  EXPECT_ANY_THROW(ce.reference_f64({{"R", 2}, {"V", 3}}, in));
}

}  // namespace
}  // namespace kgate::ops

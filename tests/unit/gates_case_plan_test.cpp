#include "gates/case_plan.h"

#include <set>

#include <gtest/gtest.h>

namespace kgate::gates {
namespace {

config::NativeProblem softmax_problem() {
  config::NativeProblem p;
  p.id = "softmax_small";
  p.op = "softmax";
  p.bench = {{"R", 4096}, {"C", 4096}};
  p.host_bench = {{"R", 256}, {"C", 1024}};
  p.sweep = {{{"R", 7}, {"C", 33}}, {{"R", 4}, {"C", 32}}};
  p.dtypes = {DType::kF32, DType::kF16};
  p.bench_dtype = DType::kF32;
  return p;
}

TEST(CasePlan, SeedsAreDeterministicDistinctAndShort) {
  auto a = derive_seeds(42, 5);
  EXPECT_EQ(a, derive_seeds(42, 5));
  EXPECT_NE(a, derive_seeds(43, 5));
  EXPECT_EQ(std::set<uint64_t>(a.begin(), a.end()).size(), 5u);
  for (auto s : a) EXPECT_LT(s, 1000000000u);
  EXPECT_EQ(derive_seeds(42, 0).size(), 1u);  // at least one
}

TEST(CasePlan, CaseIdFollowsTheOpsDimOrder) {
  const ops::Op* op = ops::find_op("softmax");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(make_case_id(123456, *op, {{"R", 33}, {"C", 4097}}, DType::kF16, ops::Distribution::kSigned),
            "seed=123456/R=33,C=4097/f16/signed");
}

TEST(CasePlan, DerivedShapesFromTheTimedShape) {
  const ops::Op* op = ops::find_op("softmax");
  auto d = derived_shapes(*op, {{"R", 4096}, {"C", 4096}}, int64_t{1} << 26);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[1], (ops::Dims{{"R", 4097}, {"C", 4097}}));
  EXPECT_EQ(d[2], (ops::Dims{{"R", 1537}, {"C", 1537}}));
  // Over the element cap: only what fits is kept.
  auto small = derived_shapes(*op, {{"R", 4096}, {"C", 4096}}, 2 * 1537 * 1537);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].at("C"), 1537);
}

TEST(CasePlan, CoversSeedsShapesDtypesDistributionsCheapestFirst) {
  const ops::Op* op = ops::find_op("softmax");
  auto cases = plan_correctness(softmax_problem(), *op, "host", 7, 3);
  // 3 seeds x 2 dtypes x 2 dists on the smallest shape; 4 other shapes (7x33 and the
  // three derived from host_bench) x 2 x 2; adversarial 3 x 2.
  EXPECT_EQ(cases.size(), 12u + 16u + 6u);
  EXPECT_EQ(cases.front().check.dims, (ops::Dims{{"R", 4}, {"C", 32}}));
  std::set<std::string> ids, seeds, dists, dtypes;
  for (const auto& c : cases) {
    ids.insert(c.check.case_id);
    seeds.insert(std::to_string(c.check.seed));
    dists.insert(c.check.dist);
    dtypes.insert(c.check.dtype);
    EXPECT_EQ(c.check.repeats, 3);
    EXPECT_EQ(c.output_shapes.at("y").size(), 2u);
  }
  EXPECT_EQ(ids.size(), cases.size());  // unique ids
  EXPECT_EQ(seeds.size(), 3u);
  EXPECT_EQ(dists, (std::set<std::string>{"normal", "signed", "large", "tiny", "mixed"}));
  EXPECT_EQ(dtypes, (std::set<std::string>{"f32", "f16"}));
  // Adversarial cases come last with ten times the tolerance.
  const auto& adv = cases.back();
  EXPECT_TRUE(adv.adversarial);
  auto tol = op->default_tolerance(parse_dtype(adv.check.dtype).value());
  EXPECT_DOUBLE_EQ(adv.check.atol, 10 * tol.atol);
  // Timed shape on cuda is `bench` (4096^2), too large for the host cap but derived on cuda.
  auto cuda = plan_correctness(softmax_problem(), *op, "cuda", 7, 3);
  bool has_4097 = false;
  for (const auto& c : cuda) has_4097 = has_4097 || c.check.dims.at("C") == 4097;
  EXPECT_TRUE(has_4097);
}

TEST(CasePlan, ProblemToleranceOverridesTheOpDefault) {
  const ops::Op* op = ops::find_op("softmax");
  auto p = softmax_problem();
  p.tolerance[DType::kF16] = {0.5, 0.25};
  EXPECT_DOUBLE_EQ(tolerance_for(p, *op, DType::kF16).atol, 0.5);
  EXPECT_DOUBLE_EQ(tolerance_for(p, *op, DType::kF32).atol, op->default_tolerance(DType::kF32).atol);
  auto cases = plan_correctness(p, *op, "host", 1, 1);
  for (const auto& c : cases) {
    if (c.check.dtype == "f16" && !c.adversarial) {
      EXPECT_DOUBLE_EQ(c.check.rtol, 0.25);
    }
  }
}

TEST(CasePlan, SameSeedSamePlan) {
  const ops::Op* op = ops::find_op("softmax");
  auto a = plan_correctness(softmax_problem(), *op, "host", 99, 3);
  auto b = plan_correctness(softmax_problem(), *op, "host", 99, 3);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].check.case_id, b[i].check.case_id);
}

}  // namespace
}  // namespace kgate::gates

namespace kgate::gates {
namespace {

TEST(CasePlan, MatmulAtolGrowsWithTheDotProductLength) {
  const ops::Op* op = ops::find_op("matmul");
  ASSERT_NE(op, nullptr);
  const double f32 = op->default_tolerance(DType::kF32).atol;
  const double f16 = op->default_tolerance(DType::kF16).atol;
  auto at = [&](DType dt, int64_t k) { return op->tolerance_at(dt, {{"M", 64}, {"N", 64}, {"K", k}}); };
  EXPECT_DOUBLE_EQ(at(DType::kF32, 128).atol, f32);        // short dot products: the default
  EXPECT_DOUBLE_EQ(at(DType::kF32, 4096).atol, 16 * f32);  // linear in K beyond 256
  EXPECT_DOUBLE_EQ(at(DType::kF16, 1024).atol, 2 * f16);   // sqrt(K / 256) for half types
  EXPECT_DOUBLE_EQ(at(DType::kF32, 4096).rtol, op->default_tolerance(DType::kF32).rtol);
  // Other ops keep their dtype default at any shape.
  const ops::Op* sm = ops::find_op("softmax");
  EXPECT_DOUBLE_EQ(sm->tolerance_at(DType::kF32, {{"R", 8}, {"C", 1 << 20}}).atol,
                   sm->default_tolerance(DType::kF32).atol);

  // The plan uses the case's shape; a problem override still wins.
  config::NativeProblem p;
  p.id = "mm";
  p.op = "matmul";
  p.bench = {{"M", 64}, {"N", 64}, {"K", 4096}};
  p.dtypes = {DType::kF32};
  auto cases = plan_correctness(p, *op, "host", 1, 1);
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    const double want = op->tolerance_at(DType::kF32, c.check.dims).atol * (c.adversarial ? 10 : 1);
    EXPECT_DOUBLE_EQ(c.check.atol, want) << c.check.case_id;
  }
  p.tolerance[DType::kF32] = {1e-3, 1e-3};
  for (const auto& c : plan_correctness(p, *op, "host", 1, 1)) {
    if (!c.adversarial) {
      EXPECT_DOUBLE_EQ(c.check.atol, 1e-3);
    }
  }
}

}  // namespace
}  // namespace kgate::gates

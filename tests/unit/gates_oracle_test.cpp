#include "gates/oracle_gate.h"

#include <limits>

#include <gtest/gtest.h>

namespace kgate::gates {
namespace {

using protocol::CaseResult;
using protocol::OutputError;

CorrectnessCase f32_case() {
  CorrectnessCase c;
  c.check.case_id = "seed=1/R=4,C=32/f32/normal";
  c.check.dtype = "f32";
  return c;
}

CaseResult with_err(double rel_l2) {
  CaseResult r;
  OutputError o;
  o.name = "y";
  o.rel_l2_err = rel_l2;
  r.outputs.push_back(o);
  return r;
}

TEST(OracleGate, WithinRhoTimesBaseline) {
  config::GateThresholds t;  // rho 10, floor 4 ulps
  CaseRow row = judge_oracle_case(f32_case(), with_err(5e-6), with_err(1e-6), t);
  EXPECT_TRUE(row.pass) << row.detail;
  EXPECT_DOUBLE_EQ(row.error, 5e-6);
  EXPECT_DOUBLE_EQ(row.limit, 1e-5);
}

TEST(OracleGate, FailsAboveAndReportsBothNumbers) {
  config::GateThresholds t;
  CaseRow row = judge_oracle_case(f32_case(), with_err(3e-4), with_err(1e-6), t);
  EXPECT_FALSE(row.pass);
  EXPECT_EQ(row.detail, "rel_l2_err 0.0003 vs float64 truth > 10 x baseline's 1e-06 = 1e-05 (ratio 300)");
}

CaseResult with_err_and_reference(double rel_l2, double reference) {
  CaseResult r = with_err(rel_l2);
  r.outputs[0].reference_rel_l2_err = reference;
  return r;
}

TEST(OracleGate, TheReferencesOwnErrorAnchorsTheBoundWhereTheWorkerMeasuredIt) {
  config::GateThresholds t;
  // A wrong starter as the baseline (its own error 1e-2) cannot loosen the bound: the
  // candidate, as wrong as it, is held to 10 x the reference's 1e-6.
  CaseRow bad = judge_oracle_case(f32_case(), with_err_and_reference(1e-2, 1e-6), with_err(1e-2), t);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.detail, "rel_l2_err 0.01 vs float64 truth > 10 x the reference's 1e-06 = 1e-05 (ratio 1e+04)");
  // Nor can a baseline more accurate than the reference tighten it.
  CaseRow ok = judge_oracle_case(f32_case(), with_err_and_reference(5e-6, 1e-6), with_err(1e-9), t);
  EXPECT_TRUE(ok.pass) << ok.detail;
  EXPECT_DOUBLE_EQ(ok.limit, 1e-5);
  EXPECT_EQ(ok.detail, "rel_l2_err 5e-06 (reference 1e-06, bound 1e-05, ratio 5)");
  // Not reported (-1, kgate-native): the baseline's error, as before.
  CaseRow native = judge_oracle_case(f32_case(), with_err_and_reference(5e-6, -1), with_err(1e-6), t);
  EXPECT_TRUE(native.pass) << native.detail;
  EXPECT_EQ(native.detail, "rel_l2_err 5e-06 (baseline 1e-06, bound 1e-05, ratio 5)");
}

CaseResult with_compiled(double rel_l2, double reference, double compiled) {
  CaseResult r = with_err_and_reference(rel_l2, reference);
  r.outputs[0].compiled_rel_l2_err = compiled;
  return r;
}

TEST(OracleGate, InDispatchModeTheLargerOfTheReferencesAndTorchCompilesErrorAnchors) {
  config::GateThresholds t;
  // torch.compile's model less accurate than eager: a candidate as accurate as it passes,
  // with both numbers in the row; the baseline (kept kernels swapped in) plays no part.
  CaseRow ok = judge_oracle_case(f32_case(), with_compiled(3e-5, 1e-6, 4e-6), with_err(1), t);
  EXPECT_TRUE(ok.pass) << ok.detail;
  EXPECT_DOUBLE_EQ(ok.limit, 4e-5);
  EXPECT_EQ(ok.detail, "rel_l2_err 3e-05 (torch.compile 4e-06, reference 1e-06, bound 4e-05, ratio 7.5)");
  // The same candidate outside dispatch mode is held to the reference's.
  EXPECT_FALSE(judge_oracle_case(f32_case(), with_err_and_reference(3e-5, 1e-6), with_err(1), t).pass);
  // torch.compile more accurate than eager: the reference's error still anchors.
  CaseRow bad = judge_oracle_case(f32_case(), with_compiled(2e-5, 1e-6, 1e-7), with_err(1), t);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.detail,
            "rel_l2_err 2e-05 vs float64 truth > 10 x the reference's 1e-06 (torch.compile 1e-07) = 1e-05 (ratio 20)");
  // A NaN torch.compile error leaves the reference's anchor.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CaseRow n = judge_oracle_case(f32_case(), with_compiled(5e-6, 1e-6, nan), with_err(1), t);
  EXPECT_TRUE(n.pass) << n.detail;
  EXPECT_DOUBLE_EQ(n.limit, 1e-5);
}

TEST(OracleGate, FloorProtectsAgainstAnExactBaseline) {
  config::GateThresholds t;
  const double eps = 1.1920928955078125e-7;
  // Baseline exact (0): the bound is rho * 4 ulps.
  CaseRow ok = judge_oracle_case(f32_case(), with_err(30 * eps), with_err(0), t);
  EXPECT_TRUE(ok.pass) << ok.detail;
  EXPECT_DOUBLE_EQ(ok.limit, 40 * eps);
  CaseRow bad = judge_oracle_case(f32_case(), with_err(50 * eps), with_err(0), t);
  EXPECT_FALSE(bad.pass);
  EXPECT_NE(bad.detail.find("floor"), std::string::npos) << bad.detail;
}

TEST(OracleGate, NanCandidateFailsNonFiniteBaselineGivesNoBound) {
  config::GateThresholds t;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(judge_oracle_case(f32_case(), with_err(nan), with_err(1e-6), t).pass);
  CaseRow row = judge_oracle_case(f32_case(), with_err(1), with_err(nan), t);
  EXPECT_TRUE(row.pass);
  EXPECT_NE(row.detail.find("no bound"), std::string::npos);
}

TEST(OracleGate, HalfPrecisionFloorIsWider) {
  config::GateThresholds t;
  CorrectnessCase c = f32_case();
  c.check.dtype = "f16";
  // 4 ulps of f16 = 3.9e-3; x10 = 3.9e-2.
  EXPECT_TRUE(judge_oracle_case(c, with_err(3e-2), with_err(1e-4), t).pass);
  EXPECT_FALSE(judge_oracle_case(c, with_err(5e-2), with_err(1e-4), t).pass);
}

}  // namespace
}  // namespace kgate::gates

#include "gates/correctness_gate.h"

#include <gtest/gtest.h>

namespace kgate::gates {
namespace {

using protocol::CaseResult;
using protocol::Json;

CorrectnessCase softmax_case() {
  CorrectnessCase c;
  c.check.case_id = "seed=123456/R=33,C=4097/f16/signed";
  c.check.seed = 123456;
  c.check.dims = {{"R", 33}, {"C", 4097}};
  c.check.dtype = "f16";
  c.check.dist = "signed";
  c.check.atol = 1e-3;
  c.check.rtol = 1e-3;
  c.output_shapes["y"] = {33, 4097};
  return c;
}

// Canned worker answers, as JSON the way kgate-native sends them.
CaseResult result(const std::string& json) { return Json::parse(json).get<CaseResult>(); }

TEST(CorrectnessGate, PassesCleanCase) {
  auto r = result(R"({"case_id":"x","return_code":0,"inputs_modified":false,"deterministic":true,
     "outputs":[{"name":"y","max_abs_err":2e-4,"rel_l2_err":1e-4,"over_tol":0,"worst_index":5,
                 "worst_got":0.1,"worst_want":0.1002}]})");
  CaseRow row = judge_correctness_case(softmax_case(), r);
  EXPECT_TRUE(row.pass) << row.detail;
  EXPECT_DOUBLE_EQ(row.error, 2e-4);
  EXPECT_NEAR(row.limit, 1e-3 + 1e-3 * 0.1002, 1e-12);
}

TEST(CorrectnessGate, AnOutputOfAnotherDtypeThanTheReferencesFails) {
  // Within tolerance, but float64 where the reference returns float32.
  auto r = result(R"({"return_code":0,"deterministic":true,
     "outputs":[{"name":"y","max_abs_err":0,"over_tol":0,"dtype":"f64","reference_dtype":"f32"}]})");
  CaseRow row = judge_correctness_case(softmax_case(), r);
  EXPECT_FALSE(row.pass);
  EXPECT_EQ(row.detail, "output y is f64, the reference's is f32");
  // The same dtype, or one not reported (kgate-native), passes.
  for (const char* j : {R"({"return_code":0,"outputs":[{"name":"y","dtype":"f32","reference_dtype":"f32"}]})",
                        R"({"return_code":0,"outputs":[{"name":"y","dtype":"f64"}]})"})
    EXPECT_TRUE(judge_correctness_case(softmax_case(), result(j)).pass) << j;
}

TEST(CorrectnessGate, OverToleranceNamesCountTotalAndWorstElement) {
  auto r = result(R"({"return_code":0,"deterministic":true,
     "outputs":[{"name":"y","max_abs_err":0.5,"over_tol":1312,"worst_index":4096,
                 "worst_got":0.5,"worst_want":0.0021}]})");
  CaseRow row = judge_correctness_case(softmax_case(), r);
  EXPECT_FALSE(row.pass);
  EXPECT_EQ(row.detail,
            "1312 of 135201 elements over tolerance (worst at [0,4096]: got 0.5, want 0.0021, |err| 0.5 > atol 0.001 "
            "+ rtol 0.001·|want|; max_abs_err 0.5)");
  EXPECT_DOUBLE_EQ(row.error, 0.5);
}

// An element just over tolerance is printed with the digits that tell got from want
// ("got 0.021, want 0.021" read as a false reject).
TEST(CorrectnessGate, TheWorstElementsGotAndWantAreToldApart) {
  auto r = result(R"({"return_code":0,"deterministic":true,
     "outputs":[{"name":"y","max_abs_err":2.1e-05,"over_tol":4,"worst_index":7,"worst_abs_err":2.1e-05,
                 "worst_got":0.021021,"worst_want":0.021}]})");
  const std::string d = judge_correctness_case(softmax_case(), r).detail;
  EXPECT_NE(d.find("got 0.02102, want 0.021, |err| 2.1e-05"), std::string::npos) << d;
  EXPECT_EQ(core::fmt_num_pair(0.5, 0.0021), std::make_pair(std::string("0.5"), std::string("0.0021")));
  EXPECT_EQ(core::fmt_num_pair(1.0 + 1e-12, 1.0), std::make_pair(std::string("1.000000000001"), std::string("1")));
  EXPECT_EQ(core::fmt_num_pair(0.25, 0.25), std::make_pair(std::string("0.25"), std::string("0.25")));
}

// The element named is one over tolerance, with its own error: the largest absolute error
// may belong to a large element that is within its relative tolerance (1.68e+20 against
// 1.68e+20 read as a failure before).
TEST(CorrectnessGate, TheWorstElementNamedIsOneOverTolerance) {
  auto r = result(R"({"return_code":0,"deterministic":true,
     "outputs":[{"name":"y","max_abs_err":4.8e14,"over_tol":3,"worst_index":7,
                 "worst_got":0.5,"worst_want":0.25,"worst_abs_err":0.25}]})");
  CaseRow row = judge_correctness_case(softmax_case(), r);
  EXPECT_FALSE(row.pass);
  EXPECT_NE(row.detail.find("worst at [0,7]: got 0.5, want 0.25, |err| 0.25 > atol 0.001"), std::string::npos)
      << row.detail;
}

// A case the worker could not judge (it does not fit the device) is no verdict: the row is
// marked, not failed; relaxations the worker applied are in the passing row's detail.
TEST(CorrectnessGate, NotJudgedAndNotes) {
  auto r = result(R"({"return_code":0,"cannot_judge":"the float64 truth (14.0 GiB) fits neither device nor host",
                      "outputs":[]})");
  CaseRow row = judge_correctness_case(softmax_case(), r);
  EXPECT_TRUE(row.pass);
  EXPECT_TRUE(row.not_judged);
  EXPECT_EQ(row.detail, "not judged: the float64 truth (14.0 GiB) fits neither device nor host");
  auto n = result(R"j({"outputs":[{"name":"y","max_abs_err":1e-4}],
                      "notes":["repeats differ within the reference's own spread (1.4e-07)"]})j");
  CaseRow ok = judge_correctness_case(softmax_case(), n);
  EXPECT_TRUE(ok.pass);
  EXPECT_NE(ok.detail.find("; repeats differ within the reference's own spread"), std::string::npos) << ok.detail;
}

TEST(CorrectnessGate, RulesInOrder) {
  auto c = softmax_case();
  auto judge = [&](const std::string& j) { return judge_correctness_case(c, result(j)).detail; };
  EXPECT_EQ(judge(R"({"return_code":3,"outputs":[{"name":"y","unwritten":5}]})"), "kgate_run returned 3");
  EXPECT_NE(judge(R"({"outputs":[{"name":"y","shape_ok":false}]})").find("wrong shape"), std::string::npos);
  // Unwritten elements are also NaN and over tolerance: the unwritten rule explains them.
  EXPECT_EQ(judge(R"({"outputs":[{"name":"y","unwritten":3,"nan":3,"over_tol":3}]})"),
            "3 of 135201 elements never written (still hold the poison value)");
  EXPECT_NE(judge(R"({"outputs":[{"name":"y","nan":7,"over_tol":7,"worst_index":0}]})")
                .find("7 NaN of 135201 elements where the float64 truth is finite"),
            std::string::npos);
  EXPECT_NE(judge(R"({"outputs":[{"name":"y","inf":2}]})").find("2 Inf"), std::string::npos);
  // The first non-finite element is named by its value, not by the 0 the worker sends in
  // its place (JSON has no NaN).
  EXPECT_NE(judge(R"({"outputs":[{"name":"y","nan":1,"worst_index":5,"worst_got":0,"worst_want":0.25,"worst_kind":"nan"}]})")
                .find("(first at [0,5]: got NaN, want 0.25)"),
            std::string::npos)
      << judge(R"({"outputs":[{"name":"y","nan":1,"worst_index":5,"worst_got":0,"worst_want":0.25,"worst_kind":"nan"}]})");
  EXPECT_NE(judge(R"({"outputs":[{"name":"y","inf":1,"worst_index":0,"worst_kind":"-inf"}]})").find("got -Inf"),
            std::string::npos);
  // A write past a buffer's end comes first: it explains the rest.
  EXPECT_EQ(judge(R"({"out_of_bounds":"output 'y': 4 of the 4096 guard bytes after its end changed","outputs":[{"name":"y","nan":3,"over_tol":3}]})"),
            "out-of-bounds write: output 'y': 4 of the 4096 guard bytes after its end changed");
  EXPECT_NE(judge(R"({"inputs_modified":true,"outputs":[{"name":"y"}]})").find("modified its inputs"),
            std::string::npos);
  EXPECT_NE(judge(R"({"deterministic":false,"outputs":[{"name":"y"}]})").find("not bitwise identical"),
            std::string::npos);
  EXPECT_NE(judge(R"({"outputs":[]})").find("no outputs"), std::string::npos);
}

TEST(CorrectnessGate, MultipleOutputsNameTheFailingOne) {
  auto c = softmax_case();
  c.output_shapes["mean"] = {33};
  auto r = result(R"({"outputs":[{"name":"y"},{"name":"mean","over_tol":1,"max_abs_err":1,"worst_index":2}]})");
  CaseRow row = judge_correctness_case(c, r);
  EXPECT_FALSE(row.pass);
  EXPECT_NE(row.detail.find("1 of 33 elements of output mean over tolerance"), std::string::npos) << row.detail;
  EXPECT_NE(row.detail.find("worst at [2]"), std::string::npos) << row.detail;
}

TEST(CorrectnessGate, AnOutputShapeTheWorkerReportsNamesTheElement) {
  // A KernelBench case plans no output shapes: the worker's reported shape places the
  // flat index (a NaN at y[0,0] of a 4x8 output is "[0,0]", not "[0]").
  auto c = softmax_case();
  c.output_shapes.clear();
  auto r = result(R"({"outputs":[{"name":"output0","nan":1,"worst_index":9,"worst_want":0.5,"worst_kind":"nan","shape":[4,8]}]})");
  CaseRow row = judge_correctness_case(c, r);
  EXPECT_EQ(row.detail, "1 NaN of 32 elements where the float64 truth is finite (first at [1,1]: got NaN, want 0.5)");
  // Without one (kgate-native sends none) the index stays flat, with no total.
  r = result(R"({"outputs":[{"name":"output0","over_tol":2,"max_abs_err":1,"worst_index":9}]})");
  EXPECT_NE(judge_correctness_case(c, r).detail.find("2 elements over tolerance (worst at [9]"), std::string::npos);
}

TEST(CorrectnessGate, FormatIndex) {
  EXPECT_EQ(format_index(16384, {8, 4096}), "[4,0]");
  EXPECT_EQ(format_index(5, {2, 3, 4}), "[0,1,1]");
  EXPECT_EQ(format_index(7, {}), "[7]");
  EXPECT_EQ(format_index(-1, {3}), "[?]");
}

}  // namespace
}  // namespace kgate::gates

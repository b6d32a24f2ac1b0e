// The gate matrix on the CUDA backend, end to end through kgate-native on a GPU: each
// fixture under tests/fixtures/candidates/softmax_cuda fails the right gate with the right
// reason, and a hang or a sticky device fault never affects the next candidate. The same
// matrix runs on the host backend in CI (tests/unit/gates_evaluator_test.cpp).
#include <gtest/gtest.h>

#include <optional>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cuda_fixture.h"
#include "gates/evaluator.h"
#include "../verdict_expect.h"

namespace kgate::gpu_test {
namespace {

namespace fs = std::filesystem;
using gates::CandidateVerdict;
using gates::Evaluator;
using gates::Fault;
using gates::Gate;
using gates::GateStatus;
using test::gate;
using test::reason;

std::string dir() { return source_dir() + "/tests/fixtures/candidates/softmax_cuda/"; }

config::NativeProblem problem() {
  config::NativeProblem p;
  p.id = "softmax_gates_cuda";
  p.op = "softmax";
  p.bench = {{"R", 8192}, {"C", 8192}};
  p.sweep = {{{"R", 4}, {"C", 32}}, {{"R", 7}, {"C", 33}}, {{"R", 16}, {"C", 100}}};
  p.dtypes = {DType::kF32, DType::kF16};
  p.bench_dtype = DType::kF32;
  p.starters["cuda"] = dir() + "ok.cu";
  return p;
}

gates::EvalOptions options() {
  gates::EvalOptions o;
  o.backend = "cuda";
  o.seed = 20261129;
  o.request_timeout_s = 10;   // a hang costs this much
  o.compile_timeout_s = 300;  // nvcc
  o.cache_dir = cache_dir();
  o.measurement.min_time_s = 0.2;
  o.measurement.max_time_s = 1.0;
  return o;
}

class CudaGates : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();  // skips (or fails with KGATE_REQUIRE_GPU=1) without a GPU
    if (IsSkipped() || HasFatalFailure()) return;
    if (ev_ == nullptr) ev_ = new Evaluator(problem(), options());
  }
  static void TearDownTestSuite() {
    delete ev_;
    ev_ = nullptr;
  }
  static CandidateVerdict eval(const std::string& name) { return ev_->evaluate(dir() + name, {}, ""); }
  static void expect_fails(const CandidateVerdict& v, Gate g, const std::string& needle) {
    test::expect_fails(v, g, needle);
    std::printf("gate matrix: %s -> %s\n", nlohmann::json(g).get<std::string>().c_str(),
                reason(v).substr(0, 160).c_str());
  }
  static Evaluator* ev_;
};
Evaluator* CudaGates::ev_ = nullptr;

TEST_F(CudaGates, OkPassesEveryGate) {
  CandidateVerdict v = eval("ok.cu");
  ASSERT_TRUE(v.passed) << reason(v);
  for (const auto& g : v.gates) EXPECT_EQ(g.status, GateStatus::kPass) << nlohmann::json(g).dump();
  ASSERT_TRUE(v.timing.has_value());
  EXPECT_LT(v.timing->pct_roofline, 1.0);
}

TEST_F(CudaGates, CompileErrorFailsStaticWithNvccsMessage) {
  expect_fails(eval("compile_error.cu"), Gate::kStatic, "undeclared_helper");
}

TEST_F(CudaGates, WrongMaskFailsOnANonPowerOfTwoWidth) {
  CandidateVerdict v = eval("wrong_mask.cu");
  expect_fails(v, Gate::kCorrectness, "elements over tolerance");
  EXPECT_NE(gate(v, Gate::kCorrectness).failed_case.find("R=7,C=33/"), std::string::npos)
      << gate(v, Gate::kCorrectness).failed_case;
}

TEST_F(CudaGates, NanOnAdversarialInputs) {
  CandidateVerdict v = eval("nan_adversarial.cu");
  expect_fails(v, Gate::kCorrectness, "where the float64 truth is finite");
  EXPECT_NE(gate(v, Gate::kCorrectness).failed_case.find("/large"), std::string::npos)
      << gate(v, Gate::kCorrectness).failed_case;
}

TEST_F(CudaGates, Nondeterministic) {
  expect_fails(eval("nondeterministic.cu"), Gate::kCorrectness, "not bitwise identical");
}

TEST_F(CudaGates, MutatesInput) {
  expect_fails(eval("mutates_input.cu"), Gate::kCorrectness, "modified its inputs");
}

TEST_F(CudaGates, Unwritten) {
  expect_fails(eval("unwritten.cu"), Gate::kCorrectness, "3 of 128 elements never written");
}

TEST_F(CudaGates, TooFastDoesLessWork) {
  // Caught by the audit of the timed calls (its outputs never written while timed) or,
  // where that round was not drawn, by the roofline floor.
  CandidateVerdict v = eval("too_fast.cu");
  EXPECT_EQ(v.failed_gate, std::optional<Gate>(Gate::kPerformance)) << reason(v);
  EXPECT_TRUE(reason(v).find("timed calls: ") != std::string::npos ||
              reason(v).find("does less work than the problem requires") != std::string::npos)
      << reason(v);
  EXPECT_EQ(gate(v, Gate::kCorrectness).status, GateStatus::kPass);
}

TEST_F(CudaGates, InfiniteLoopTimesOutAndTheNextCandidatePasses) {
  CandidateVerdict v = eval("infinite_loop.cu");
  expect_fails(v, Gate::kCorrectness, "timeout");
  EXPECT_EQ(gate(v, Gate::kCorrectness).fault, Fault::kTimeout);
  CandidateVerdict next = eval("ok.cu");
  EXPECT_TRUE(next.passed) << reason(next);
}

TEST_F(CudaGates, IllegalAddressIsADeviceFaultAndTheNextCandidatePasses) {
  CandidateVerdict v = eval("illegal_address.cu");
  expect_fails(v, Gate::kCorrectness, "device fault");
  EXPECT_NE(gate(v, Gate::kCorrectness).fault, Fault::kNone);
  CandidateVerdict next = eval("ok.cu");
  EXPECT_TRUE(next.passed) << reason(next);
}

}  // namespace
}  // namespace kgate::gpu_test

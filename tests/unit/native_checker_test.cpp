#include "native/checker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "native/host_backend.h"
#include "../backend_memory_expect.h"
#include "native_fixture_match.h"

namespace kgate::native {
namespace {
namespace fs = std::filesystem;

// Every element of a host tensor set to its dtype's poison, as the checker poisons outputs.
void fill_poison(ops::HostTensor& t) {
  HostBackend().fill(t.bytes.data(), poison_pattern(t.dtype), t.bytes.size());
}

ops::HostTensor vec(DType dt, std::vector<double> v) {
  auto t = ops::HostTensor::make(dt, {static_cast<int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

TEST(NativeCompareOutput, ExactMatchHasNoError) {
  auto want = vec(DType::kF64, {1, 2, 3});
  auto got = vec(DType::kF32, {1, 2, 3});
  auto e = compare_output("y", got, want, 0, 0);
  EXPECT_EQ(e.over_tol, 0);
  EXPECT_EQ(e.max_abs_err, 0);
  EXPECT_EQ(e.rel_l2_err, 0);
  EXPECT_EQ(e.unwritten, 0);
  EXPECT_EQ(e.worst_kind, "finite");
}

TEST(NativeCompareOutput, CountsErrorsAgainstTolerance) {
  auto want = vec(DType::kF64, {1, 2, 4, 0});
  auto got = vec(DType::kF64, {1.001, 2, 4.5, 0});
  auto e = compare_output("y", got, want, 0.01, 0.0);
  EXPECT_EQ(e.over_tol, 1);
  EXPECT_DOUBLE_EQ(e.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(e.max_rel_err, 0.125);
  EXPECT_EQ(e.worst_index, 2);
  EXPECT_DOUBLE_EQ(e.worst_got, 4.5);
  EXPECT_DOUBLE_EQ(e.worst_want, 4);
  EXPECT_NEAR(e.rel_l2_err, std::sqrt(0.001 * 0.001 + 0.25) / std::sqrt(21.0), 1e-12);
  // rtol scales with |want|: 0.5 <= 0.2 * 4 passes.
  EXPECT_EQ(compare_output("y", got, want, 0, 0.2).over_tol, 0);
}

// Large outputs are compared in chunks on several threads; the merge must pick what one
// pass over the elements picks (first non-finite element, else the largest error, the
// earliest on ties) and count everything once, whatever the thread count.
TEST(NativeCompareOutput, ChunkedCompareMatchesOnePassAtAnyThreadCount) {
  const int64_t n = (int64_t{1} << 16) * 9 + 123;  // 10 chunks, the last one partial
  auto want = ops::HostTensor::make(DType::kF64, {n});
  auto got = ops::HostTensor::make(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i) {
    want.set(i, 1.0 + static_cast<double>(i % 97));
    got.set(i, want.get(i));
  }
  got.set(70000, want.get(70000) + 0.5);   // chunk 1
  got.set(400000, want.get(400000) + 0.5); // chunk 6: same error, later -> not the worst
  got.set(540000, want.get(540000) - 0.25);
  auto run = [&](int threads) {
    ops::set_input_threads(threads);
    auto e = compare_output("y", got, want, 0.1, 0);
    ops::set_input_threads(0);
    return e;
  };
  for (int threads : {1, 3, 8}) {
    auto e = run(threads);
    EXPECT_EQ(e.over_tol, 3) << threads;
    EXPECT_EQ(e.worst_index, 70000) << threads;
    EXPECT_EQ(e.worst_kind, "finite");
    EXPECT_DOUBLE_EQ(e.max_abs_err, 0.5);
    EXPECT_EQ(e.rel_l2_err, run(1).rel_l2_err) << "bitwise the same at " << threads;
  }
  // A non-finite element in a later chunk outranks every finite error; the first one wins.
  got.set(500000, std::numeric_limits<double>::infinity());
  got.set(560000, std::numeric_limits<double>::quiet_NaN());
  for (int threads : {1, 4}) {
    auto e = run(threads);
    EXPECT_EQ(e.worst_index, 500000) << threads;
    EXPECT_EQ(e.worst_kind, "inf");
    EXPECT_EQ(e.inf, 1);
    EXPECT_EQ(e.nan, 1);
    EXPECT_EQ(e.over_tol, 5);
  }
}

TEST(NativeCompareOutput, PoisonCountsAsUnwrittenNotNan) {
  auto want = vec(DType::kF64, {1, 2, 3});
  auto got = vec(DType::kF32, {1, 2, 3});
  fill_poison(got);
  got.set(0, 1);
  // A candidate-made NaN (not the poison payload) is a NaN.
  float qnan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(got.bytes.data() + 4, &qnan, 4);
  auto e = compare_output("y", got, want, 1e-3, 1e-3);
  EXPECT_EQ(e.unwritten, 1);
  EXPECT_EQ(e.nan, 1);
  EXPECT_EQ(e.over_tol, 2);
  EXPECT_EQ(e.worst_index, 1);
  EXPECT_EQ(e.worst_kind, "nan");
  EXPECT_EQ(e.worst_got, 0);
}

TEST(NativeCompareOutput, PoisonPatternsAreNanForEveryFloatDtype) {
  for (DType d : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    auto t = ops::HostTensor::make(d, {2});
    fill_poison(t);
    EXPECT_TRUE(std::isnan(t.get(0))) << to_string(d);
    EXPECT_TRUE(std::isnan(t.get(1))) << to_string(d);
  }
  auto i = ops::HostTensor::make(DType::kI32, {1});
  fill_poison(i);
  EXPECT_EQ(i.get(0), static_cast<double>(static_cast<int32_t>(0xDEADBEEFu)));
}

TEST(NativeCompareOutput, InfAndNonFiniteTruth) {
  auto want = vec(DType::kF64, {1, std::numeric_limits<double>::infinity(), 3});
  auto got = vec(DType::kF64, {-std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::infinity(), 3});
  auto e = compare_output("y", got, want, 0, 0);
  EXPECT_EQ(e.inf, 1);
  EXPECT_EQ(e.truth_nonfinite, 1);
  EXPECT_EQ(e.over_tol, 1);
  EXPECT_EQ(e.worst_kind, "-inf");
}

// ---- whole cases on the host backend, softmax ----------------------------------------

class NativeChecker : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = testing::make_temp_dir("chk");
    op_ = ops::find_op("softmax");
    ASSERT_NE(op_, nullptr);
    c_.case_id = "t";
    c_.seed = 7;
    c_.dims = {{"R", 5}, {"C", 67}};
    c_.dtype = "f32";
    c_.dist = "normal";
    c_.repeats = 3;
    c_.atol = 1e-6;
    c_.rtol = 1e-5;
  }
  void TearDown() override { fs::remove_all(cache_); }
  protocol::CaseResult check(const std::string& file) { return check_on(backend_, file); }
  protocol::CaseResult check_on(Backend& b, const std::string& file) {
    std::shared_ptr<Module> m;
    auto r = b.compile(std::string(KGATE_TEST_DATA) + "/candidates/runner/" + file, {},
                       cache_, &m);
    EXPECT_TRUE(r.compiled) << r.log;
    if (!m) return {};
    auto data = make_case_data(*op_, nullptr, c_);
    return check_case(b, *m, *op_, c_, data);
  }
  HostBackend backend_;
  std::string cache_;
  const ops::Op* op_ = nullptr;
  protocol::CheckCase c_;
};

TEST_F(NativeChecker, CorrectCandidatePasses) {
  auto r = check("softmax_ok.cpp");
  ASSERT_EQ(r.outputs.size(), 1u);
  const auto& y = r.outputs[0];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.over_tol, 0);
  EXPECT_EQ(y.unwritten, 0);
  EXPECT_EQ(y.nan, 0);
  EXPECT_LT(y.rel_l2_err, 1e-6);
  EXPECT_GT(y.rel_l2_err, 0);  // f32 rounding is visible against the f64 truth
  EXPECT_EQ(r.return_code, 0);
  EXPECT_FALSE(r.inputs_modified);
  EXPECT_TRUE(r.deterministic);
  EXPECT_EQ(r.case_id, "t");
}

TEST_F(NativeChecker, WrongValuesAreOverTolerance) {
  c_.atol = 0;  // tiny probabilities are 1% off too
  auto r = check("softmax_wrong.cpp");
  EXPECT_EQ(r.outputs[0].over_tol, 5 * 67);
  EXPECT_NEAR(r.outputs[0].rel_l2_err, 0.01, 1e-4);
  EXPECT_NEAR(r.outputs[0].max_rel_err, 0.01, 1e-4);
}

TEST_F(NativeChecker, UnwrittenElementsAreCounted) {
  auto r = check("softmax_unwritten.cpp");
  EXPECT_EQ(r.outputs[0].unwritten, 5);
  EXPECT_EQ(r.outputs[0].nan, 0);
  EXPECT_EQ(r.outputs[0].over_tol, 5);
  EXPECT_EQ(r.outputs[0].worst_kind, "unwritten");
  EXPECT_EQ(r.outputs[0].worst_index, 66);
}

TEST_F(NativeChecker, InputMutationIsDetected) {
  auto r = check("softmax_mutates_input.cpp");
  EXPECT_TRUE(r.inputs_modified);
  EXPECT_EQ(r.outputs[0].over_tol, 0);
}

TEST_F(NativeChecker, NondeterminismIsDetected) {
  auto r = check("softmax_nondeterministic.cpp");
  EXPECT_FALSE(r.deterministic);
  EXPECT_GE(r.outputs[0].over_tol, 1);
}

TEST_F(NativeChecker, NonZeroReturnIsReported) {
  auto r = check("softmax_return_code.cpp");
  EXPECT_EQ(r.return_code, 7);
}

TEST_F(NativeChecker, HalfPrecisionCandidateWithinLooseTolerance) {
  c_.dtype = "f16";
  c_.atol = 1e-3;
  c_.rtol = 1e-2;
  auto r = check("softmax_ok.cpp");
  EXPECT_EQ(r.outputs[0].over_tol, 0);
  EXPECT_GT(r.outputs[0].rel_l2_err, 1e-5);  // f16 rounding
}

// Host memory through the Backend defaults only (what a backend without its own fill,
// copy and equal gets); and one counting the bytes that cross the "bus".
using testing::StagedHostBackend;

class CountingHostBackend : public HostBackend {
 public:
  void to_device(void* d, const void* s, std::size_t n) override {
    up += n;
    HostBackend::to_device(d, s, n);
  }
  void to_host(void* d, const void* s, std::size_t n) override {
    down += n;
    HostBackend::to_host(d, s, n);
  }
  std::size_t up = 0, down = 0;
};

TEST_F(NativeChecker, StagedDefaultsGiveTheSameVerdicts) {
  StagedHostBackend staged;
  for (const char* f : {"softmax_ok.cpp", "softmax_unwritten.cpp", "softmax_mutates_input.cpp",
                        "softmax_nondeterministic.cpp"}) {
    auto want = check(f);
    auto got = check_on(staged, f);
    ASSERT_EQ(got.outputs.size(), 1u) << f;
    EXPECT_EQ(got.outputs[0].over_tol, want.outputs[0].over_tol) << f;
    EXPECT_EQ(got.outputs[0].unwritten, want.outputs[0].unwritten) << f;
    EXPECT_EQ(got.inputs_modified, want.inputs_modified) << f;
    EXPECT_EQ(got.deterministic, want.deterministic) << f;
  }
}

TEST_F(NativeChecker, EachTensorCrossesTheBusOncePerCase) {
  // softmax f32 5x67: 1340 bytes in, 1340 out. Three repeats, but the inputs go up once
  // and the outputs come down once; the pristine inputs come back once to be verified.
  const std::size_t bytes = 5 * 67 * 4;
  CountingHostBackend counting;
  auto r = check_on(counting, "softmax_ok.cpp");
  EXPECT_EQ(r.outputs[0].over_tol, 0);
  EXPECT_EQ(counting.up, bytes);
  EXPECT_EQ(counting.down, 2 * bytes);
  // A repeat that differs from the first is brought back to be compared.
  CountingHostBackend noisy;
  r = check_on(noisy, "softmax_nondeterministic.cpp");
  EXPECT_FALSE(r.deterministic);
  EXPECT_GT(noisy.down, 2 * bytes);
}

TEST_F(NativeChecker, BadCasesAreRejected) {
  c_.dtype = "f8";
  EXPECT_THROW(make_case_data(*op_, nullptr, c_), BadCase);
  c_.dtype = "f32";
  c_.dist = "cauchy";
  EXPECT_THROW(make_case_data(*op_, nullptr, c_), BadCase);
  c_.dist = "normal";
  c_.dims = {{"R", 5}};
  EXPECT_THROW(make_case_data(*op_, nullptr, c_), BadCase);
}

}  // namespace
}  // namespace kgate::native

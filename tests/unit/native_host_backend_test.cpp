#include "native/host_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "native_fixture_match.h"

namespace kgate::native {
namespace {
namespace fs = std::filesystem;

std::string candidate(const std::string& name) {
  return std::string(KGATE_TEST_DATA) + "/candidates/runner/" + name;
}

kgate_tensor matrix(std::vector<float>& v, int64_t rows, int64_t cols) {
  kgate_tensor t{};
  t.data = v.data();
  t.dtype = KGATE_F32;
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class NativeHostBackend : public ::testing::Test {
 protected:
  void SetUp() override { cache_ = testing::make_temp_dir("hb"); }
  void TearDown() override { fs::remove_all(cache_); }
  std::shared_ptr<Module> compile_ok(const std::string& name, std::map<std::string, std::string> d = {}) {
    std::shared_ptr<Module> m;
    auto r = backend_.compile(candidate(name), d, cache_, &m);
    EXPECT_TRUE(r.compiled) << r.log;
    return m;
  }
  HostBackend backend_;
  std::string cache_;
};

// Timing outputs are cleared in backend memory, not staged from the host; the default
// (upload zeros a chunk at a time) and the host backend's own agree, across chunk edges.
TEST_F(NativeHostBackend, ZeroClearsBackendMemory) {
  const std::size_t n = (std::size_t{64} << 20) + 3;
  auto* p = static_cast<unsigned char*>(backend_.alloc(n));
  for (bool base : {false, true}) {
    std::fill(p, p + n, 0xAB);
    if (base) backend_.Backend::zero(p, n);
    else backend_.zero(p, n);
    EXPECT_EQ(std::count(p, p + n, 0), static_cast<std::ptrdiff_t>(n)) << (base ? "default" : "host");
  }
  backend_.release(p);
}

TEST_F(NativeHostBackend, CompilesRunsAndCaches) {
  std::shared_ptr<Module> m;
  auto r = backend_.compile(candidate("softmax_ok.cpp"), {}, cache_, &m);
  ASSERT_TRUE(r.compiled) << r.log;
  EXPECT_FALSE(r.cache_hit);
  ASSERT_TRUE(m);
  std::vector<float> x = {0, 0, 1, 1}, y(4, -1);
  std::vector<kgate_tensor> in = {matrix(x, 2, 2)}, out = {matrix(y, 2, 2)};
  EXPECT_EQ(backend_.run(*m, in, out), 0);
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[3], 0.5f);

  std::shared_ptr<Module> again;
  auto r2 = backend_.compile(candidate("softmax_ok.cpp"), {}, cache_, &again);
  EXPECT_TRUE(r2.compiled);
  EXPECT_TRUE(r2.cache_hit);
}

TEST_F(NativeHostBackend, DefinesReachTheCandidate) {
  auto m = compile_ok("softmax_tuned.cpp", {{"SCALE", "3"}});
  ASSERT_TRUE(m);
  std::vector<float> x = {0, 0}, y(2, 0);
  std::vector<kgate_tensor> in = {matrix(x, 1, 2)}, out = {matrix(y, 1, 2)};
  ASSERT_EQ(backend_.run(*m, in, out), 0);
  EXPECT_FLOAT_EQ(y[0], 1.5f);
}

TEST_F(NativeHostBackend, CompileErrorIsDataWithTheLog) {
  std::shared_ptr<Module> m;
  auto r = backend_.compile(candidate("broken_syntax.cpp"), {}, cache_, &m);
  EXPECT_FALSE(r.compiled);
  EXPECT_FALSE(m);
  EXPECT_NE(r.log.find("broken_syntax.cpp:6"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("undefined_name_in_candidate"), std::string::npos) << r.log;
}

TEST_F(NativeHostBackend, MissingEntryPointIsACompileFailure) {
  std::shared_ptr<Module> m;
  auto r = backend_.compile(candidate("no_entry.cpp"), {}, cache_, &m);
  EXPECT_FALSE(r.compiled);
  EXPECT_FALSE(m);
  EXPECT_NE(r.log.find("does not export `kgate_run`"), std::string::npos) << r.log;
}

TEST_F(NativeHostBackend, DeviceInfoDescribesTheHost) {
  auto d = backend_.device_info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.sm_count, 1);
  EXPECT_GT(d.memory_bytes, 0);
  EXPECT_GT(d.copy_bandwidth_gbps, 0.1);
  EXPECT_EQ(d.cc, "");
}

TEST_F(NativeHostBackend, TimeInterleavesSlotsAndOrdersBySize) {
  auto m = compile_ok("softmax_ok.cpp");
  ASSERT_TRUE(m);
  // Same kernel, 1024x more work in the "big" slot: its median must come out larger.
  std::vector<float> xs(64, 0.5f), ys(64), xb(65536, 0.5f), yb(65536);
  TimedCall small{"small", m.get(), {{matrix(xs, 1, 64)}}, {{matrix(ys, 1, 64)}}};
  TimedCall big{"big", m.get(), {{matrix(xb, 64, 1024)}}, {{matrix(yb, 64, 1024)}}};
  std::vector<TimedCall> calls = {small, big};
  protocol::TimeParams p;
  p.warmup_s = 0.001;
  p.min_time_s = 0.01;
  p.max_time_s = 2;
  p.min_samples = 10;
  p.max_samples = 60;
  p.target_rse = 10;  // any spread converges once the minimums are met
  auto r = backend_.time(calls, p, nullptr);
  ASSERT_EQ(r.samples_us.size(), 2u);
  ASSERT_GE(r.samples_us["small"].size(), 10u);
  EXPECT_EQ(r.samples_us["small"].size(), r.samples_us["big"].size());
  EXPECT_EQ(r.stop_reason, "converged");
  EXPECT_EQ(r.timer, "steady_clock");
  EXPECT_GT(median(r.samples_us["big"]), 10 * median(r.samples_us["small"]));
  EXPECT_GT(r.elapsed_s, 0);
}

TEST_F(NativeHostBackend, TimeStopsAtMaxSamplesWhenNeverConverged) {
  auto m = compile_ok("softmax_ok.cpp");
  ASSERT_TRUE(m);
  std::vector<float> x(256, 0.5f), y(256);
  TimedCall a{"candidate", m.get(), {{matrix(x, 4, 64)}, {matrix(x, 4, 64)}}, {{matrix(y, 4, 64)}, {matrix(y, 4, 64)}}};
  std::vector<TimedCall> calls = {a, a};
  calls[1].slot = "baseline";
  protocol::TimeParams p;
  p.warmup_s = 0;
  p.min_time_s = 0;
  p.max_time_s = 10;
  p.min_samples = 5;
  p.max_samples = 25;
  p.target_rse = 0;  // unreachable with real noise unless samples are identical
  auto r = backend_.time(calls, p, nullptr);
  EXPECT_EQ(r.samples_us["candidate"].size(), r.samples_us["baseline"].size());
  if (r.stop_reason == "max_samples") {
    EXPECT_EQ(r.samples_us["candidate"].size(), 25u);
  } else {
    // A quantised timer can read the median's window as exact (RSE 0) before the cap: the
    // rule then stops on one of its convergence checks, past the sample floor.
    EXPECT_EQ(r.stop_reason, "converged");
    EXPECT_GE(r.samples_us["candidate"].size(), 5u);
    EXPECT_LT(r.samples_us["candidate"].size(), 25u);
  }
}

TEST_F(NativeHostBackend, TimeStopsAtMaxTime) {
  auto m = compile_ok("softmax_ok.cpp");
  ASSERT_TRUE(m);
  std::vector<float> x(256, 0.5f), y(256);
  TimedCall a{"candidate", m.get(), {{matrix(x, 4, 64)}}, {{matrix(y, 4, 64)}}};
  std::vector<TimedCall> calls = {a};
  protocol::TimeParams p;
  p.warmup_s = 0;
  p.min_time_s = 0;
  p.max_time_s = 0.05;
  p.min_samples = 1000000;
  p.max_samples = 100000000;
  auto r = backend_.time(calls, p, nullptr);
  EXPECT_EQ(r.stop_reason, "max_time");
  EXPECT_LT(r.elapsed_s, 2.0);
  EXPECT_FALSE(r.samples_us["candidate"].empty());
}

}  // namespace
}  // namespace kgate::native

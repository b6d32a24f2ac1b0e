// The CUDA backend on a real GPU: device info, compile cache, run, faults, and the timer
// (A/A stability, CUDA-graph batching, side-stream detection). Label gpu; H200 only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <regex>

#include "../backend_memory_expect.h"
#include "cuda_fixture.h"
#include "stats/descriptive.h"

namespace kgate::gpu_test {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// An f32 softmax problem of R x C on the device, with `sets` input/output sets.
struct SoftmaxData {
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  std::vector<std::vector<kgate_tensor>> ins, outs;
  SoftmaxData(native::Backend* b, int64_t R, int64_t C, int sets, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd;
    std::vector<float> host(static_cast<std::size_t>(R * C));
    for (int s = 0; s < sets; ++s) {
      for (float& v : host) v = nd(rng);
      auto x = std::make_unique<DeviceBuffer>(b, host.size() * 4);
      x->upload(host.data());
      auto y = std::make_unique<DeviceBuffer>(b, host.size() * 4);
      ins.push_back({describe(x->get(), KGATE_F32, {R, C})});
      outs.push_back({describe(y->get(), KGATE_F32, {R, C})});
      bufs.push_back(std::move(x));
      bufs.push_back(std::move(y));
    }
  }
};

protocol::TimeParams quick_params() {
  protocol::TimeParams p;
  p.warmup_s = 0.05;
  p.min_time_s = 0.3;
  p.max_time_s = 3.0;
  p.min_samples = 30;
  p.max_samples = 3000;
  p.target_rse = 0.005;
  return p;
}

TEST_F(CudaTest, DeviceInfoIsSane) {
  protocol::DeviceInfo d = b_->device_info();
  std::printf("device: %s cc %s, %d SMs, L2 %lld B, %lld B, %d MHz, driver %s, copy %.0f GB/s\n",
              d.name.c_str(), d.cc.c_str(), d.sm_count, static_cast<long long>(d.l2_bytes),
              static_cast<long long>(d.memory_bytes), d.clock_mhz, d.driver.c_str(), d.copy_bandwidth_gbps);
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(std::regex_match(d.cc, std::regex(R"(\d+\.\d+)"))) << d.cc;
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 1 << 20);
  EXPECT_GT(d.memory_bytes, int64_t{1} << 30);
  EXPECT_GT(d.clock_mhz, 500);
  EXPECT_FALSE(d.driver.empty());
  // Any current data-centre GPU copies at 0.5..20 TB/s (read + write); an H200 ~4.2.
  EXPECT_GT(d.copy_bandwidth_gbps, 500);
  EXPECT_LT(d.copy_bandwidth_gbps, 20000);
  if (d.name.find("H200") != std::string::npos) {
    EXPECT_EQ(d.cc, "9.0");
    EXPECT_GT(d.copy_bandwidth_gbps, 3000);
  }
}

TEST_F(CudaTest, MemoryPrimitivesOnTheDevice) {
  // memsets for 1/2/4/8-byte poison, device copies, the NVRTC compare kernel (16-byte
  // body, byte tail) -- and a GPU-sized range.
  testing::expect_memory_primitives(*b_);
  testing::expect_copy_and_equal(*b_, (std::size_t{256} << 20) + 7);
}

TEST_F(CudaTest, CompileCachesByContentAndReportsErrors) {
  std::map<std::string, std::string> defs{{"BLOCK", "128"}};
  std::shared_ptr<native::Module> m1, m2;
  // A private cache so the first build is a miss.
  std::string dir = cache_dir() + "/compile-test-" + std::to_string(::getpid());
  protocol::CompileResult r1 = b_->compile(starter("softmax"), defs, dir, &m1);
  ASSERT_TRUE(r1.compiled) << r1.log;
  EXPECT_FALSE(r1.cache_hit);
  EXPECT_GT(r1.compile_ms, 0);
  protocol::CompileResult r2 = b_->compile(starter("softmax"), defs, dir, &m2);
  ASSERT_TRUE(r2.compiled) << r2.log;
  EXPECT_TRUE(r2.cache_hit);
  EXPECT_LT(r2.compile_ms, r1.compile_ms);
  // Other defines are another binary.
  protocol::CompileResult r3 = b_->compile(starter("softmax"), {{"BLOCK", "512"}}, dir, &m2);
  ASSERT_TRUE(r3.compiled) << r3.log;
  EXPECT_FALSE(r3.cache_hit);

  std::shared_ptr<native::Module> bad;
  protocol::CompileResult e = b_->compile(fixture("compile_error"), {}, dir, &bad);
  EXPECT_FALSE(e.compiled);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(e.log.find("kgate_no_such_symbol"), std::string::npos) << e.log;
  protocol::CompileResult n = b_->compile(fixture("no_entry"), {}, dir, &bad);
  EXPECT_FALSE(n.compiled);
  EXPECT_NE(n.log.find("kgate_run"), std::string::npos) << n.log;
  protocol::CompileResult d = b_->compile(starter("softmax"), {{"BAD NAME", "1"}}, dir, &bad);
  EXPECT_FALSE(d.compiled);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_F(CudaTest, NonStickyLaunchErrorIsAReturnCode) {
  auto m = compile(fixture("bad_launch"));
  ASSERT_NE(m, nullptr);
  DeviceBuffer y(b_, 4);
  std::vector<kgate_tensor> ins, outs{describe(y.get(), KGATE_F32, {1})};
  EXPECT_EQ(b_->run(*m, ins, outs), 7);
  // The context is still usable.
  auto ok = compile(starter("reduce_sum"));
  ASSERT_NE(ok, nullptr);
  SoftmaxData data(b_, 4, 64, 1);
  DeviceBuffer r(b_, 4 * 4);
  std::vector<kgate_tensor> o{describe(r.get(), KGATE_F32, {4})};
  EXPECT_EQ(b_->run(*ok, data.ins[0], o), 0);
}

TEST_F(CudaTest, StickyFaultThrowsDeviceFault) {
  auto m = compile(fixture("fault"));
  ASSERT_NE(m, nullptr);
  std::vector<kgate_tensor> ins, outs;
  EXPECT_THROW(b_->run(*m, ins, outs), native::DeviceFault);
  // This process's context is poisoned now; ctest runs every case in its own process.
}

TEST_F(CudaTest, AATimingOfOneStarterAgrees) {
  auto m = compile(starter("softmax"));
  ASSERT_NE(m, nullptr);
  SoftmaxData a(b_, 4096, 4096, 2, 1), bb(b_, 4096, 4096, 2, 1);
  std::vector<native::TimedCall> calls(2);
  calls[0] = {"candidate", m.get(), a.ins, a.outs};
  calls[1] = {"baseline", m.get(), bb.ins, bb.outs};
  protocol::TimeResult r = b_->time(calls, quick_params(), nullptr);
  double ma = median(r.samples_us["candidate"]), mb = median(r.samples_us["baseline"]);
  std::printf("A/A softmax 4096^2 f32: %.2f / %.2f us, %zu+%zu samples, timer %s, dropped %d\n", ma, mb,
              r.samples_us["candidate"].size(), r.samples_us["baseline"].size(), r.timer.c_str(), r.dropped_throttled);
  for (const auto& [slot, v] : r.samples_us) {
    stats::Summary s = stats::summarize(v);
    std::printf("A/A %s: n %zu, p05 %.2f, median %.2f, p95 %.2f, max %.2f, rse %.4f, elapsed %.2f s\n",
                slot.c_str(), s.n, s.p05, s.median, s.p95, s.max, s.median_rse, r.elapsed_s);
  }
  EXPECT_EQ(r.timer, "cuda_event");
  EXPECT_EQ(r.batch, 1);
  EXPECT_FALSE(r.side_stream_work);
  EXPECT_GE(r.samples_us["candidate"].size(), 30u);
  EXPECT_GE(r.samples_us["baseline"].size(), 30u);
  EXPECT_NEAR(ma / mb, 1.0, 0.02);
  // 2 x 64 MiB at a few TB/s: tens of µs, not launch overhead and not cache speed.
  EXPECT_GT(ma, 15.0);
}

TEST_F(CudaTest, TinyKernelIsTimedAsGraphBatches) {
  auto m = compile(starter("softmax"));
  ASSERT_NE(m, nullptr);
  SoftmaxData a(b_, 8, 128, 2);
  std::vector<native::TimedCall> calls(1);
  calls[0] = {"candidate", m.get(), a.ins, a.outs};
  protocol::TimeResult r = b_->time(calls, quick_params(), nullptr);
  double med = median(r.samples_us["candidate"]);
  std::printf("tiny softmax 8x128: %.3f us per call, batch %d, timer %s %s\n", med, r.batch, r.timer.c_str(),
              r.timer_note.c_str());
  EXPECT_EQ(r.timer, "cuda_graph") << r.timer_note;
  EXPECT_GT(r.batch, 1);
  EXPECT_LT(med, 20.0);
  EXPECT_FALSE(r.side_stream_work);

  // With graphs disallowed the same call is timed with events, launch overhead included.
  protocol::TimeParams p = quick_params();
  p.cuda_graph = false;
  protocol::TimeResult e = b_->time(calls, p, nullptr);
  EXPECT_EQ(e.timer, "cuda_event");
  EXPECT_EQ(e.batch, 1);
  EXPECT_GE(median(e.samples_us["candidate"]), med);
}

TEST_F(CudaTest, UncapturableCandidateFallsBackToEvents) {
  auto m = compile(fixture("uncapturable"));
  ASSERT_NE(m, nullptr);
  DeviceBuffer y(b_, 4);
  std::vector<native::TimedCall> calls(1);
  calls[0] = {"candidate", m.get(), {{}}, {{describe(y.get(), KGATE_F32, {1})}}};
  protocol::TimeResult r = b_->time(calls, quick_params(), nullptr);
  std::printf("uncapturable: timer %s, note: %s\n", r.timer.c_str(), r.timer_note.c_str());
  EXPECT_EQ(r.timer, "cuda_event");
  EXPECT_FALSE(r.timer_note.empty());
  EXPECT_FALSE(r.samples_us["candidate"].empty());
}

TEST_F(CudaTest, ASlotFailingWhileTimedIsNamedInTheAnswer) {
  // kgate_run returns 7 on every call: the answer names the slot and its code (the
  // performance gate fails that slot), the timer does not throw.
  auto bad = compile(fixture("bad_launch"));
  auto ok = compile(starter("softmax"));
  ASSERT_NE(bad, nullptr);
  ASSERT_NE(ok, nullptr);
  DeviceBuffer y(b_, 4);
  SoftmaxData a(b_, 256, 256, 2, 1);
  std::vector<native::TimedCall> calls(2);
  calls[0] = {"baseline", ok.get(), a.ins, a.outs};
  calls[1] = {"candidate", bad.get(), {{}}, {{describe(y.get(), KGATE_F32, {1})}}};
  protocol::TimeResult r = b_->time(calls, quick_params(), nullptr);
  EXPECT_EQ(r.return_code, 7);
  EXPECT_EQ(r.failed_slot, "candidate");
  EXPECT_EQ(r.stop_reason, "error");
  EXPECT_NE(r.timer_note.find("candidate: kgate_run returned 7 while timed"), std::string::npos)
      << r.timer_note;
  // The context is still usable: the baseline alone times cleanly.
  calls.pop_back();
  protocol::TimeResult again = b_->time(calls, quick_params(), nullptr);
  EXPECT_EQ(again.return_code, 0);
  EXPECT_FALSE(again.samples_us["baseline"].empty());
}

TEST_F(CudaTest, SideStreamWorkIsFlagged) {
  auto m = compile(fixture("side_stream"));
  ASSERT_NE(m, nullptr);
  DeviceBuffer y(b_, 4);
  std::vector<native::TimedCall> calls(1);
  calls[0] = {"candidate", m.get(), {{}}, {{describe(y.get(), KGATE_F32, {1})}}};
  protocol::TimeParams p = quick_params();
  p.min_time_s = 0.1;
  p.max_time_s = 1.0;
  protocol::TimeResult r = b_->time(calls, p, nullptr);
  std::printf("side stream: timer %s, median %.2f us, flagged %d\n", r.timer.c_str(),
              median(r.samples_us["candidate"]), r.side_stream_work ? 1 : 0);
  EXPECT_TRUE(r.side_stream_work);
}

}  // namespace
}  // namespace kgate::gpu_test

namespace kgate::gpu_test {
namespace {

// The matmul truth from cuBLAS DGEMM agrees with the host float64 reference to float64
// rounding (odd sizes: the row-/column-major operand swap must hold for M != N != K);
// other ops have no device reference.
TEST_F(CudaTest, DeviceMatmulTruthMatchesHostReference) {
  const ops::Op& op = *ops::find_op("matmul");
  for (DType dt : {DType::kF32, DType::kBF16}) {
    ops::Dims dims = {{"M", 129}, {"N", 255}, {"K", 127}};
    auto in = op.make_inputs(dims, dt, 7, ops::Distribution::kSigned);
    auto host = op.reference_f64(dims, in);
    auto dev = b_->device_reference_f64(op, dims, in);
    ASSERT_EQ(dev.size(), 1u) << "no cuBLAS truth (see stderr)";
    ASSERT_EQ(dev[0].shape, host[0].shape);
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < host[0].numel(); ++i) {
      worst = std::max(worst, std::fabs(dev[0].get(i) - host[0].get(i)));
      scale = std::max(scale, std::fabs(host[0].get(i)));
    }
    EXPECT_LE(worst, 1e-12 * scale) << to_string(dt);
    std::printf("device matmul truth %s 129x255x127: max |cuBLAS - host| = %.3g (scale %.3g)\n",
                std::string(to_string(dt)).c_str(), worst, scale);
  }
  const ops::Op& softmax = *ops::find_op("softmax");
  ops::Dims sd = {{"R", 4}, {"C", 8}};
  EXPECT_TRUE(b_->device_reference_f64(softmax, sd, softmax.make_inputs(sd, DType::kF32, 1, ops::Distribution::kNormal)).empty());
}

}  // namespace
}  // namespace kgate::gpu_test

// `kgate doctor`'s measurement logic against a fake worker whose kernel time is linear
// in the probe shape: the shape search hits each size class, the A/A runs come out
// `same`, and the calibration carries the device, overhead, noise and matmul rate.
#include "stats/doctor.h"

#include <cmath>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/rng.h"

namespace kgate::stats {
namespace {

class FakeProbe : public DoctorProbe {
 public:
  double overhead_us = 2.0;        // fixed cost per call
  double ns_per_element = 0.5;     // probe op cost
  double cv = 0.01;
  // Below this many elements the probe costs the same as at it: a latency-bound shape
  // that does not fill the device (a GPU's rows run in parallel).
  int64_t saturation_elements = 0;
  bool fail_time = false;
  std::vector<std::string> prepared;
  int time_calls = 0;

  protocol::HelloResult hello() override {
    protocol::HelloResult h;
    h.backend = "host";
    h.device.name = "Fake CPU 9000";
    h.device.copy_bandwidth_gbps = 20.5;
    return h;
  }
  void prepare(const std::string& op, const std::string& source) override {
    prepared.push_back(op + ":" + source);
    source_ = source;
  }
  protocol::TimeResult time(const protocol::TimeParams& p) override {
    ++time_calls;
    if (fail_time) throw InfraError("worker crashed");
    double t = overhead_us;
    protocol::TimeResult r;
    r.timer = "steady_clock";
    if (source_ == "matmul.cu") {
      const double flops = 2.0 * p.dims.at("M") * p.dims.at("N") * p.dims.at("K");
      t = flops / 500e12 * 1e6;  // 500 TFLOP/s
      r.flops = flops;
    } else if (source_ != "empty.cpp") {
      t += ns_per_element * 1e-3 *
           static_cast<double>(std::max(p.dims.at("R") * p.dims.at("C"), saturation_elements));
    }
    core::Rng rng(static_cast<uint64_t>(time_calls));
    const int n = std::max(p.min_samples, 60);
    for (const std::string& slot : p.slots)
      for (int i = 0; i < n; ++i) r.samples_us[slot].push_back(t * (1 + cv * rng.normal()));
    return r;
  }

 private:
  std::string source_;
};

DoctorPlan plan() {
  DoctorPlan p;
  p.probe_source = "softmax.cpp";
  p.empty_source = "empty.cpp";
  return p;
}

TEST(StatsDoctor, ProbeDimsAreValidShapes) {
  EXPECT_EQ(probe_dims(1), (std::map<std::string, int64_t>{{"R", 1}, {"C", 32}}));
  EXPECT_EQ(probe_dims(1000), (std::map<std::string, int64_t>{{"R", 1}, {"C", 992}}));
  EXPECT_EQ(probe_dims(5994), (std::map<std::string, int64_t>{{"R", 2}, {"C", 3008}}));
  for (int64_t e : {100, 5000, 70000, 1234567}) {
    const auto d = probe_dims(e);
    EXPECT_NEAR(double(d.at("R") * d.at("C")) / double(e), 1.0, 0.05) << e;
    EXPECT_EQ(d.at("C") % 32, 0);
    EXPECT_LE(d.at("C"), 4096);
  }
  const auto big = probe_dims(int64_t{1} << 24);
  EXPECT_EQ(big.at("C"), 4096);
  EXPECT_EQ(big.at("R"), 4096);
}

TEST(StatsDoctor, FindsShapesForEverySizeClassAndCalibrates) {
  FakeProbe probe;
  std::vector<std::string> lines;
  const Calibration c = run_doctor(probe, plan(), [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(c.device_name, "Fake CPU 9000");
  EXPECT_DOUBLE_EQ(c.copy_bandwidth_gbps, 20.5);
  EXPECT_NEAR(c.timer_overhead_us, 2.0, 0.05);
  EXPECT_EQ(c.timer, "steady_clock");
  EXPECT_EQ(c.version, kCalibrationVersion);
  ASSERT_EQ(c.noise.size(), 4u);
  for (const NoiseClass& n : c.noise) {
    // 5 µs is reachable above the 2 µs overhead; every class lands within ~15 %.
    EXPECT_NEAR(std::log(n.median_us / n.target_us), 0, std::log(1.2))
        << to_string(n.size_class) << " " << n.median_us;
    EXPECT_EQ(n.aa_verdict, gates::SpeedVerdict::kSame) << to_string(n.size_class);
    EXPECT_GT(n.aa_spread, 0);
    EXPECT_LT(n.aa_spread, 0.01);
    EXPECT_NEAR(n.robust_cv, 0.01, 0.004);
    EXPECT_EQ(n.op, "softmax");
  }
  EXPECT_EQ(c.matmul_tflops, 0);  // not asked for
  EXPECT_EQ(probe.prepared.front(), "softmax:empty.cpp");
  EXPECT_GE(lines.size(), 6u);
  const std::string table = format_calibration(c);
  EXPECT_NE(table.find("500us"), std::string::npos) << table;
  EXPECT_NE(table.find("20.5 GB/s"), std::string::npos) << table;
}

TEST(StatsDoctor, MeasuresMatmulWhenGivenTheCublasBaseline) {
  FakeProbe probe;
  DoctorPlan p = plan();
  p.classes = {SizeClass::k50us};
  p.matmul_source = "matmul.cu";
  const Calibration c = run_doctor(probe, p);
  EXPECT_NEAR(c.matmul_tflops, 500, 15);
  EXPECT_EQ(c.matmul_dtype, "f16");
  EXPECT_EQ(c.matmul_dims.at("K"), 8192);
  EXPECT_EQ(probe.prepared.back(), "matmul:matmul.cu");
}

TEST(StatsDoctor, LatencyBoundProbeStillReachesItsClass) {
  // The probe's time stands still until 20000 elements: rescaling from a small shape
  // needs several rounds before it grows at all.
  FakeProbe probe;
  probe.saturation_elements = 20000;
  DoctorPlan p = plan();
  p.classes = {SizeClass::k5us, SizeClass::k50us};
  const Calibration c = run_doctor(probe, p);
  ASSERT_EQ(c.noise.size(), 2u);
  EXPECT_NEAR(std::log(c.noise[1].median_us / 50.0), 0, std::log(1.16)) << c.noise[1].median_us;
}

TEST(StatsDoctor, ClassPastTheProbesCapUsesMatmul) {
  // 2^22 elements of the probe take ~2.1 ms: 5 ms is out of its reach, so the class is
  // measured on the cuBLAS matmul with its side scaled (500 TFLOP/s: n ~ 10.8k).
  FakeProbe probe;
  DoctorPlan p = plan();
  p.classes = {SizeClass::k500us, SizeClass::k5ms};
  p.max_elements = int64_t{1} << 22;
  p.matmul_source = "matmul.cu";
  const Calibration c = run_doctor(probe, p);
  ASSERT_EQ(c.noise.size(), 2u);
  EXPECT_EQ(c.noise[0].op, "softmax");
  EXPECT_EQ(c.noise[0].dtype, "f32");
  const NoiseClass& n = c.noise[1];
  EXPECT_EQ(n.op, "matmul");
  EXPECT_EQ(n.dtype, "f16");
  EXPECT_EQ(n.dims.at("M"), n.dims.at("K"));
  EXPECT_EQ(n.dims.at("M") % 256, 0);
  EXPECT_NEAR(std::log(n.median_us / 5000.0), 0, std::log(1.15)) << n.median_us;
  EXPECT_EQ(n.aa_verdict, gates::SpeedVerdict::kSame);
  EXPECT_NE(format_calibration(c).find("matmul K="), std::string::npos) << format_calibration(c);
  // Without the matmul source the class stays on the probe, at its cap.
  p.matmul_source.clear();
  const Calibration capped = run_doctor(probe, p);
  EXPECT_EQ(capped.noise[1].op, "softmax");
}

TEST(StatsDoctor, WorkerFailureEscapesAsInfraError) {
  FakeProbe probe;
  probe.fail_time = true;
  EXPECT_THROW(run_doctor(probe, plan()), InfraError);
}

}  // namespace
}  // namespace kgate::stats

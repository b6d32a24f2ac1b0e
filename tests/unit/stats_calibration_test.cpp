// Calibration storage: round trip, lookup of the nearest size class, version and
// malformed-file errors, default path from XDG_CACHE_HOME.
#include "stats/calibration.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"

namespace kgate::stats {
namespace {

namespace fs = std::filesystem;

class StatsCalibration : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kgate-calib-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static Calibration sample() {
    Calibration c;
    c.created_utc = "2026-11-29T12:00:00Z";
    c.backend = "host";
    c.device_name = "AMD EPYC 9654 (host)";
    c.copy_bandwidth_gbps = 12.5;
    c.timer_overhead_us = 0.04;
    for (SizeClass s : kSizeClasses) {
      NoiseClass n;
      n.size_class = s;
      n.target_us = target_us(s);
      n.op = "softmax";
      n.dims = {{"R", 64}, {"C", 1024}};
      n.median_us = target_us(s) * 1.1;
      n.samples = 60;
      n.aa_spread = 0.001 * target_us(s) / 5;  // 0.1 % .. 100 %: distinct per class
      n.aa_verdict = gates::SpeedVerdict::kSame;
      c.noise.push_back(n);
    }
    return c;
  }
  fs::path dir_;
};

TEST_F(StatsCalibration, SizeClassIsNearestInLogScale) {
  EXPECT_EQ(size_class_for(1), SizeClass::k5us);
  EXPECT_EQ(size_class_for(15), SizeClass::k5us);   // 15 < sqrt(5*50) = 15.8
  EXPECT_EQ(size_class_for(16), SizeClass::k50us);
  EXPECT_EQ(size_class_for(400), SizeClass::k500us);
  EXPECT_EQ(size_class_for(1e6), SizeClass::k5ms);
  EXPECT_EQ(size_class_for(0), SizeClass::k5us);
  EXPECT_STREQ(to_string(SizeClass::k500us), "500us");
  EXPECT_EQ(nlohmann::json(SizeClass::k5ms), "5ms");
}

TEST_F(StatsCalibration, SavesAtomicallyAndLoadsBack) {
  const std::string path = (dir_ / "sub" / "calibration-x.json").string();
  const Calibration c = sample();
  save_calibration(path, c);
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
  const Calibration back = load_calibration(path);
  EXPECT_EQ(back.version, kCalibrationVersion);
  EXPECT_EQ(back.device_name, c.device_name);
  EXPECT_DOUBLE_EQ(back.copy_bandwidth_gbps, 12.5);
  ASSERT_EQ(back.noise.size(), 4u);
  EXPECT_EQ(back.noise[2].size_class, SizeClass::k500us);
  EXPECT_EQ(back.noise[2].dims.at("C"), 1024);
  EXPECT_EQ(back.noise[2].aa_verdict, gates::SpeedVerdict::kSame);
  EXPECT_EQ(nlohmann::json(back), nlohmann::json(c));
  // Overwrite in place.
  Calibration c2 = c;
  c2.timer_overhead_us = 0.5;
  save_calibration(path, c2);
  EXPECT_DOUBLE_EQ(load_calibration(path).timer_overhead_us, 0.5);
}

TEST_F(StatsCalibration, LooksUpTheNearestClass) {
  const Calibration c = sample();
  ASSERT_NE(c.noise_for(4), nullptr);
  EXPECT_EQ(c.noise_for(4)->size_class, SizeClass::k5us);
  EXPECT_EQ(c.noise_for(700)->size_class, SizeClass::k500us);
  EXPECT_DOUBLE_EQ(c.aa_spread_for(60), 0.01);
  EXPECT_DOUBLE_EQ(c.aa_spread_for(1e5), 1.0);
  const Calibration empty;
  EXPECT_EQ(empty.noise_for(5), nullptr);
  EXPECT_DOUBLE_EQ(empty.aa_spread_for(5), 0);
}

TEST_F(StatsCalibration, BadFilesAreClearErrors) {
  fs::create_directories(dir_);
  const std::string missing = (dir_ / "none.json").string();
  EXPECT_FALSE(find_calibration(missing).has_value());
  EXPECT_THROW(load_calibration(missing), InfraError);

  const std::string garbage = (dir_ / "garbage.json").string();
  std::ofstream(garbage) << "{not json";
  try {
    load_calibration(garbage);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(garbage + ": error: not JSON"), std::string::npos);
  }

  const std::string old = (dir_ / "old.json").string();
  std::ofstream(old) << R"({"version": 99, "device_name": "x"})";
  try {
    load_calibration(old);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("version 99"), std::string::npos) << e.what();
  }

  const std::string wrong = (dir_ / "wrong.json").string();
  std::ofstream(wrong) << R"({"version": 1, "noise": "many"})";
  EXPECT_THROW(load_calibration(wrong), UsageError);
}

TEST_F(StatsCalibration, DefaultPathUsesXdgCacheHomeAndASlug) {
  EXPECT_EQ(device_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(device_slug("  AMD EPYC 9654 96-Core (host) "), "amd-epyc-9654-96-core-host");
  EXPECT_EQ(device_slug("///"), "unknown");
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(default_calibration_path("NVIDIA H200"),
            "/tmp/xdg-test/kgate/calibration-nvidia-h200.json");
  if (old) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1); else ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace kgate::stats

#pragma once
// What `kgate doctor` measured about one runner (device): copy bandwidth, timer overhead,
// matmul peak, and the A/A noise per size class. Stored as versioned JSON per device
// (default $XDG_CACHE_HOME/kgate/calibration-<device>.json) and looked up by the
// comparison's noise warning: a verdict that asks for an effect below the A/A spread of
// its size class is flagged (compare.h, CompareOptions::aa_spread).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/verdict.h"

namespace kgate::stats {

inline constexpr int kCalibrationVersion = 1;

// Kernel durations doctor calibrates: noise depends on scale (launch jitter dominates
// µs kernels, clocks and memory dominate ms kernels).
enum class SizeClass { k5us, k50us, k500us, k5ms };
NLOHMANN_JSON_SERIALIZE_ENUM(SizeClass, {{SizeClass::k5us, "5us"},
                                         {SizeClass::k50us, "50us"},
                                         {SizeClass::k500us, "500us"},
                                         {SizeClass::k5ms, "5ms"}})
inline constexpr SizeClass kSizeClasses[] = {SizeClass::k5us, SizeClass::k50us,
                                             SizeClass::k500us, SizeClass::k5ms};
double target_us(SizeClass c);
const char* to_string(SizeClass c);
// The class whose target is nearest in log scale.
SizeClass size_class_for(double median_us);

// A/A measurement of one size class: the same kernel in both slots, interleaved.
struct NoiseClass {
  SizeClass size_class = SizeClass::k5us;
  double target_us = 0;
  std::string op;                          // probe op, e.g. "softmax"
  std::map<std::string, int64_t> dims;     // the shape the probe picked
  std::string dtype = "f32";               // of that shape
  double median_us = 0;                    // measured time of that shape
  int samples = 0;                         // per side
  double robust_cv = 0;                    // per-sample noise, MAD-based, both sides
  double median_rse = 0;                   // of the first side
  double aa_speedup = 1;                   // should be 1
  double aa_speedup_lo = 1;
  double aa_speedup_hi = 1;
  double aa_spread = 0;                    // max(hi - 1, 1 - lo): relative half-width
  double aa_p_value = 1;
  gates::SpeedVerdict aa_verdict = gates::SpeedVerdict::kUnknown;  // should be `same`
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NoiseClass, size_class, target_us, op, dims,
                                                dtype, median_us, samples, robust_cv, median_rse,
                                                aa_speedup, aa_speedup_lo, aa_speedup_hi,
                                                aa_spread, aa_p_value, aa_verdict)

struct Calibration {
  int version = kCalibrationVersion;
  std::string created_utc;        // ISO 8601
  std::string kgate_version;
  std::string host;
  std::string backend;            // "host" | "cuda"
  std::string device_name;        // as reported by the worker's hello
  int device_index = 0;
  std::string gpu_id;             // configs/gpus target id; "" when not matched
  std::string cc;
  std::string driver;
  std::string timer;              // timer the worker used for the A/A runs
  double copy_bandwidth_gbps = 0;
  double timer_overhead_us = 0;   // median time of an empty call
  double matmul_tflops = 0;       // 0 = not measured (host backend)
  std::string matmul_dtype;
  std::map<std::string, int64_t> matmul_dims;
  std::vector<NoiseClass> noise;

  // The calibrated class nearest (log scale) to a kernel of this duration, or null when
  // there is none.
  const NoiseClass* noise_for(double median_us) const;
  // Its A/A spread, 0 when unknown: what CompareOptions::aa_spread takes.
  double aa_spread_for(double median_us) const;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Calibration, version, created_utc, kgate_version,
                                                host, backend, device_name, device_index, gpu_id,
                                                cc, driver, timer, copy_bandwidth_gbps,
                                                timer_overhead_us, matmul_tflops, matmul_dtype,
                                                matmul_dims, noise)

// "NVIDIA H200" -> "nvidia-h200": safe in a file name.
std::string device_slug(const std::string& device_name);
// $XDG_CACHE_HOME/kgate/calibration-<slug>.json, else ~/.cache/kgate/...
std::string default_calibration_path(const std::string& device_name);

// Reads a calibration file. Throws UsageError ("path: error: ...") when it is not valid
// calibration JSON or has another version, InfraError when it cannot be read.
Calibration load_calibration(const std::string& path);
// nullopt when the file does not exist; otherwise as load_calibration.
std::optional<Calibration> find_calibration(const std::string& path);
// Writes atomically (temporary file + rename), creating the directory. InfraError on
// failure.
void save_calibration(const std::string& path, const Calibration& c);

}  // namespace kgate::stats

#pragma once
// The measurement behind `kgate doctor`: how good is this runner at timing? It asks a
// worker (through DoctorProbe, so the logic is testable with a fake) for the device and
// its copy bandwidth, the timer overhead (an empty call), the A/A noise per size class
// (a probe op whose shape is scaled until one call takes about 5 µs / 50 µs / 500 µs /
// 5 ms, then the same kernel timed against itself, interleaved) and, on cuda, the
// matmul rate of the cuBLAS baseline. The result is a Calibration (calibration.h).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "stats/calibration.h"

namespace kgate::stats {

// What doctor needs of a worker. Implementations throw kgate::InfraError when the worker
// cannot answer (fault, error response).
class DoctorProbe {
 public:
  virtual ~DoctorProbe() = default;
  virtual protocol::HelloResult hello() = 0;
  // Loads `op` and compiles `source_path` into both slots ("baseline", "candidate").
  virtual void prepare(const std::string& op, const std::string& source_path) = 0;
  // Interleaved timing of both slots.
  virtual protocol::TimeResult time(const protocol::TimeParams& params) = 0;
};

struct DoctorPlan {
  std::string backend = "host";
  std::string gpu_id;                 // configs/gpus id, recorded as is
  std::string probe_op = "softmax";   // dims R x C, row-wise: scales linearly in R*C
  std::string probe_source;           // candidate file of the probe op for this backend
  std::string empty_source;           // a candidate that returns at once (timer overhead)
  std::string matmul_source;          // cuBLAS baseline; "" = skip the matmul peak
  std::map<std::string, int64_t> matmul_dims{{"M", 8192}, {"N", 8192}, {"K", 8192}};
  std::string matmul_dtype = "f16";
  std::vector<SizeClass> classes{std::begin(kSizeClasses), std::end(kSizeClasses)};
  double min_time_s = 0.5;    // per A/A run
  double max_time_s = 3.0;
  int min_samples = 50;
  int max_samples = 2000;
  double target_rse = 0.005;
  int64_t max_elements = int64_t{1} << 28;  // probe shape cap (1 GiB of f32 input)
  int64_t max_matmul_side = 32768;           // matmul stand-in cap, for classes past the probe's
  uint64_t seed = 1;
};

// One line per step, for the console ("probe 50us: R=64 C=4096 -> 48.1 us").
using DoctorLog = std::function<void(const std::string&)>;

// Runs the whole measurement. Throws InfraError when the worker fails.
Calibration run_doctor(DoctorProbe& probe, const DoctorPlan& plan, const DoctorLog& log = {});

// The probe shape for a number of elements: C a multiple of 32 up to 4096, R rows.
std::map<std::string, int64_t> probe_dims(int64_t elements);
// "M=4096 N=4096 K=4096": a shape as the doctor prints it.
std::string shape_text(const std::map<std::string, int64_t>& dims);

// The console table of a calibration.
std::string format_calibration(const Calibration& c);

}  // namespace kgate::stats

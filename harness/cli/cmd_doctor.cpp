// `kgate doctor`: measures this runner through a kgate-native worker (copy bandwidth,
// timer overhead, A/A noise per size class, cuBLAS matmul rate on cuda), stores the
// calibration JSON and prints a table. The measurement logic is stats/doctor.h; this file
// connects it to a real worker and to the probe kernels below.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "core/paths.h"
#include "stats/calibration.h"
#include "stats/doctor.h"
#include "worker/worker.h"

namespace kgate::cli {

namespace {

namespace fs = std::filesystem;

// Probe kernels: row-wise softmax over f32 (the probe op: its cost is linear in R*C) and
// a call that does nothing (timer overhead). Written to a temporary directory and
// compiled by the worker like any candidate.
constexpr const char* kHostSoftmax = R"(// kgate doctor probe: f32 row-wise softmax, host.
#include <math.h>
#include "kgate/kernel.h"
extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out,
                         void* stream) {
  (void)stream;
  if (n_in != 1 || n_out != 1 || in[0].dtype != KGATE_F32 || in[0].ndim != 2) return 1;
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  const float* x = (const float*)in[0].data;
  float* y = (float*)out[0].data;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
    float sum = 0.f;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = expf(xr[c] - m);
      sum += yr[c];
    }
    const float inv = 1.f / sum;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
  return 0;
}
)";

constexpr const char* kHostEmpty = R"(// kgate doctor probe: does nothing (timer overhead).
#include "kgate/kernel.h"
extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out,
                         void* stream) {
  (void)in; (void)n_in; (void)out; (void)n_out; (void)stream;
  return 0;
}
)";

constexpr const char* kCudaSoftmax = R"(// kgate doctor probe: f32 row-wise softmax, one block per row.
#include <cuda_runtime.h>
#include <math.h>
#include "kgate/kernel.h"
#define PROBE_THREADS 256
__global__ void probe_softmax(const float* x, float* y, long long cols) {
  __shared__ float red[PROBE_THREADS];
  const float* xr = x + (long long)blockIdx.x * cols;
  float* yr = y + (long long)blockIdx.x * cols;
  float m = -INFINITY;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(xr[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.f / red[0];
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = __expf(xr[c] - m) * inv;
}
extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out,
                         void* stream) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != KGATE_F32 || in[0].ndim != 2) return 1;
  const long long rows = in[0].shape[0], cols = in[0].shape[1];
  if (rows <= 0 || rows > 2147483647LL) return 2;
  probe_softmax<<<(unsigned)rows, PROBE_THREADS, 0, (cudaStream_t)stream>>>(
      (const float*)in[0].data, (float*)out[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
)";

constexpr const char* kCudaEmpty = R"(// kgate doctor probe: one empty launch (launch + timer overhead).
#include <cuda_runtime.h>
#include "kgate/kernel.h"
__global__ void probe_empty() {}
extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out,
                         void* stream) {
  (void)in; (void)n_in; (void)out; (void)n_out;
  probe_empty<<<1, 1, 0, (cudaStream_t)stream>>>();
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
)";

// The worker answered but not as doctor needs: an error a person can act on.
[[noreturn]] void fail(const std::string& what, const worker::Reply& r) {
  throw InfraError("kgate doctor: " + what + " failed: " + r.describe() +
                   (r.stderr_tail.empty() ? "" : "\n" + r.stderr_tail));
}

// Thrown when the worker lacks what doctor needs (the runner is a placeholder, or an op
// is not implemented): doctor then says "not available yet" instead of inventing numbers.
struct NotAvailable {
  std::string why;
};

class WorkerProbe final : public stats::DoctorProbe {
 public:
  WorkerProbe(worker::Worker& w, std::string backend) : w_(w), backend_(std::move(backend)) {}

  protocol::HelloResult hello() override {
    protocol::HelloParams p;
    p.backend = backend_;
    const worker::Reply r = call("hello", nlohmann::json(p), 120);
    try {
      return r.result.get<protocol::HelloResult>();
    } catch (const nlohmann::json::exception& e) {
      throw InfraError(std::string("kgate doctor: malformed hello result: ") + e.what());
    }
  }

  void prepare(const std::string& op, const std::string& source_path) override {
    protocol::ProblemSpec spec;
    spec.id = "doctor/" + op;
    spec.op = op;
    call("load_problem", {{"problem", nlohmann::json(spec)}}, 60);
    for (const char* slot : {"baseline", "candidate"}) {
      protocol::CompileParams c;
      c.slot = slot;
      c.source_path = source_path;
      const worker::Reply r = call("compile", nlohmann::json(c), 600);
      const auto res = r.result.get<protocol::CompileResult>();
      if (!res.compiled)
        throw InfraError("kgate doctor: the probe " + source_path + " did not compile:\n" +
                         res.log);
    }
  }

  protocol::TimeResult time(const protocol::TimeParams& p) override {
    const worker::Reply r = call("time", nlohmann::json(p), p.max_time_s * 3 + 120);
    try {
      return r.result.get<protocol::TimeResult>();
    } catch (const nlohmann::json::exception& e) {
      throw InfraError(std::string("kgate doctor: malformed time result: ") + e.what());
    }
  }

 private:
  worker::Reply call(const std::string& op, const nlohmann::json& params, double timeout_s) {
    worker::Reply r = w_.call(op, params, timeout_s);
    if (r.good()) return r;
    const bool placeholder = r.stderr_tail.find("not available yet") != std::string::npos ||
                             w_.stderr_tail().find("not available yet") != std::string::npos;
    if (placeholder) throw NotAvailable{"the native runner (kgate-native) is a placeholder"};
    if (r.fault == gates::Fault::kNone && r.error &&
        r.error->kind == protocol::ErrorKind::kBadRequest &&
        r.error->message.find(op) != std::string::npos)
      throw NotAvailable{"the native runner does not implement `" + op + "`"};
    if (r.fault == gates::Fault::kNone && r.error &&
        r.error->kind == protocol::ErrorKind::kUnsupported)
      throw UsageError("kgate doctor: backend " + backend_ + " unavailable here: " +
                       r.error->message);
    fail(op, r);
  }

  worker::Worker& w_;
  std::string backend_;
};

std::string write_probe(const fs::path& dir, const std::string& name, const char* text) {
  const fs::path p = dir / name;
  std::ofstream out(p);
  out << text;
  if (!out) throw InfraError(p.string() + ": error: cannot write probe kernel");
  return p.string();
}

// The cuBLAS baseline starter of the matmul problem: $KGATE_STARTERS_DIR or the source
// tree's kernelbench/native/starters.
std::string find_cublas_starter() {
  std::vector<fs::path> dirs;
  if (const char* d = std::getenv("KGATE_STARTERS_DIR"); d && *d) dirs.emplace_back(d);
  dirs.emplace_back(fs::path(paths::data_dir()) / "kernelbench" / "native" / "starters");
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (fs::exists(d / "matmul_cublas.cu", ec)) return (d / "matmul_cublas.cu").string();
  }
  return "";
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kgate-doctor-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw InfraError("kgate doctor: cannot create a temporary directory");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

ExitCode cmd_doctor(const DoctorOptions& o) {
  if (o.backend != "host" && o.backend != "cuda")
    throw UsageError("kgate doctor: --backend must be host or cuda, not '" + o.backend + "'");
  const bool cuda = o.backend == "cuda";
  TempDir tmp;
  stats::DoctorPlan plan;
  plan.backend = o.backend;
  plan.gpu_id = o.gpu;
  plan.probe_source = write_probe(tmp.path, cuda ? "probe_softmax.cu" : "probe_softmax.cpp",
                                  cuda ? kCudaSoftmax : kHostSoftmax);
  plan.empty_source = write_probe(tmp.path, cuda ? "probe_empty.cu" : "probe_empty.cpp",
                                  cuda ? kCudaEmpty : kHostEmpty);
  if (cuda) {
    plan.matmul_source = find_cublas_starter();
    if (plan.matmul_source.empty())
      log::warn("kgate doctor: matmul_cublas.cu starter not found (set KGATE_STARTERS_DIR); "
                "skipping the matmul peak");
  }

  // The walls a host or CUDA worker gets in a run (logged: "sandbox: ...").
  worker::Worker w(worker::native_worker_spec(o.backend));
  WorkerProbe probe(w, o.backend);
  stats::Calibration cal;
  try {
    cal = stats::run_doctor(probe, plan, [](const std::string& line) { log::info(line); });
  } catch (const NotAvailable& na) {
    log::error("`kgate doctor` is not available yet in this build: " + na.why);
    return ExitCode::kUsage;
  }
  const std::string out = o.out.empty() ? stats::default_calibration_path(cal.device_name) : o.out;
  stats::save_calibration(out, cal);
  std::cout << stats::format_calibration(cal) << "\ncalibration written to " << out << "\n";
  return ExitCode::kPass;
}

}  // namespace kgate::cli

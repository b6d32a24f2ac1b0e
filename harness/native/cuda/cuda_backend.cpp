#include "native/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "native/cuda/cuda_check.h"
#include "native/device_buffer.h"
#include "native/cuda/cuda_timer.h"

namespace kgate::native::cuda {

namespace {

int attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  KGATE_CU_CHECK(cuDeviceGetAttribute(&v, a, dev));
  return v;
}

std::string driver_api_version() {
  int v = 0;
  KGATE_CU_CHECK(cuDriverGetVersion(&v));
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

CudaBackend::CudaBackend(int device_index) {
  CUresult r = cuInit(0);
  if (r != CUDA_SUCCESS) throw InfraError("cuInit failed: " + describe(r));
  int count = 0;
  KGATE_CU_CHECK(cuDeviceGetCount(&count));
  if (device_index < 0 || device_index >= count)
    throw InfraError("CUDA device " + std::to_string(device_index) + " does not exist (" +
                     std::to_string(count) + " visible)");
  KGATE_CU_CHECK(cuDeviceGet(&device_, device_index));
  // The primary context is the one the CUDA runtime inside each candidate uses, so the
  // candidate's cudaLaunchKernel and our driver calls see the same memory and streams.
  KGATE_CU_CHECK(cuDevicePrimaryCtxRetain(&context_, device_));
  try {
    KGATE_CU_CHECK(cuCtxSetCurrent(context_));
    KGATE_CU_CHECK(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));

    char name[256] = {};
    KGATE_CU_CHECK(cuDeviceGetName(name, sizeof name, device_));
    info_.name = name;
    int major = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int minor = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info_.cc = std::to_string(major) + "." + std::to_string(minor);
    cc_major_ = major;
    cc_minor_ = minor;
    info_.sm_count = attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info_.l2_bytes = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    std::size_t mem = 0;
    KGATE_CU_CHECK(cuDeviceTotalMem(&mem, device_));
    info_.memory_bytes = static_cast<int64_t>(mem);

    char pci[64] = {};
    KGATE_CU_CHECK(cuDeviceGetPCIBusId(pci, sizeof pci, device_));
    nvml_ = std::make_unique<NvmlClock>(pci);
    // The SM clock the card runs at unthrottled; the driver's attribute as a fallback.
    info_.clock_mhz = nvml_->max_sm_clock_mhz();
    if (info_.clock_mhz == 0) info_.clock_mhz = attribute(device_, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
    std::string driver = nvml_->driver_version();
    info_.driver = driver.empty() ? "cuda " + driver_api_version()
                                  : driver + " (cuda " + driver_api_version() + ")";

    compiler_ = std::make_unique<CudaCompiler>(CompilerSettings::from_environment(major, minor));
  } catch (...) {
    if (stream_ != nullptr) KGATE_CU_CHECK_NOTHROW(cuStreamDestroy(stream_));
    KGATE_CU_CHECK_NOTHROW(cuDevicePrimaryCtxRelease(device_));
    throw;
  }
}

CudaBackend::~CudaBackend() {
  // After a sticky fault these fail; the process is about to exit anyway.
  KGATE_CU_CHECK_NOTHROW(cuCtxSetCurrent(context_));
  compare_.reset();  // its module and flag live in the context released below
  if (flush_buffer_ != 0) KGATE_CU_CHECK_NOTHROW(cuMemFree(flush_buffer_));
  if (stream_ != nullptr) KGATE_CU_CHECK_NOTHROW(cuStreamDestroy(stream_));
  KGATE_CU_CHECK_NOTHROW(cuDevicePrimaryCtxRelease(device_));
}

void CudaBackend::make_current() { KGATE_CU_CHECK(cuCtxSetCurrent(context_)); }

double CudaBackend::measure_copy_bandwidth_gbps() {
  make_current();
  // 1 GiB each way when it fits, less on small cards: big enough that launch and event
  // overhead vanish and the L2 (tens of MB) cannot hold it.
  std::size_t free_b = 0, total_b = 0;
  KGATE_CU_CHECK(cuMemGetInfo(&free_b, &total_b));
  std::size_t bytes = std::size_t{1} << 30;
  while (bytes > (std::size_t{64} << 20) && 2 * bytes > free_b / 2) bytes /= 2;
  CUdeviceptr src = 0, dst = 0;
  KGATE_CU_CHECK(cuMemAlloc(&src, bytes));
  CUresult r = cuMemAlloc(&dst, bytes);
  if (r != CUDA_SUCCESS) {
    KGATE_CU_CHECK_NOTHROW(cuMemFree(src));
    KGATE_CU_CHECK(r);
  }
  CUevent start = nullptr, end = nullptr;
  double best_ms = 0;
  try {
    KGATE_CU_CHECK(cuMemsetD32Async(src, 0x3f800000u, bytes / 4, stream_));
    KGATE_CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    KGATE_CU_CHECK(cuEventCreate(&end, CU_EVENT_DEFAULT));
    for (int i = 0; i < 6; ++i) {  // the first is a warm-up
      KGATE_CU_CHECK(cuEventRecord(start, stream_));
      KGATE_CU_CHECK(cuMemcpyDtoDAsync(dst, src, bytes, stream_));
      KGATE_CU_CHECK(cuEventRecord(end, stream_));
      KGATE_CU_CHECK(cuEventSynchronize(end));
      float ms = 0;
      KGATE_CU_CHECK(cuEventElapsedTime(&ms, start, end));
      if (i > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
    }
  } catch (...) {
    if (start != nullptr) KGATE_CU_CHECK_NOTHROW(cuEventDestroy(start));
    if (end != nullptr) KGATE_CU_CHECK_NOTHROW(cuEventDestroy(end));
    KGATE_CU_CHECK_NOTHROW(cuMemFree(src));
    KGATE_CU_CHECK_NOTHROW(cuMemFree(dst));
    throw;
  }
  KGATE_CU_CHECK(cuEventDestroy(start));
  KGATE_CU_CHECK(cuEventDestroy(end));
  KGATE_CU_CHECK(cuMemFree(src));
  KGATE_CU_CHECK(cuMemFree(dst));
  if (best_ms <= 0) return 0;
  return 2.0 * static_cast<double>(bytes) / (best_ms * 1e-3) / 1e9;  // read + write
}

protocol::DeviceInfo CudaBackend::device_info() {
  if (!bandwidth_measured_) {
    info_.copy_bandwidth_gbps = measure_copy_bandwidth_gbps();
    bandwidth_measured_ = true;
  }
  return info_;
}

protocol::CompileResult CudaBackend::compile(const std::string& source_path,
                                             const std::map<std::string, std::string>& defines,
                                             const std::string& cache_dir,
                                             std::shared_ptr<Module>* module) {
  make_current();
  return compiler_->compile(source_path, defines, cache_dir, module);
}

std::vector<ops::HostTensor> CudaBackend::device_reference_f64(
    const ops::Op& op, const ops::Dims& dims, const std::vector<ops::HostTensor>& inputs) {
  if (op.name() != "matmul" || inputs.size() != 2) return {};
  make_current();
  if (!dgemm_tried_) {
    dgemm_tried_ = true;
    std::string why;
    dgemm_ = CublasDgemm::load(&why);
    if (!dgemm_)
      std::fprintf(stderr, "[kgate-native] matmul truth on the host: %s\n", why.c_str());
  }
  if (!dgemm_) return {};
  const int64_t m = dims.at("M"), n = dims.at("N"), k = dims.at("K");
  const std::vector<double> a = inputs[0].to_doubles(), b = inputs[1].to_doubles();
  std::vector<double> c(static_cast<std::size_t>(m * n));
  DeviceBuffer da(*this, a.size() * sizeof(double)), db(*this, b.size() * sizeof(double)),
      dc(*this, c.size() * sizeof(double));
  to_device(da.get(), a.data(), da.bytes());
  to_device(db.get(), b.data(), db.bytes());
  std::string why = dgemm_->gemm(stream_, m, n, k, reinterpret_cast<CUdeviceptr>(da.get()),
                                 reinterpret_cast<CUdeviceptr>(db.get()),
                                 reinterpret_cast<CUdeviceptr>(dc.get()));
  KGATE_CU_CHECK(cuStreamSynchronize(stream_));  // a sticky fault surfaces as DeviceFault
  if (!why.empty()) {
    std::fprintf(stderr, "[kgate-native] matmul truth on the host: %s\n", why.c_str());
    return {};
  }
  to_host(c.data(), dc.get(), dc.bytes());
  auto out = ops::HostTensor::make(DType::kF64, op.shape_of(op.outputs()[0], dims));
  std::memcpy(out.bytes.data(), c.data(), c.size() * sizeof(double));
  return {std::move(out)};
}

void* CudaBackend::alloc(std::size_t bytes) {
  make_current();
  CUdeviceptr p = 0;
  KGATE_CU_CHECK(cuMemAlloc(&p, std::max<std::size_t>(bytes, 1)));
  return reinterpret_cast<void*>(p);
}

void CudaBackend::release(void* p) {
  if (p == nullptr) return;
  KGATE_CU_CHECK_NOTHROW(cuCtxSetCurrent(context_));
  KGATE_CU_CHECK_NOTHROW(cuMemFree(reinterpret_cast<CUdeviceptr>(p)));
}

// Copies go through our stream and wait for it: the synchronous cuMemcpyHtoD may return
// before a pageable copy has landed, and our stream does not order against the legacy one.
void CudaBackend::to_device(void* dst, const void* src, std::size_t bytes) {
  make_current();
  KGATE_CU_CHECK(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream_));
  KGATE_CU_CHECK(cuStreamSynchronize(stream_));
}

void CudaBackend::fill(void* dst, const std::vector<unsigned char>& pattern, std::size_t bytes) {
  check_fill_pattern(pattern);
  const std::size_t size = pattern.size();
  const std::size_t count = bytes / size;
  const auto d = reinterpret_cast<CUdeviceptr>(dst);
  if (count == 0) return;
  if (d % size != 0) {  // memsets need element alignment; cuMemAlloc gives 256 bytes
    Backend::fill(dst, pattern, bytes);
    return;
  }
  make_current();
  if (size == 1) {
    KGATE_CU_CHECK(cuMemsetD8Async(d, pattern[0], count, stream_));
  } else if (size == 2) {
    uint16_t v = 0;
    std::memcpy(&v, pattern.data(), 2);
    KGATE_CU_CHECK(cuMemsetD16Async(d, v, count, stream_));
  } else if (size == 4) {
    uint32_t v = 0;
    std::memcpy(&v, pattern.data(), 4);
    KGATE_CU_CHECK(cuMemsetD32Async(d, v, count, stream_));
  } else {
    // 8 bytes: two strided 32-bit memsets (rows of one word, 8 bytes apart), low then high.
    uint32_t lo = 0, hi = 0;
    std::memcpy(&lo, pattern.data(), 4);
    std::memcpy(&hi, pattern.data() + 4, 4);
    KGATE_CU_CHECK(cuMemsetD2D32Async(d, 8, lo, 1, count, stream_));
    KGATE_CU_CHECK(cuMemsetD2D32Async(d + 4, 8, hi, 1, count, stream_));
  }
  KGATE_CU_CHECK(cuStreamSynchronize(stream_));
}

void CudaBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  KGATE_CU_CHECK(cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                   reinterpret_cast<CUdeviceptr>(src), bytes, stream_));
  KGATE_CU_CHECK(cuStreamSynchronize(stream_));
}

bool CudaBackend::equal(const void* a, const void* b, std::size_t bytes) {
  const auto da = reinterpret_cast<CUdeviceptr>(a), db = reinterpret_cast<CUdeviceptr>(b);
  make_current();
  if (!compare_tried_) {
    compare_tried_ = true;
    std::string why;
    compare_ = DeviceCompare::load(cc_major_, cc_minor_, info_.sm_count, &why);
    if (!compare_)
      std::fprintf(stderr, "[kgate-native] comparing device memory on the host: %s\n", why.c_str());
  }
  if (!compare_ || da % DeviceCompare::kAlignment != 0 || db % DeviceCompare::kAlignment != 0)
    return Backend::equal(a, b, bytes);
  return compare_->equal(stream_, da, db, bytes);
}

void CudaBackend::to_host(void* dst, const void* src, std::size_t bytes) {
  make_current();
  KGATE_CU_CHECK(cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream_));
  KGATE_CU_CHECK(cuStreamSynchronize(stream_));
}

int CudaBackend::run(const Module& m, const std::vector<kgate_tensor>& inputs,
                     std::vector<kgate_tensor>& outputs) {
  make_current();
  int rc = m.entry()(inputs.data(), static_cast<int32_t>(inputs.size()), outputs.data(),
                     static_cast<int32_t>(outputs.size()), stream_);
  // Wait for the whole context, not only our stream: outputs a side stream writes must have
  // landed before they are read, and a fault there must surface here.
  KGATE_CU_CHECK(cuStreamSynchronize(stream_));
  KGATE_CU_CHECK(cuCtxSynchronize());
  return rc;
}

protocol::TimeResult CudaBackend::time(std::vector<TimedCall>& calls,
                                       const protocol::TimeParams& params, RoundAudit* audit) {
  make_current();
  TimerDevice dev;
  dev.stream = stream_;
  dev.l2_bytes = info_.l2_bytes;
  dev.clock = nvml_.get();
  dev.flush_buffer = &flush_buffer_;
  dev.flush_bytes = &flush_bytes_;
  return CudaTimer(dev).time(calls, params, audit);
}

}  // namespace kgate::native::cuda

extern "C" kgate::native::Backend* kgate_create_cuda_backend(int device_index, std::string* err) {
  try {
    return new kgate::native::cuda::CudaBackend(device_index);
  } catch (const std::exception& e) {
    if (err != nullptr) *err = std::string("cuda backend unavailable: ") + e.what();
  } catch (...) {
    if (err != nullptr) *err = "cuda backend unavailable: unknown error";
  }
  return nullptr;
}

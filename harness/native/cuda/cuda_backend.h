#pragma once
// The CUDA backend of kgate-native (built as the plugin libkgate_native_cuda.so).
// One device, its primary context (shared with the candidates' runtime-API calls), one
// non-blocking stream every candidate call is launched on.
#include <cuda.h>

#include <memory>
#include <optional>

#include "native/backend.h"
#include "native/cuda/cublas_dgemm.h"
#include "native/cuda/cuda_compiler.h"
#include "native/cuda/device_compare.h"
#include "native/cuda/nvml_clock.h"

namespace kgate::native::cuda {

class CudaBackend : public Backend {
 public:
  // Throws kgate::InfraError when there is no usable driver or device.
  explicit CudaBackend(int device_index);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  protocol::DeviceInfo device_info() override;
  protocol::CompileResult compile(const std::string& source_path,
                                  const std::map<std::string, std::string>& defines,
                                  const std::string& cache_dir,
                                  std::shared_ptr<Module>* module) override;
  void* alloc(std::size_t bytes) override;
  // Never throws (cleanup paths call it); errors go to stderr.
  void release(void* p) override;
  void to_device(void* dst, const void* src, std::size_t bytes) override;
  void to_host(void* dst, const void* src, std::size_t bytes) override;
  void fill(void* dst, const std::vector<unsigned char>& pattern, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  bool equal(const void* a, const void* b, std::size_t bytes) override;
  int run(const Module& m, const std::vector<kgate_tensor>& inputs,
          std::vector<kgate_tensor>& outputs) override;
  protocol::TimeResult time(std::vector<TimedCall>& calls, const protocol::TimeParams& params,
                            RoundAudit* audit) override;
  std::vector<ops::HostTensor> device_reference_f64(
      const ops::Op& op, const ops::Dims& dims,
      const std::vector<ops::HostTensor>& inputs) override;

  CUstream stream() const { return stream_; }

 private:
  void make_current();
  double measure_copy_bandwidth_gbps();

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  protocol::DeviceInfo info_;
  bool bandwidth_measured_ = false;
  std::unique_ptr<NvmlClock> nvml_;
  std::unique_ptr<CudaCompiler> compiler_;
  std::unique_ptr<CublasDgemm> dgemm_;
  bool dgemm_tried_ = false;
  std::unique_ptr<DeviceCompare> compare_;
  bool compare_tried_ = false;
  int cc_major_ = 0, cc_minor_ = 0;
  CUdeviceptr flush_buffer_ = 0;
  std::size_t flush_bytes_ = 0;
};

}  // namespace kgate::native::cuda

// The plugin's entry point: nullptr and *err on failure (no driver, no device).
extern "C" kgate::native::Backend* kgate_create_cuda_backend(int device_index, std::string* err);

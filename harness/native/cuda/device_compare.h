#pragma once
// Byte equality of two device ranges, decided on the GPU: the checker asks it whether a
// candidate left its inputs unchanged and whether a repeat wrote the same bytes as the
// first, without copying GPU-sized tensors to the host. One small kernel, built with
// NVRTC for the device's own arch the first time it is needed (a cubin, so no PTX JIT).
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

namespace kgate::native::cuda {

class DeviceCompare {
 public:
  // Builds and loads the kernel in the current context; nullptr and *why on failure
  // (no NVRTC, an unknown arch): the backend then compares on the host.
  static std::unique_ptr<DeviceCompare> load(int cc_major, int cc_minor, int sm_count,
                                             std::string* why);
  ~DeviceCompare();
  DeviceCompare(const DeviceCompare&) = delete;
  DeviceCompare& operator=(const DeviceCompare&) = delete;

  // Whether [a, a+bytes) and [b, b+bytes) hold the same bytes; waits on `stream`.
  // Pointers need 16-byte alignment (cuMemAlloc gives 256); the caller checks.
  bool equal(CUstream stream, CUdeviceptr a, CUdeviceptr b, std::size_t bytes);

  static constexpr std::size_t kAlignment = 16;

 private:
  DeviceCompare() = default;
  CUmodule module_ = nullptr;
  CUfunction kernel_ = nullptr;
  CUdeviceptr flag_ = 0;
  unsigned int blocks_ = 0;
};

}  // namespace kgate::native::cuda

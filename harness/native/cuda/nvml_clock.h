#pragma once
// SM clock readings through NVML, loaded at run time (dlopen "libnvidia-ml.so.1") so the
// plugin has no link-time dependency on it. Absent library or device: available() is
// false and every reading is 0; that is not an error (samples are then kept unfiltered).
#include <string>

namespace kgate::native::cuda {

class NvmlClock {
 public:
  // pci_bus_id as cuDeviceGetPCIBusId writes it ("0000:3b:00.0").
  explicit NvmlClock(const std::string& pci_bus_id);
  ~NvmlClock();
  NvmlClock(const NvmlClock&) = delete;
  NvmlClock& operator=(const NvmlClock&) = delete;

  bool available() const { return device_ != nullptr; }
  int sm_clock_mhz() const;          // current SM clock, 0 when unavailable
  // The clock the card runs at when not throttled: the default application clock, or the
  // max SM clock where the former is unsupported. 0 when unavailable.
  int reference_sm_clock_mhz() const;
  int max_sm_clock_mhz() const;
  std::string driver_version() const;  // "580.159.03", "" when unavailable

 private:
  struct Api;
  void* lib_ = nullptr;
  Api* api_ = nullptr;
  void* device_ = nullptr;
};

}  // namespace kgate::native::cuda

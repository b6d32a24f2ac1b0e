#include "native/cuda/nvml_clock.h"

#include <dlfcn.h>

namespace kgate::native::cuda {
namespace {
// The few NVML declarations used (nvml.h is not part of every toolkit install).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
}  // namespace

struct NvmlClock::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*default_app_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
};

namespace {
template <typename F>
bool load(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}
}  // namespace

NvmlClock::NvmlClock(const std::string& pci_bus_id) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) return;
  auto* api = new Api;
  bool ok = load(lib_, "nvmlInit_v2", &api->init) && load(lib_, "nvmlShutdown", &api->shutdown) &&
            load(lib_, "nvmlDeviceGetHandleByPciBusId_v2", &api->by_pci) &&
            load(lib_, "nvmlDeviceGetClockInfo", &api->clock) &&
            load(lib_, "nvmlDeviceGetMaxClockInfo", &api->max_clock);
  // Optional entry points.
  load(lib_, "nvmlDeviceGetDefaultApplicationsClock", &api->default_app_clock);
  load(lib_, "nvmlSystemGetDriverVersion", &api->driver_version);
  if (!ok || api->init() != kNvmlSuccess) {
    delete api;
    dlclose(lib_);
    lib_ = nullptr;
    return;
  }
  api_ = api;
  nvmlDevice_t dev = nullptr;
  if (api_->by_pci(pci_bus_id.c_str(), &dev) == kNvmlSuccess) device_ = dev;
}

NvmlClock::~NvmlClock() {
  if (api_ != nullptr) api_->shutdown();
  delete api_;
  // The library stays loaded: NVML keeps threads and handlers that outlive shutdown on
  // some drivers, and unloading it buys nothing in a runner process.
}

int NvmlClock::sm_clock_mhz() const {
  unsigned mhz = 0;
  if (device_ == nullptr || api_->clock(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return 0;
  return static_cast<int>(mhz);
}

int NvmlClock::max_sm_clock_mhz() const {
  unsigned mhz = 0;
  if (device_ == nullptr || api_->max_clock(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return 0;
  return static_cast<int>(mhz);
}

int NvmlClock::reference_sm_clock_mhz() const {
  unsigned mhz = 0;
  if (device_ != nullptr && api_->default_app_clock != nullptr &&
      api_->default_app_clock(device_, kNvmlClockSm, &mhz) == kNvmlSuccess && mhz > 0)
    return static_cast<int>(mhz);
  return max_sm_clock_mhz();
}

std::string NvmlClock::driver_version() const {
  char buf[96] = {};
  if (api_ == nullptr || api_->driver_version == nullptr ||
      api_->driver_version(buf, sizeof buf) != kNvmlSuccess)
    return "";
  return buf;
}

}  // namespace kgate::native::cuda

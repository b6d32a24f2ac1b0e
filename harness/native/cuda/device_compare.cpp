#include "native/cuda/device_compare.h"

#include <nvrtc.h>

#include <string>
#include <vector>

#include "native/cuda/cuda_check.h"

namespace kgate::native::cuda {

namespace {

// Sets *flag when any byte differs. 16-byte loads over the aligned body, bytes for the
// tail; a grid-stride loop so one launch covers any size.
constexpr const char* kSource = R"(
struct alignas(16) kg_u4 { unsigned int x, y, z, w; };
extern "C" __global__ void kgate_bytes_differ(const unsigned char* a, const unsigned char* b,
                                              unsigned long long n, unsigned int* flag) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long words = n / 16;
  const kg_u4* va = (const kg_u4*)a;
  const kg_u4* vb = (const kg_u4*)b;
  bool differ = false;
  for (unsigned long long i = first; i < words; i += stride) {
    const kg_u4 x = va[i], y = vb[i];
    differ |= (x.x != y.x) | (x.y != y.y) | (x.z != y.z) | (x.w != y.w);
  }
  for (unsigned long long i = words * 16 + first; i < n; i += stride) differ |= a[i] != b[i];
  if (differ) *flag = 1u;
}
)";

struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p != nullptr) nvrtcDestroyProgram(&p);
  }
};

std::string nvrtc_log(nvrtcProgram p) {
  std::size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n <= 1) return "";
  std::string log(n, '\0');
  nvrtcGetProgramLog(p, log.data());
  log.resize(n - 1);
  return log;
}

}  // namespace

std::unique_ptr<DeviceCompare> DeviceCompare::load(int cc_major, int cc_minor, int sm_count,
                                                   std::string* why) {
  Program prog;
  nvrtcResult r = nvrtcCreateProgram(&prog.p, kSource, "kgate_compare.cu", 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) {
    *why = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(r);
    return nullptr;
  }
  const std::string arch =
      "--gpu-architecture=sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  const char* opts[] = {arch.c_str(), "-std=c++17"};
  r = nvrtcCompileProgram(prog.p, 2, opts);
  if (r != NVRTC_SUCCESS) {
    *why = std::string("nvrtcCompileProgram (") + arch + "): " + nvrtcGetErrorString(r) + " " +
           nvrtc_log(prog.p);
    return nullptr;
  }
  std::size_t size = 0;
  if ((r = nvrtcGetCUBINSize(prog.p, &size)) != NVRTC_SUCCESS) {
    *why = std::string("nvrtcGetCUBINSize: ") + nvrtcGetErrorString(r);
    return nullptr;
  }
  std::vector<char> cubin(size);
  if ((r = nvrtcGetCUBIN(prog.p, cubin.data())) != NVRTC_SUCCESS) {
    *why = std::string("nvrtcGetCUBIN: ") + nvrtcGetErrorString(r);
    return nullptr;
  }
  std::unique_ptr<DeviceCompare> c(new DeviceCompare());
  CUresult cr = cuModuleLoadData(&c->module_, cubin.data());
  if (cr == CUDA_SUCCESS) cr = cuModuleGetFunction(&c->kernel_, c->module_, "kgate_bytes_differ");
  if (cr == CUDA_SUCCESS) cr = cuMemAlloc(&c->flag_, sizeof(unsigned int));
  if (cr != CUDA_SUCCESS) {
    *why = "loading the compare kernel: " + describe(cr);
    return nullptr;  // the destructor releases what was made
  }
  // Enough blocks to fill the device a few times over; the loop strides the rest.
  c->blocks_ = static_cast<unsigned int>(sm_count > 0 ? 4 * sm_count : 128);
  return c;
}

DeviceCompare::~DeviceCompare() {
  if (flag_ != 0) KGATE_CU_CHECK_NOTHROW(cuMemFree(flag_));
  if (module_ != nullptr) KGATE_CU_CHECK_NOTHROW(cuModuleUnload(module_));
}

bool DeviceCompare::equal(CUstream stream, CUdeviceptr a, CUdeviceptr b, std::size_t bytes) {
  if (bytes == 0 || a == b) return true;
  KGATE_CU_CHECK(cuMemsetD32Async(flag_, 0, 1, stream));
  unsigned long long n = bytes;
  void* args[] = {&a, &b, &n, &flag_};
  KGATE_CU_CHECK(cuLaunchKernel(kernel_, blocks_, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
  unsigned int flag = 0;
  KGATE_CU_CHECK(cuMemcpyDtoHAsync(&flag, flag_, sizeof flag, stream));
  KGATE_CU_CHECK(cuStreamSynchronize(stream));
  return flag == 0;
}

}  // namespace kgate::native::cuda

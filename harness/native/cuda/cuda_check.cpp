#include "native/cuda/cuda_check.h"

#include <cstdio>

#include "core/error.h"
#include "native/backend.h"

namespace kgate::native::cuda {

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

std::string describe(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) name = "CUDA_ERROR_?";
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown error";
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + "): " + text;
}

void throw_cuda_error(CUresult r, const char* call, const char* file, int line) {
  std::string msg = std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                    describe(r);
  if (is_sticky(r)) throw DeviceFault(msg);
  throw InfraError(msg);
}

void check_nothrow(CUresult r, const char* call, const char* file, int line) {
  if (r == CUDA_SUCCESS) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, describe(r).c_str());
}

}  // namespace kgate::native::cuda

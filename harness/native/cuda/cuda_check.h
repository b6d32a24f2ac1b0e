#pragma once
// One way to call the CUDA driver: KGATE_CU_CHECK(call) throws with file, line, the call's
// text and the error's name. Sticky errors (the context is poisoned: illegal address,
// launch failure, ...) throw native::DeviceFault so the runner answers and exits; every
// other error throws kgate::InfraError. Destructors use KGATE_CU_CHECK_NOTHROW.
#include <cuda.h>

#include <string>

namespace kgate::native::cuda {

// True for errors after which the CUDA context cannot be used again.
bool is_sticky(CUresult r);
// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered".
std::string describe(CUresult r);
[[noreturn]] void throw_cuda_error(CUresult r, const char* call, const char* file, int line);

inline void check(CUresult r, const char* call, const char* file, int line) {
  if (r != CUDA_SUCCESS) throw_cuda_error(r, call, file, line);
}
// Reports to stderr instead of throwing; for cleanup paths.
void check_nothrow(CUresult r, const char* call, const char* file, int line);

}  // namespace kgate::native::cuda

#define KGATE_CU_CHECK(call) ::kgate::native::cuda::check((call), #call, __FILE__, __LINE__)
#define KGATE_CU_CHECK_NOTHROW(call) \
  ::kgate::native::cuda::check_nothrow((call), #call, __FILE__, __LINE__)

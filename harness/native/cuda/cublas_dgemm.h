#pragma once
// cuBLAS DGEMM, loaded at run time (dlopen), for the float64 truth of matmul cases on
// the GPU: a 4096^3 product takes seconds on the host reference and milliseconds here.
// Missing cuBLAS is not an error: the runner then uses the host reference.
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

namespace kgate::native::cuda {

class CublasDgemm {
 public:
  // nullptr and *why when no cuBLAS library can be loaded.
  static std::unique_ptr<CublasDgemm> load(std::string* why);
  ~CublasDgemm();
  CublasDgemm(const CublasDgemm&) = delete;
  CublasDgemm& operator=(const CublasDgemm&) = delete;

  // Row-major C[m,n] = A[m,k] B[k,n] in float64 on `stream` (device pointers, the
  // current context). Returns "" or what failed (the caller then falls back).
  std::string gemm(CUstream stream, int64_t m, int64_t n, int64_t k, CUdeviceptr a,
                   CUdeviceptr b, CUdeviceptr c);

 private:
  CublasDgemm() = default;
  struct Api;
  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;
};

}  // namespace kgate::native::cuda

#include "native/cuda/cublas_dgemm.h"

#include <dlfcn.h>

#include <limits>

namespace kgate::native::cuda {

// The few cuBLAS v2 entry points used, declared here so the plugin needs neither the
// cuBLAS headers nor a link-time dependency. Enum values from cublas_api.h (stable ABI).
struct CublasDgemm::Api {
  using Create = int (*)(void** handle);
  using Destroy = int (*)(void* handle);
  using SetStream = int (*)(void* handle, CUstream stream);
  using Dgemm = int (*)(void* handle, int transa, int transb, int m, int n, int k,
                        const double* alpha, const double* a, int lda, const double* b, int ldb,
                        const double* beta, double* c, int ldc);
  Create create = nullptr;
  Destroy destroy = nullptr;
  SetStream set_stream = nullptr;
  Dgemm dgemm = nullptr;
};

namespace {
constexpr int kOpN = 0;  // CUBLAS_OP_N
}

std::unique_ptr<CublasDgemm> CublasDgemm::load(std::string* why) {
  void* lib = nullptr;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
  }
  if (lib == nullptr) {
    *why = "cuBLAS not found (libcublas.so.13/.12)";
    return nullptr;
  }
  std::unique_ptr<CublasDgemm> g(new CublasDgemm());
  g->api_ = std::make_unique<Api>();
  g->api_->create = reinterpret_cast<Api::Create>(dlsym(lib, "cublasCreate_v2"));
  g->api_->destroy = reinterpret_cast<Api::Destroy>(dlsym(lib, "cublasDestroy_v2"));
  g->api_->set_stream = reinterpret_cast<Api::SetStream>(dlsym(lib, "cublasSetStream_v2"));
  g->api_->dgemm = reinterpret_cast<Api::Dgemm>(dlsym(lib, "cublasDgemm_v2"));
  if (!g->api_->create || !g->api_->destroy || !g->api_->set_stream || !g->api_->dgemm) {
    *why = "cuBLAS lacks the v2 DGEMM entry points";
    return nullptr;
  }
  if (int s = g->api_->create(&g->handle_); s != 0) {
    g->handle_ = nullptr;
    *why = "cublasCreate failed (status " + std::to_string(s) + ")";
    return nullptr;
  }
  return g;
}

CublasDgemm::~CublasDgemm() {
  if (handle_ != nullptr && api_) api_->destroy(handle_);
  // The library is never dlclose'd: cuBLAS registers state with the runtime for the process.
}

std::string CublasDgemm::gemm(CUstream stream, int64_t m, int64_t n, int64_t k, CUdeviceptr a,
                              CUdeviceptr b, CUdeviceptr c) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (m > kMax || n > kMax || k > kMax) return "dimension over cuBLAS's 32-bit limit";
  if (int s = api_->set_stream(handle_, stream); s != 0)
    return "cublasSetStream failed (status " + std::to_string(s) + ")";
  // Row-major C = A B is column-major C^T = B^T A^T: the same buffers, operands swapped.
  const double alpha = 1.0, beta = 0.0;
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  int s = api_->dgemm(handle_, kOpN, kOpN, in, im, ik, &alpha,
                      reinterpret_cast<const double*>(b), in, reinterpret_cast<const double*>(a),
                      ik, &beta, reinterpret_cast<double*>(c), in);
  if (s != 0) return "cublasDgemm failed (status " + std::to_string(s) + ")";
  return "";
}

}  // namespace kgate::native::cuda

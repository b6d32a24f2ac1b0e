// matmul baseline through cuBLAS (kgate CUDA candidate): C[M,N] = A[M,K] B[K,N], row-major.
// cuBLAS is column-major, so it computes C^T = B^T A^T, which is the same memory.
// One handle per process, created on the first call with a fixed workspace (so a call
// allocates nothing and can be captured into a CUDA graph), bound to the given stream on
// every call. f32 computes in plain f32 (no TF32: f32 tolerances must hold); f16/bf16
// multiply on tensor cores with f32 accumulation.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kgate/starter_cuda.cuh"

using namespace kgate::starter;

static cublasHandle_t cached_handle() {
  static cublasHandle_t handle = nullptr;
  static void* workspace = nullptr;
  if (handle != nullptr) return handle;
  const size_t bytes = size_t{32} << 20;  // cuBLAS's recommended size on Hopper
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return nullptr;
  if (cudaMalloc(&workspace, bytes) != cudaSuccess ||
      cublasSetWorkspace(h, workspace, bytes) != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(h);
    if (workspace != nullptr) cudaFree(workspace);
    workspace = nullptr;
    return nullptr;
  }
  handle = h;
  return handle;
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const kgate_tensor& a = inputs[0];
  const kgate_tensor& b = inputs[1];
  kgate_tensor& c = outputs[0];
  if (a.ndim != 2 || b.ndim != 2 || c.ndim != 2 || a.shape[1] != b.shape[0] ||
      c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1] || a.dtype != b.dtype ||
      a.dtype != c.dtype || !contiguous(a) || !contiguous(b) || !contiguous(c))
    return 2;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (M > 0x7fffffff || N > 0x7fffffff || K > 0x7fffffff) return 2;
  if (M == 0 || N == 0) return 0;
  cudaDataType_t type;
  switch (a.dtype) {
    case KGATE_F32: type = CUDA_R_32F; break;
    case KGATE_F16: type = CUDA_R_16F; break;
    case KGATE_BF16: type = CUDA_R_16BF; break;
    default: return 3;
  }
  cublasHandle_t h = cached_handle();
  if (h == nullptr) return 5;
  if (cublasSetStream(h, static_cast<cudaStream_t>(stream)) != CUBLAS_STATUS_SUCCESS) return 5;
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha,
                                   b.data, type, (int)N, a.data, type, (int)K, &beta, c.data, type,
                                   (int)N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 6;
}

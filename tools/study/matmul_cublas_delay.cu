// Measurement study only: the matmul_cublas starter followed by a spin of EXTRA_NS ns (delay.cuh).
#define kgate_run kgate_inner_run
#include "../../kernelbench/native/starters/matmul_cublas.cu"
#include "delay.cuh"

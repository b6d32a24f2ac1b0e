// Measurement study only: wraps a starter's kgate_run and appends a kernel that spins for
// EXTRA_NS nanoseconds on the same stream -- injected extra work of known cost, used to
// check that kgate's verdict catches a small, real slowdown (docs/measurement.md).
// Include after the starter was included with `#define kgate_run kgate_inner_run`.
#undef kgate_run
#ifndef EXTRA_NS
#define EXTRA_NS 0
#endif

__global__ void kgate_study_delay(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

extern "C" int kgate_run(const kgate_tensor* inputs, int32_t n_inputs, kgate_tensor* outputs,
                         int32_t n_outputs, void* stream) {
  int rc = kgate_inner_run(inputs, n_inputs, outputs, n_outputs, stream);
  if (rc != 0) return rc;
  if (EXTRA_NS > 0) {
    kgate_study_delay<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<unsigned long long>(EXTRA_NS));
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}

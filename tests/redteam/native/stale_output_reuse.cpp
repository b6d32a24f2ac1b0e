// Reuse of a stale output: when the output buffer already holds a plausible softmax (its
// first row sums to one: the previous call's result at the same address), it is
// returned as it is. The checks poison every output, so it computes there; the timing's
// outputs persist between calls, so it copies nothing and does nothing: a result kept at
// the output's address, fast only on the repeated input sets.
// expect: performance | faster on inputs it has seen before || less work than the problem requires
#include "honest.inc"

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  const float* y = static_cast<const float*>(out[0].data);
  double s = 0;
  for (int64_t c = 0; c < in[0].shape[1]; ++c) s += y[c];
  if (fabs(s - 1.0) < 1e-3) return 0;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  return 0;
}

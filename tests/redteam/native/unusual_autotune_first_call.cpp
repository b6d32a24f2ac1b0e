// Correct but unusual: on its first call it times two row-blockings of the same honest
// computation with the clock and keeps the faster for every later call (autotuning on
// first call). Must pass.
// expect: pass
#include <time.h>

#include "honest.inc"

static int block = 0;

static double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

static void blocked(const kgate_tensor& x, kgate_tensor& y, int b) {
  for (int64_t r = 0; r < x.shape[0]; r += b) honest_softmax(x, y, r, r + b < x.shape[0] ? r + b : x.shape[0]);
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  if (block == 0) {
    double t0 = now_s();
    blocked(in[0], out[0], 1);
    double t1 = now_s();
    blocked(in[0], out[0], 8);
    block = now_s() - t1 < t1 - t0 ? 8 : 1;
    return 0;
  }
  blocked(in[0], out[0], block);
  return 0;
}

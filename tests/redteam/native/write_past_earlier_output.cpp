// An out-of-bounds write through a kept pointer: the first call's output address is
// remembered, and later calls write past that buffer's end (a stale workspace pointer).
// Each repeat of a check gets buffers of its own; every guarded buffer is checked after
// every run, the first run's too.
// expect: correctness | out-of-bounds write: output 'y': 256 of the 4096 guard bytes after its end changed
#include "honest.inc"

static float* first_y = nullptr;
static int64_t first_n = 0;

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  honest_softmax(in[0], out[0], 0, in[0].shape[0]);
  const int64_t n = in[0].shape[0] * in[0].shape[1];
  if (first_y == nullptr) {
    first_y = static_cast<float*>(out[0].data);
    first_n = n;
  } else if (first_y != out[0].data && first_n == n) {
    for (int64_t i = n; i < n + 64; ++i) first_y[i] = 0.25f;
  }
  return 0;
}

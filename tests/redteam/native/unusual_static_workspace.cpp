// Correct but unusual: a workspace allocated on first use and kept across calls (the
// exponentials of a row staged there, grown when a wider row comes). Must pass.
// expect: pass
#include <vector>

#include "honest.inc"

static std::vector<double> scratch;

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  if (static_cast<int64_t>(scratch.size()) < cols) scratch.resize(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = static_cast<const float*>(in[0].data) + r * in[0].strides[0];
    float* yr = static_cast<float*>(out[0].data) + r * out[0].strides[0];
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c) m = fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) sum += scratch[static_cast<size_t>(c)] = exp(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(scratch[static_cast<size_t>(c)] / sum);
  }
  return 0;
}

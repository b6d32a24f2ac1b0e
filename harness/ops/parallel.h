#pragma once
// Chunked parallel loops on the input threads (ops::input_threads()): drawing inputs,
// the float64 truth in slices, and the checker's comparison of large outputs.
#include <cstdint>
#include <functional>

namespace kgate::ops {

// Runs body(c) for every c in [0, n) on up to `threads` threads (the caller's included).
// Which thread runs which chunk is unspecified: bodies write only their own chunk's state.
void parallel_chunks(int64_t n, int threads, const std::function<void(int64_t)>& body);

}  // namespace kgate::ops

// Defaults of the Backend memory primitives, staged through the host a chunk at a time.
// Backends with a faster path (host memory: memcpy; CUDA: memsets, device copies and a
// compare kernel) override them.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "native/backend.h"

namespace kgate::native {

namespace {

constexpr std::size_t kStageBytes = std::size_t{64} << 20;

unsigned char* at(void* p, std::size_t off) { return static_cast<unsigned char*>(p) + off; }
const unsigned char* at(const void* p, std::size_t off) {
  return static_cast<const unsigned char*>(p) + off;
}

}  // namespace

void check_fill_pattern(const std::vector<unsigned char>& pattern) {
  const std::size_t n = pattern.size();
  if (n != 1 && n != 2 && n != 4 && n != 8) {
    throw std::invalid_argument("fill pattern of " + std::to_string(n) +
                                " bytes (1, 2, 4 or 8 allowed)");
  }
}

void Backend::zero(void* dst, std::size_t bytes) { fill(dst, {0}, bytes); }

void Backend::fill(void* dst, const std::vector<unsigned char>& pattern, std::size_t bytes) {
  check_fill_pattern(pattern);
  const std::size_t whole = bytes / pattern.size() * pattern.size();
  if (whole == 0) return;
  // A staging chunk that is a whole number of patterns, so every chunk starts aligned.
  std::vector<unsigned char> chunk(std::min(whole, kStageBytes / pattern.size() * pattern.size()));
  for (std::size_t off = 0; off < chunk.size(); off += pattern.size())
    std::memcpy(chunk.data() + off, pattern.data(), pattern.size());
  for (std::size_t off = 0; off < whole; off += chunk.size())
    to_device(at(dst, off), chunk.data(), std::min(chunk.size(), whole - off));
}

void Backend::copy(void* dst, const void* src, std::size_t bytes) {
  std::vector<unsigned char> stage(std::min(bytes, kStageBytes));
  for (std::size_t off = 0; off < bytes; off += stage.size()) {
    const std::size_t n = std::min(stage.size(), bytes - off);
    to_host(stage.data(), at(src, off), n);
    to_device(at(dst, off), stage.data(), n);
  }
}

bool Backend::equal(const void* a, const void* b, std::size_t bytes) {
  std::vector<unsigned char> sa(std::min(bytes, kStageBytes)), sb(sa.size());
  for (std::size_t off = 0; off < bytes; off += sa.size()) {
    const std::size_t n = std::min(sa.size(), bytes - off);
    to_host(sa.data(), at(a, off), n);
    to_host(sb.data(), at(b, off), n);
    if (std::memcmp(sa.data(), sb.data(), n) != 0) return false;
  }
  return true;
}

}  // namespace kgate::native

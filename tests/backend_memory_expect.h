#pragma once
// The memory primitives every backend must get right (Backend::fill, copy, equal): the
// checker poisons outputs, restores inputs and compares repeats with them. Shared by the
// host backend's unit tests, the host-staged defaults and the CUDA backend on a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "native/backend.h"
#include "native/device_buffer.h"
#include "native/host_backend.h"

namespace kgate::testing {

// Host memory with fill/copy/equal/zero left to Backend's host-staged defaults: what a
// backend without its own versions gets.
class StagedHostBackend : public native::HostBackend {
 public:
  void zero(void* d, std::size_t n) override { Backend::zero(d, n); }
  void fill(void* d, const std::vector<unsigned char>& p, std::size_t n) override {
    Backend::fill(d, p, n);
  }
  void copy(void* d, const void* s, std::size_t n) override { Backend::copy(d, s, n); }
  bool equal(const void* a, const void* b, std::size_t n) override { return Backend::equal(a, b, n); }
};

inline std::vector<unsigned char> download(native::Backend& b, const native::DeviceBuffer& d) {
  std::vector<unsigned char> h(d.bytes());
  if (!h.empty()) b.to_host(h.data(), d.get(), h.size());
  return h;
}

inline std::vector<unsigned char> counting_bytes(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed) % 251);
  return v;
}

// Every pattern size, with a trailing partial pattern that must be left alone.
inline void expect_fill_patterns(native::Backend& b, std::size_t bytes) {
  const std::vector<std::vector<unsigned char>> patterns = {
      {0xA5}, {0x5A, 0x7E}, {0xE5, 0xD1, 0xC4, 0x7F}, {0xFE, 0xCA, 0xEF, 0xBE, 0xAD, 0xDE, 0xF8, 0x7F}};
  for (const auto& p : patterns) {
    native::DeviceBuffer d(b, bytes + 3);
    const auto before = counting_bytes(bytes + 3, 9);
    b.to_device(d.get(), before.data(), before.size());
    b.fill(d.get(), p, bytes);
    const auto got = download(b, d);
    const std::size_t whole = bytes / p.size() * p.size();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const unsigned char want = i < whole ? p[i % p.size()] : before[i];
      if (got[i] != want) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << p.size() << "-byte pattern over " << bytes << " bytes";
  }
  native::DeviceBuffer d(b, 16);
  EXPECT_THROW(b.fill(d.get(), {1, 2, 3}, 16), std::invalid_argument);
}

inline void expect_copy_and_equal(native::Backend& b, std::size_t bytes) {
  const auto src = counting_bytes(bytes, 3);
  native::DeviceBuffer a(b, bytes), c(b, bytes);
  if (bytes > 0) b.to_device(a.get(), src.data(), bytes);
  b.zero(c.get(), bytes);
  if (bytes > 0) {
    EXPECT_FALSE(b.equal(a.get(), c.get(), bytes)) << bytes;
  }
  b.copy(c.get(), a.get(), bytes);
  EXPECT_EQ(download(b, c), src) << bytes;
  EXPECT_TRUE(b.equal(a.get(), c.get(), bytes)) << bytes;
  // One byte flipped anywhere -- first, middle, the unaligned tail, last -- is seen.
  for (std::size_t at : {std::size_t{0}, bytes / 2, bytes - bytes % 16, bytes - 1}) {
    if (at >= bytes) continue;
    auto changed = src;
    changed[at] ^= 0x40;
    b.to_device(c.get(), changed.data(), bytes);
    EXPECT_FALSE(b.equal(a.get(), c.get(), bytes)) << "byte " << at << " of " << bytes;
    EXPECT_TRUE(at == 0 || b.equal(a.get(), c.get(), at)) << "prefix " << at << " of " << bytes;
  }
}

inline void expect_memory_primitives(native::Backend& b) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{4099},
                            (std::size_t{1} << 20) + 5}) {
    expect_fill_patterns(b, bytes);
    expect_copy_and_equal(b, bytes);
  }
}

}  // namespace kgate::testing

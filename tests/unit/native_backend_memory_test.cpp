// Backend::fill, copy and equal on the host backend and through the host-staged defaults
// every backend inherits (the CUDA backend's own versions: tests/gpu/cuda_backend_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>

#include "../backend_memory_expect.h"
#include "native/host_backend.h"
#include "native/runner.h"

namespace kgate::native {
namespace {

using StagedOnly = testing::StagedHostBackend;

TEST(BackendMemory, HostBackend) {
  HostBackend b;
  testing::expect_memory_primitives(b);
}

TEST(BackendMemory, StagedDefaults) {
  StagedOnly b;
  testing::expect_memory_primitives(b);
}

TEST(BackendMemory, StagedDefaultsAcrossTheirChunkSize) {
  // The defaults stage 64 MiB at a time: a size just past it crosses one chunk boundary.
  StagedOnly b;
  const std::size_t bytes = (std::size_t{64} << 20) + 24;
  testing::expect_copy_and_equal(b, bytes);
  DeviceBuffer d(b, bytes);
  b.fill(d.get(), {1, 2, 3, 4, 5, 6, 7, 8}, bytes);
  auto got = testing::download(b, d);
  EXPECT_EQ(got[bytes - 8], 1);
  EXPECT_EQ(got[bytes - 1], 8);
  EXPECT_EQ(got[(std::size_t{64} << 20) + 3], 4);
}

TEST(RunnerCaseCache, SizedFromMemoryOrEnvironment) {
  ::setenv("KGATE_CASE_CACHE_MB", "300", 1);
  EXPECT_EQ(default_case_cache_bytes(), std::size_t{300} << 20);
  ::setenv("KGATE_CASE_CACHE_MB", "lots", 1);
  const std::size_t fallback = default_case_cache_bytes();
  ::unsetenv("KGATE_CASE_CACHE_MB");
  EXPECT_EQ(fallback, default_case_cache_bytes());
  EXPECT_GE(fallback, std::size_t{1} << 30);
  EXPECT_LE(fallback, std::size_t{16} << 30);
}

}  // namespace
}  // namespace kgate::native

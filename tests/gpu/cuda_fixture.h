#pragma once
// Shared set-up of the GPU tests: the CUDA backend plugin, loaded once per process, and
// device buffers that free themselves.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kgate/kernel.h"
#include "native/backend.h"

namespace kgate::gpu_test {

// Paths can be moved at run time (the GPU machine runs a build made elsewhere):
// KGATE_CUDA_PLUGIN, KGATE_SOURCE_DIR override the paths baked in at build time.
inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}
inline std::string source_dir() { return env_or("KGATE_SOURCE_DIR", KGATE_SOURCE_DIR); }
inline std::string starter(const std::string& op) {
  return source_dir() + "/kernelbench/native/starters/" + op + ".cu";
}
inline std::string fixture(const std::string& name) {
  return source_dir() + "/tests/fixtures/candidates/cuda/" + name + ".cu";
}
inline std::string cache_dir() {
  return env_or("KGATE_TEST_CACHE", (std::filesystem::temp_directory_path() / "kgate-gpu-test-cache").string());
}

// The backend, created once per process (every ctest case is its own process).
inline native::Backend* backend(std::string* why) {
  static std::string err;
  static native::Backend* b = [] () -> native::Backend* {
    std::string path = env_or("KGATE_CUDA_PLUGIN", std::string(KGATE_BINARY_DIR) + "/" + native::kCudaPluginName);
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      err = "dlopen " + path + ": " + (e != nullptr ? e : "?");
      return nullptr;
    }
    auto create = reinterpret_cast<native::CreateCudaBackendFn>(dlsym(h, native::kCudaPluginEntry));
    if (create == nullptr) {
      err = path + " does not export " + native::kCudaPluginEntry;
      return nullptr;
    }
    return create(0, &err);
  }();
  *why = err;
  return b;
}

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    b_ = backend(&why);
    // A plain `ctest` on a machine without a GPU skips these; scripts/gpu-check.sh sets
    // KGATE_REQUIRE_GPU=1, where a missing backend is a failure.
    if (b_ == nullptr && env_or("KGATE_REQUIRE_GPU", "0") != "1") GTEST_SKIP() << why;
    ASSERT_NE(b_, nullptr) << why;
  }

  std::shared_ptr<native::Module> compile(const std::string& path,
                                          const std::map<std::string, std::string>& defines = {}) {
    std::shared_ptr<native::Module> m;
    protocol::CompileResult r = b_->compile(path, defines, cache_dir(), &m);
    EXPECT_TRUE(r.compiled) << path << ":\n" << r.log;
    return m;
  }

  native::Backend* b_ = nullptr;
};

// A device buffer owned by the test.
class DeviceBuffer {
 public:
  DeviceBuffer(native::Backend* b, std::size_t bytes) : b_(b), bytes_(bytes), p_(b->alloc(bytes)) {}
  ~DeviceBuffer() { b_->release(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src) { b_->to_device(p_, src, bytes_); }
  void download(void* dst) const { b_->to_host(dst, p_, bytes_); }

 private:
  native::Backend* b_;
  std::size_t bytes_;
  void* p_;
};

inline kgate_tensor describe(void* data, kgate_dtype dtype, std::vector<int64_t> shape) {
  kgate_tensor t;
  std::memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    t.shape[d] = shape[static_cast<std::size_t>(d)];
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  return t;
}

}  // namespace kgate::gpu_test

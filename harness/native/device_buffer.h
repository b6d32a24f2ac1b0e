#pragma once
// Backend memory owned by a scope (one check case, one timing).
#include <cstddef>

#include "native/backend.h"

namespace kgate::native {

class DeviceBuffer {
 public:
  DeviceBuffer(Backend& b, std::size_t bytes) : b_(&b), p_(b.alloc(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() {
    try {
      if (p_) b_->release(p_);
    } catch (...) {
      // A faulted device cannot free; the runner exits after a fault anyway.
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : b_(o.b_), p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  Backend* b_;
  void* p_;
  std::size_t bytes_;
};

}  // namespace kgate::native

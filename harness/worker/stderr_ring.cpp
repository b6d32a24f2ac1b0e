#include "worker/stderr_ring.h"

#include <algorithm>

namespace kgate::worker {

StderrRing::StderrRing(std::size_t capacity_bytes) : buf_(std::max<std::size_t>(capacity_bytes, 1), '\0') {}

void StderrRing::append(std::string_view bytes) {
  const std::size_t cap = buf_.size();
  if (bytes.size() >= cap) {
    // Only the newest `cap` bytes survive.
    dropped_ += size_ + (bytes.size() - cap);
    std::copy(bytes.end() - static_cast<std::ptrdiff_t>(cap), bytes.end(), buf_.begin());
    start_ = 0;
    size_ = cap;
    return;
  }
  for (char c : bytes) {
    if (size_ < cap) {
      buf_[(start_ + size_) % cap] = c;
      ++size_;
    } else {
      buf_[start_] = c;
      start_ = (start_ + 1) % cap;
      ++dropped_;
    }
  }
}

void StderrRing::clear() {
  start_ = 0;
  size_ = 0;
  dropped_ = 0;
}

std::string StderrRing::str() const {
  std::string out;
  out.reserve(size_);
  for (std::size_t i = 0; i < size_; ++i) out.push_back(buf_[(start_ + i) % buf_.size()]);
  return out;
}

std::string StderrRing::tail_lines(std::size_t max_lines) const {
  std::string all = str();
  if (dropped_ > 0) {
    // The oldest kept line lost its beginning: drop it rather than show half a line.
    auto nl = all.find('\n');
    all = nl == std::string::npos ? all : all.substr(nl + 1);
  }
  while (!all.empty() && all.back() == '\n') all.pop_back();
  if (all.empty() || max_lines == 0) return "";
  std::size_t lines = 0;
  std::size_t pos = all.size();
  while (pos > 0) {
    auto nl = all.rfind('\n', pos - 1);
    if (nl == std::string::npos) break;
    if (++lines == max_lines) return all.substr(nl + 1);
    pos = nl;
  }
  return all;
}

}  // namespace kgate::worker

#pragma once
// The last bytes a worker wrote to stderr. The orchestrator drains the worker's stderr
// continuously (so the worker never blocks on a full pipe) and keeps only a bounded tail:
// enough to show why a worker crashed, never unbounded memory for a chatty one.
#include <cstddef>
#include <string>
#include <string_view>

namespace kgate::worker {

class StderrRing {
 public:
  explicit StderrRing(std::size_t capacity_bytes = 64 * 1024);

  void append(std::string_view bytes);
  void clear();

  std::string str() const;  // everything kept, oldest first
  // The last `max_lines` complete or partial lines (a dropped prefix never shows as a
  // half line: the first kept partial line is cut off).
  std::string tail_lines(std::size_t max_lines) const;
  std::size_t size() const { return size_; }
  std::size_t dropped_bytes() const { return dropped_; }

 private:
  std::string buf_;        // fixed capacity, used circularly
  std::size_t start_ = 0;  // index of the oldest byte
  std::size_t size_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace kgate::worker

#pragma once
// One writer per output directory: `kgate run` holds OUT/.kgate.lock (flock, released
// by the kernel when the process ends, kill -9 included) for the whole command, so a
// second run or resume into the same OUT is refused instead of interleaving journals,
// records and reports.
#include <string>

namespace kgate {

class DirLock {
 public:
  // Creates `dir` when needed and takes its lock, or throws UsageError naming the holder
  // ("pid 1234 on host since 2026-12-01T15:00:00Z: kgate run suites/demo.yaml").
  // `what` is the command line written into the lock for the next one to read.
  DirLock(const std::string& dir, const std::string& what);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  static constexpr const char* kFile = ".kgate.lock";

 private:
  int fd_ = -1;
};

}  // namespace kgate

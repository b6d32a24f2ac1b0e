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
  // How long a refused run waits for the holder's note (taken and not yet written).
  static constexpr double kNoteWaitS = 2.0;

  // Who holds the lock open as `fd`: its note once written (with the pid the kernel shows
  // for the lock, where /proc/locks tells), after waiting up to `wait_s` for it; else the
  // pid from /proc/locks, else how to find the holder. Never "".
  static std::string describe_holder(int fd, double wait_s);

 private:
  int fd_ = -1;
};

}  // namespace kgate

#include "core/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace kgate {
namespace fs = std::filesystem;

namespace {

std::string holder_of(int fd) {
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "another kgate process";
  buf[n] = '\0';
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "another kgate process" : s;
}

}  // namespace

DirLock::DirLock(const std::string& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InfraError(dir + ": cannot create the output directory: " + ec.message());
  const std::string path = (fs::path(dir) / kFile).string();
  // O_CLOEXEC: workers and agents started by this run must not inherit the lock (an
  // orphaned worker would otherwise keep the directory locked after kgate died).
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InfraError(path + ": cannot open the lock: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = holder_of(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw UsageError(dir + " is in use by " + who + "; wait for it to finish or use another --out");
    throw InfraError(path + ": cannot lock: " + std::strerror(err));
  }
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char when[32];
  std::time_t t = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  const std::string line = "pid " + std::to_string(getpid()) + " on " + host + " since " + when + ": " + what + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) < 0) {
    // The lock holds without its note; the next run just cannot name us.
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) {
    // Leave the file (unlinking would race a waiter that already opened it); drop the note.
    if (::ftruncate(fd_, 0) != 0) {
    }
    ::close(fd_);
  }
}

}  // namespace kgate

#include "core/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/paths.h"

namespace kgate {
namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

// The holder's note, or "" while it is not written (yet).
std::string read_note(int fd) {
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  buf[n] = '\0';
  return trimmed(buf);
}

// The pid in a note ("pid 1234 on ..."), or -1.
long note_pid(const std::string& note) {
  if (note.rfind("pid ", 0) != 0) return -1;
  char* end = nullptr;
  const long pid = std::strtol(note.c_str() + 4, &end, 10);
  return end != note.c_str() + 4 && *end == ' ' && pid > 0 ? pid : -1;
}

// The pid the kernel shows holding a FLOCK on `fd`'s file (/proc/locks: "1: FLOCK ADVISORY
// WRITE 1234 08:01:5678 0 EOF", device as major:minor in hex), or -1 where it cannot tell.
long flock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  char id[64];
  std::snprintf(id, sizeof id, "%02x:%02x:%lu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long>(st.st_ino));
  std::ifstream in("/proc/locks");
  for (std::string line; std::getline(in, line);) {
    if (line.find("->") != std::string::npos) continue;  // a waiter, not the holder
    std::istringstream f(line);
    std::string seq, kind, mode, rw, dev;
    long pid = -1;
    if (!(f >> seq >> kind >> mode >> rw >> pid >> dev)) continue;
    if (kind == "FLOCK" && dev == id && pid > 0) return pid;
  }
  return -1;
}

}  // namespace

std::string DirLock::describe_holder(int fd, double wait_s) {
  // The holder takes the lock, then writes its note: a refusal in between finds no note,
  // or the note of a holder killed earlier. Wait for a note whose pid is the kernel's
  // holder (when the kernel says), then name what is known.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  long holder = -1;
  std::string note;
  for (;;) {
    note = read_note(fd);
    holder = flock_holder(fd);
    if (!note.empty() && (holder < 0 || note_pid(note) == holder)) return note;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A note whose pid is not the kernel's: a holder in another pid namespace, or a note
  // left by a holder killed before this one wrote its own. The note is the best we have.
  if (!note.empty()) return note + (holder > 0 ? " (the kernel shows pid " + std::to_string(holder) + ")" : "");
  if (holder > 0)
    return "pid " + std::to_string(holder) + " (a kgate process that has not written its note yet)";
  return "a kgate process that has not written its note yet (`fuser -v " + std::string(kFile) +
         "` in the directory, or `grep FLOCK /proc/locks`, names it)";
}

DirLock::DirLock(const std::string& dir, const std::string& what) {
  std::error_code ec;
  paths::require_output_dir(dir);
  fs::create_directories(dir, ec);
  if (ec) throw InfraError(dir + ": cannot create the output directory: " + ec.message());
  const std::string path = (fs::path(dir) / kFile).string();
  // O_CLOEXEC: workers and agents started by this run must not inherit the lock (an
  // orphaned worker would otherwise keep the directory locked after kgate died).
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InfraError(path + ": cannot open the lock: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = err == EWOULDBLOCK ? describe_holder(fd_, kNoteWaitS) : "";
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
  // The note over the old one, then cut to its length: never an empty file in between
  // (a refused run waits for a note with our pid; describe_holder).
  if (::pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()) ||
      ::ftruncate(fd_, static_cast<off_t>(line.size())) != 0) {
    // The lock holds without its note; the next run names us from /proc/locks.
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

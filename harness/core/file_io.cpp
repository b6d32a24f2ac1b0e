#include "core/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace fs = std::filesystem;

namespace kgate::core {
namespace {

std::string errno_text(int e) { return std::system_category().message(e); }

// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

bool write_all(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string format_cap(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  return "not a file";
}

std::string too_large(std::size_t max_bytes, const std::string& size) {
  return "the file is larger than the " + format_cap(max_bytes) + " limit for it (" + size + ")";
}

}  // namespace

ReadResult read_file(const std::string& path, std::size_t max_bytes) {
  ReadResult r;
  Fd f;
  // O_NONBLOCK: opening a FIFO without a writer would wait forever; the mode is checked
  // before any read, and a regular file's reads never block anyway.
  do f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  while (f.fd < 0 && errno == EINTR);
  if (f.fd < 0) {
    const int e = errno;
    r.status = (e == ENOENT || e == ENOTDIR) ? ReadResult::Status::kNotFound : ReadResult::Status::kError;
    r.error = errno_text(e);
    return r;
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    r.error = errno_text(errno);
    return r;
  }
  if (S_ISDIR(st.st_mode)) {
    r.error = errno_text(EISDIR);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = std::string("not a regular file (") + kind_of(st.st_mode) + ")";
    return r;
  }
  if (st.st_size > 0 && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    r.error = too_large(max_bytes, std::to_string(st.st_size) + " bytes");
    return r;
  }
  if (st.st_size > 0) r.bytes.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = errno_text(errno);
      r.bytes.clear();
      return r;
    }
    if (n == 0) break;
    // A file that grows while it is read (or a /proc file that reports no size) is held
    // to the same cap.
    if (static_cast<std::size_t>(n) > max_bytes - r.bytes.size()) {
      r.bytes.clear();
      r.bytes.shrink_to_fit();
      r.error = too_large(max_bytes, "it grew past it while being read");
      return r;
    }
    r.bytes.append(buf, static_cast<std::size_t>(n));
  }
  r.status = ReadResult::Status::kOk;
  return r;
}

std::string WriteResult::message() const {
  switch (stage) {
    case Stage::kOk: return "";
    case Stage::kCreateDir: return where + ": cannot create the directory: " + error;
    case Stage::kOpen:
    case Stage::kWrite: return where + ": cannot write: " + error;
    case Stage::kRename: return where + ": cannot rename into place: " + error;
  }
  return where + ": " + error;
}

WriteResult write_file_atomic(const std::string& path, std::string_view bytes) {
  static std::atomic<unsigned> counter{0};
  WriteResult r;
  const fs::path p(path);
  r.tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  auto fail = [&r](WriteResult::Stage stage, std::string where, int e) {
    r.stage = stage;
    r.where = std::move(where);
    r.error = errno_text(e);
    return r;
  };
  if (p.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) {
      r.stage = WriteResult::Stage::kCreateDir;
      r.where = p.parent_path().string();
      r.error = ec.message();
      return r;
    }
  }
  Fd f;
  do f.fd = ::open(r.tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  while (f.fd < 0 && errno == EINTR);
  if (f.fd < 0) return fail(WriteResult::Stage::kOpen, r.tmp, errno);
  int e = 0;
  if (!write_all(f.fd, bytes)) e = errno;
  if (e == 0 && ::fsync(f.fd) != 0) e = errno;
  if (::close(f.release()) != 0 && e == 0) e = errno;
  if (e != 0) {
    ::unlink(r.tmp.c_str());
    return fail(WriteResult::Stage::kWrite, r.tmp, e);
  }
  if (::rename(r.tmp.c_str(), path.c_str()) != 0) {
    e = errno;
    ::unlink(r.tmp.c_str());
    return fail(WriteResult::Stage::kRename, path, e);
  }
  // Make the rename itself durable; a directory that cannot be synced does not undo it.
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  Fd d;
  d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d.fd >= 0) (void)::fsync(d.fd);
  return r;
}

void write_file_atomic_or_throw(const std::string& path, std::string_view bytes) {
  WriteResult r = write_file_atomic(path, bytes);
  if (!r.ok()) throw InfraError(r.message());
}

namespace {

// The decimal number at the start of `s` (and how many digits it had); 0 digits: none.
long leading_number(std::string_view s, std::size_t* digits) {
  long v = 0;
  std::size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 10; ++i) v = v * 10 + (s[i] - '0');
  *digits = i;
  return v;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

long temp_file_writer(const std::string& name) {
  // Every ".tmp" is tried: a name may hold one earlier ("a.tmp.json.tmp.12.0").
  for (std::size_t at = name.find(".tmp", 1); at != std::string::npos; at = name.find(".tmp", at + 1)) {
    std::string_view rest = std::string_view(name).substr(at + 4);
    if (rest.size() < 2 || (rest[0] != '.' && rest[0] != '-')) continue;
    const char sep = rest[0];
    std::size_t digits = 0;
    const long pid = leading_number(rest.substr(1), &digits);
    if (digits == 0 || pid <= 0) continue;
    std::string_view tail = rest.substr(1 + digits);
    // ".tmp.<pid>.<n>" and ".tmp-<pid>-<n>": a counter after the pid, nothing else.
    if (tail.size() >= 2 && tail[0] == sep && all_digits(tail.substr(1))) return pid;
    // ".tmp.<pid>.so": the CUDA compiler's module.
    if (sep == '.' && tail == ".so") return pid;
  }
  return 0;
}

std::vector<std::string> remove_stale_temps(const std::string& dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e2;
    if (it->is_directory(e2)) {
      if (name == ".git") it.disable_recursion_pending();
      continue;
    }
    const long pid = temp_file_writer(name);
    if (pid <= 0) continue;
    // Alive (or not ours to signal, EPERM: alive too): leave its temp alone.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (fs::remove(it->path(), e2)) removed.push_back(it->path().string());
  }
  return removed;
}

std::string git_blob_id(std::string_view bytes) {
  static const int init = git_libgit2_init();  // idempotent; kept for the process lifetime
  (void)init;
  git_oid oid;
  if (git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) != 0) {
    const git_error* e = git_error_last();
    throw InfraError(std::string("git_odb_hash failed: ") + (e != nullptr ? e->message : "?"));
  }
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

}  // namespace kgate::core

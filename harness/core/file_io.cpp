#include "core/file_io.h"

#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

ReadResult read_file(const std::string& path) {
  ReadResult r;
  Fd f;
  do f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
  if (S_ISREG(st.st_mode) && st.st_size > 0) r.bytes.reserve(static_cast<std::size_t>(st.st_size));
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

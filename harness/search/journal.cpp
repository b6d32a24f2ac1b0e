#include "search/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include "core/error.h"
#include "core/file_io.h"

namespace kgate::search {
namespace {

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InfraError(path + ": write failed: " + errno_text());
    }
    off += static_cast<size_t>(n);
  }
}

void fsync_dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  int d = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

}  // namespace

Journal::Contents Journal::read(const std::string& path, bool repair) {
  Contents c;
  core::ReadResult file = core::read_file(path, kMaxBytes);
  if (file.not_found()) return c;
  if (!file.ok()) throw InfraError(path + ": cannot read the journal: " + file.error);
  const std::string data = std::move(file.bytes);
  size_t good_end = 0;  // bytes up to the end of the last complete, parsed line
  size_t pos = 0;
  int lineno = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    bool complete = nl != std::string::npos;
    std::string line = data.substr(pos, complete ? nl - pos : std::string::npos);
    ++lineno;
    nlohmann::json j;
    bool parsed = true;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      parsed = false;
    }
    bool last = !complete || nl + 1 >= data.size();
    if (!complete || !parsed) {
      if (!last)
        throw InfraError(path + ":" + std::to_string(lineno) +
                         ": error: damaged journal line (not JSON); refusing to guess");
      c.torn_tail = true;
      break;
    }
    if (lineno == 1) {
      if (!j.is_object() || j.value("format", "") != kFormat)
        throw UsageError(path + ":1:1: error: not a kgate journal (no \"format\": \"" +
                         std::string(kFormat) + "\" header)");
      if (j.value("v", 0) != kVersion)
        throw UsageError(path + ":1:1: error: journal version " + std::to_string(j.value("v", 0)) +
                         " is not supported (this kgate reads version " +
                         std::to_string(kVersion) + ")");
      c.header = j;
    } else {
      if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
        throw InfraError(path + ":" + std::to_string(lineno) +
                         ": error: not a journal event (a JSON object with an \"event\" name); refusing to guess");
      c.events.push_back(std::move(j));
      c.lines.push_back(lineno);
    }
    good_end = nl + 1;
    pos = nl + 1;
  }
  if (c.torn_tail && repair) {
    if (::truncate(path.c_str(), static_cast<off_t>(good_end)) != 0)
      throw InfraError(path + ": cannot truncate the torn last line: " + errno_text());
  }
  return c;
}

Journal::Journal(std::string path, nlohmann::json header) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InfraError(path_ + ": cannot open the journal: " + errno_text());
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size == 0) {
    header["format"] = kFormat;
    header["v"] = kVersion;
    write_all(fd_, header.dump() + "\n", path_);
    ::fsync(fd_);
    fsync_dir_of(path_);
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const nlohmann::json& event) {
  // One write() of the whole line keeps the line intact against other appends; the
  // fsync makes it survive a power cut, not just a SIGKILL.
  // A write that fails part-way (a full disk) is undone: the journal ends with its last
  // whole line, never a torn one that only a resume's repair would drop.
  struct stat st {};
  const bool sized = ::fstat(fd_, &st) == 0;
  try {
    write_all(fd_, event.dump() + "\n", path_);
    if (::fsync(fd_) != 0) throw InfraError(path_ + ": fsync failed: " + errno_text());
  } catch (const InfraError&) {
    if (sized) (void)::ftruncate(fd_, st.st_size);
    throw;
  }
}

}  // namespace kgate::search

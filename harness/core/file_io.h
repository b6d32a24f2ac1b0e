#pragma once
// The one way kgate reads a whole file, replaces a file atomically and hashes content.
// Each caller maps the outcome to its own error (UsageError for a user's file, InfraError
// for kgate's own, "" or false where a missing file is an answer): the policy stays with
// the caller, the mechanics live here.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kgate::core {

// ---- reading -----------------------------------------------------------------------

struct ReadResult {
  enum class Status { kOk, kNotFound, kError };
  Status status = Status::kError;
  std::string bytes;  // kOk: the whole file
  std::string error;  // otherwise: the system's words ("No such file or directory",
                      // "Is a directory", "Permission denied")

  bool ok() const { return status == Status::kOk; }
  bool not_found() const { return status == Status::kNotFound; }
};

// How much read_file takes by default: generous for anything kgate reads back (sources,
// compile logs, journals of long runs, records), finite so that a wrong path (/dev/zero,
// a multi-GB dump) is an error and not an unbounded read.
inline constexpr std::size_t kDefaultReadCap = std::size_t{256} << 20;  // 256 MiB
// A config, level, suite or problem file: a few KB in practice.
inline constexpr std::size_t kConfigReadCap = std::size_t{16} << 20;  // 16 MiB

// "16 MiB", "256 MiB", "1 KiB", "100 bytes": a cap as the errors state it.
std::string format_cap(std::size_t bytes);

// The whole of `path`, as bytes. Not found: the path or one of its directories does not
// exist (ENOENT, ENOTDIR). Only a regular file (or a symlink to one) is read: a directory,
// a FIFO, a socket or a device (/dev/zero) is an error, found without blocking or reading
// ("not a regular file (a FIFO)"). A file larger than `max_bytes` is an error stating the
// cap ("larger than the 16 MiB limit"), before or while reading. A file that cannot be
// opened, or a read that fails part-way, is an error: never a silently empty or truncated
// content.
ReadResult read_file(const std::string& path, std::size_t max_bytes = kDefaultReadCap);

// The whole of `path`, or throws E(message) when it cannot be read (not found or error).
template <class E>
std::string read_file_or_throw(const std::string& path, const std::string& message,
                               std::size_t max_bytes = kDefaultReadCap) {
  ReadResult r = read_file(path, max_bytes);
  if (!r.ok()) throw E(message);
  return std::move(r.bytes);
}

// ---- writing -----------------------------------------------------------------------

struct WriteResult {
  // Where it failed: creating the parent directory, creating the temp file, writing or
  // syncing it, renaming it over `path`.
  enum class Stage { kOk, kCreateDir, kOpen, kWrite, kRename };
  Stage stage = Stage::kOk;
  std::string where;  // the path the failing step was about (directory, temp or target)
  std::string tmp;    // the temp file used (removed again on every failure)
  std::string error;  // the system's words

  bool ok() const { return stage == Stage::kOk; }
  // "<where>: cannot create the directory: <error>", "...: cannot write: ...",
  // "...: cannot rename into place: ..."; "" when ok.
  std::string message() const;
};

// Replaces `path` with `bytes` so a reader sees the old content or the new, never a part:
// writes a temp file beside it (`path`.tmp.<pid>.<n>, unique per process and call), fsyncs
// it and renames it over `path`. The parent directory is created when missing. The temp
// file never outlives a failure.
WriteResult write_file_atomic(const std::string& path, std::string_view bytes);

// The same, throwing InfraError(result.message()) on failure.
void write_file_atomic_or_throw(const std::string& path, std::string_view bytes);

// ---- temp files left by a killed process ----------------------------------------------

// Whether `name` (a file name, no directory) is a temp file of a kgate writer, and the pid
// that wrote it: write_file_atomic's "<name>.tmp.<pid>.<n>", the host compiler's
// "<name>.tmp-<pid>-<n>", the CUDA compiler's "<hash>.tmp.<pid>.so". 0 when it is none.
long temp_file_writer(const std::string& name);

// Removes, under `dir` (recursively, but not inside .git directories), every temp file of
// a kgate writer whose process is gone (kill -9, a full disk that failed its cleanup, a
// power cut). A live writer's temps stay. Returns the paths removed; errors are ignored
// (a temp that cannot be removed is only clutter).
std::vector<std::string> remove_stale_temps(const std::string& dir);

// ---- content hash ------------------------------------------------------------------

// Git blob id (what `git hash-object` prints) of `bytes`, as 40 hex digits: kgate's one
// content hash (compile cache keys, workspace snapshots, result hashes). Throws InfraError
// if libgit2 cannot hash.
std::string git_blob_id(std::string_view bytes);

}  // namespace kgate::core

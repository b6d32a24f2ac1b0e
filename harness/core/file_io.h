#pragma once
// The one way kgate reads a whole file, replaces a file atomically and hashes content.
// Each caller maps the outcome to its own error (UsageError for a user's file, InfraError
// for kgate's own, "" or false where a missing file is an answer): the policy stays with
// the caller, the mechanics live here.
#include <string>
#include <string_view>

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

// The whole of `path`, as bytes. Not found: the path or one of its directories does not
// exist (ENOENT, ENOTDIR). A directory, a file that cannot be opened, or a read that
// fails part-way is an error: never a silently empty or truncated content.
ReadResult read_file(const std::string& path);

// The whole of `path`, or throws E(message) when it cannot be read (not found or error).
template <class E>
std::string read_file_or_throw(const std::string& path, const std::string& message) {
  ReadResult r = read_file(path);
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

// ---- content hash ------------------------------------------------------------------

// Git blob id (what `git hash-object` prints) of `bytes`, as 40 hex digits: kgate's one
// content hash (compile cache keys, workspace snapshots, result hashes). Throws InfraError
// if libgit2 cannot hash.
std::string git_blob_id(std::string_view bytes);

}  // namespace kgate::core

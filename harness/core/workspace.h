#pragma once
// The one snapshot of a workspace: every file below a root except the exempt files (the
// candidate, and the partner kernel files a pair experiment may change with it) and the
// root's own .git, each with its git blob id (core::git_blob_id) and
// permission bits. Two users, two policies on top of the same snapshot:
//   - the workspace guard (search/workspace_guard.h) keeps the contents too, finds what
//     an agent turn changed and undoes it;
//   - the static gate (gates/evaluator.cpp) checks that an evaluation changed nothing.
//
// What is skipped: the root's .git (a directory, or a file in a worktree), which changes
// with every experiment commit. A directory or file named .git further down is workspace
// content like any other: skipping it would let anything be planted there unseen.
// Directories themselves are not entries; special files (FIFOs, sockets, devices) are
// skipped (reading a FIFO would block). A symlink is an entry by its target, never
// followed.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kgate::core {

struct WorkspaceFile {
  std::string id;           // git blob id of the content; "link:" + blob id of the target
  unsigned mode = 0;        // permission bits (07777); 0 for a symlink
  bool is_link = false;
  std::string link_target;  // when is_link
  std::string content;      // only in a snapshot taken with SnapshotContent::kKeep
};

enum class SnapshotContent { kIdsOnly, kKeep };

struct WorkspaceSnapshot {
  std::string root;    // as given
  std::vector<std::string> exempt;  // the exempt files relative to root
  SnapshotContent content = SnapshotContent::kIdsOnly;
  std::map<std::string, WorkspaceFile> files;  // relative path ('/'-separated) -> state
};

// True for the root's repository metadata: ".git" itself or anything below "./.git/".
// `rel` is relative to the workspace root, '/'-separated.
bool is_root_git(std::string_view rel);

// Every entry below `root` (see above). Each `exempt` path may be absolute or relative to
// root ("" entries are ignored). Throws InfraError when root is not a directory, cannot be
// walked, or a file cannot be read.
WorkspaceSnapshot snapshot_workspace(const std::string& root, const std::vector<std::string>& exempt,
                                     SnapshotContent content = SnapshotContent::kIdsOnly);

struct WorkspaceChange {
  enum class Kind { kModified, kCreated, kDeleted, kModeChanged };
  Kind kind = Kind::kModified;
  std::string path;  // relative
  std::string describe() const;  // "modified problem.yaml", "changed the mode of x"
};

// What differs from `before` to `after`, in path order. A content (or link) change is
// kModified; a mode change alone is kModeChanged.
std::vector<WorkspaceChange> workspace_changes(const WorkspaceSnapshot& before,
                                               const WorkspaceSnapshot& after);

// One git blob id for the whole snapshot (paths, ids and modes), stable across runs and
// machines.
std::string workspace_hash(const WorkspaceSnapshot& s);

}  // namespace kgate::core

#pragma once
// Fixed evaluation: an agent may change the candidate file and nothing else. The guard
// snapshots every other file of the workspace (content + mode, .git excluded) before
// an agent turn; after it, any change, creation or deletion is a violation, is undone
// from the snapshot, and is reported so the experiment records it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kgate::search {

struct FileState {
  uint64_t hash = 0;      // FNV-1a 64 of the content
  unsigned mode = 0;      // permission bits
  std::string content;    // kept so a violation can be undone byte for byte
  bool is_link = false;
  std::string link_target;
};

struct WorkspaceSnapshot {
  std::string root;
  std::string exempt;  // relative path of the candidate
  std::map<std::string, FileState> files;  // relative path -> state
};

struct Violation {
  enum class Kind { kModified, kCreated, kDeleted, kModeChanged };
  Kind kind = Kind::kModified;
  std::string path;  // relative
  std::string describe() const;  // "modified problem.yaml"
};

WorkspaceSnapshot snapshot_workspace(const std::string& root, const std::string& exempt);

// What changed since `before` (outside the exempt candidate), in path order.
std::vector<Violation> find_violations(const WorkspaceSnapshot& before);

// Puts every file of `before` back as it was and removes files it did not have.
void restore_workspace(const WorkspaceSnapshot& before);

// One hash of the workspace outside the candidate (recorded with each experiment).
uint64_t hash_snapshot(const WorkspaceSnapshot& s);

}  // namespace kgate::search

#pragma once
// Fixed evaluation: an agent may change the candidate file (and, in a pair experiment, its
// partner kernel files) and nothing else. The guard
// snapshots every other file of the workspace (core::snapshot_workspace with contents:
// git blob id, mode and bytes; the root's .git excluded) before an agent turn; after it,
// any change, creation or deletion is a violation, is undone from the snapshot, and is
// reported so the experiment records it.
#include <string>
#include <vector>

#include "core/workspace.h"

namespace kgate::search {

using core::WorkspaceSnapshot;
using Violation = core::WorkspaceChange;

// The snapshot an agent turn is checked against (contents kept, for restore_workspace).
// `exempt`: the candidate, and the partner files a pair experiment may change with it.
WorkspaceSnapshot snapshot_workspace(const std::string& root, const std::vector<std::string>& exempt);

// What changed since `before` (outside the exempt files), in path order.
std::vector<Violation> find_violations(const WorkspaceSnapshot& before);

// Puts every file of `before` back as it was and removes files it did not have.
void restore_workspace(const WorkspaceSnapshot& before);

}  // namespace kgate::search

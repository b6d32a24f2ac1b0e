#pragma once
// Gate 1, the static checks that need no worker: lint rules on the candidate's source
// and the integrity of the workspace around it. (Compilation, the last static check,
// goes through the worker: see evaluator.cpp.)
#include <string>
#include <string_view>
#include <vector>

#include "core/workspace.h"

namespace kgate::gates {

// One rule broken at one place in the candidate.
struct LintFinding {
  std::string file;  // "" for the candidate, else the included file the finding is in
  int line = 0;     // 1-based
  int column = 0;   // 1-based
  std::string rule;     // "threads", "processes", "file-io", "device", "include"
  std::string token;    // what matched: "std::thread", "fopen"
  std::string message;  // why it is forbidden
  // "line 12:5: std::thread: candidates must not start threads"; in an included file
  // "helper.h (included), line 3:1: ..."
  std::string str() const;
};

// The source with comments, string and character literals blanked to spaces (newlines
// kept), so a rule never fires on a comment or a message and line/column stay true.
std::string strip_comments_and_strings(std::string_view source);

// Every forbidden construct in a native candidate's source (threads, processes, file or
// socket I/O, device resets, includes the lint cannot follow), in source order.
std::vector<LintFinding> lint_candidate(std::string_view source);
// The candidate at `path` and every file it pulls in from beside itself
// (core::local_include_files): a rule broken in an included file is the candidate's.
std::vector<LintFinding> lint_candidate_file(const std::string& path, std::string_view source);

// The workspace around the candidate is snapshotted by core::snapshot_workspace
// (core/workspace.h); the gate's own part is how a change is worded.
// "sub/helper.h (modified)", "added.h (added)", "x (removed)", in path order. A mode change
// alone is not listed: the evaluation only checks that no content changed.
std::vector<std::string> describe_workspace_changes(const core::WorkspaceSnapshot& before,
                                                    const core::WorkspaceSnapshot& after);

// Git blob id of one file's content ("" when it cannot be read): core::git_blob_id over
// core::read_file, with the gate's "" for unreadable (callers in cli/ and search/).
std::string hash_file(const std::string& path);
// Git blob id of bytes (core::git_blob_id).
std::string hash_bytes(std::string_view bytes);

}  // namespace kgate::gates

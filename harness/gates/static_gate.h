#pragma once
// Gate 1, the static checks that need no worker: lint rules on the candidate's source
// and the integrity of the workspace around it. (Compilation, the last static check,
// goes through the worker: see evaluator.cpp.)
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kgate::gates {

// One rule broken at one place in the candidate.
struct LintFinding {
  int line = 0;     // 1-based
  int column = 0;   // 1-based
  std::string rule;     // "streams", "threads", "processes", "file-io", "device"
  std::string token;    // what matched: "std::thread", "fopen"
  std::string message;  // why it is forbidden
  std::string str() const;  // "line 12:5: std::thread: candidates must not start threads"
};

// The source with comments, string and character literals blanked to spaces (newlines
// kept), so a rule never fires on a comment or a message and line/column stay true.
std::string strip_comments_and_strings(std::string_view source);

// Every forbidden construct in a native candidate (streams, threads, processes, file or
// socket I/O, device resets), in source order.
std::vector<LintFinding> lint_candidate(std::string_view source);

// Content hash of every regular file (and symlink, by its target) under `dir`, except
// `exclude` (the candidate; absolute or relative to dir) and git's own .git directory,
// which changes with every experiment commit. Git blob ids per file, combined with the
// relative paths. Stable across runs and machines.
std::map<std::string, std::string> snapshot_workspace(const std::string& dir,
                                                      const std::string& exclude);
std::string hash_workspace(const std::string& dir, const std::string& exclude);
// Git blob id of one file's content ("" when it cannot be read).
std::string hash_file(const std::string& path);
// Git blob id of bytes.
std::string hash_bytes(std::string_view bytes);
// Relative paths added, removed or changed between two snapshots, sorted.
std::vector<std::string> workspace_changes(const std::map<std::string, std::string>& before,
                                           const std::map<std::string, std::string>& after);

}  // namespace kgate::gates

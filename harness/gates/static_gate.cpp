#include "gates/static_gate.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/file_io.h"
#include "core/includes.h"

namespace kgate::gates {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

struct Rule {
  std::string_view rule;
  std::string_view message;
};

constexpr Rule kThreads{"threads", "candidates must not start threads or processes"};
constexpr Rule kProcesses{"processes", "candidates must not run other programs"};
constexpr Rule kFileIo{"file-io", "candidates must not read or write files or sockets"};
constexpr Rule kDevice{"device", "candidates must not reset or switch the device"};
// The lint reads the files a candidate includes by name (lint_candidate_file); these forms
// would hide what is compiled from it.
constexpr Rule kComputedInclude{"include", "a computed #include (a macro) hides the file it names from the lint"};
constexpr Rule kUnfollowedInclude{"include", "#include_next and #import are not followed by the lint: include by name"};
constexpr Rule kClimbingInclude{"include", "an #include <...> with '..' reaches outside the include path"};

// Calls: the name followed by "(". The last component of a qualified name counts, so
// `std::system(` and `::open(` match too.
const Rule* call_rule(std::string_view last) {
  static const std::set<std::string_view> threads = {"pthread_create", "fork", "vfork", "clone"};
  static const std::set<std::string_view> procs = {"system",  "popen",  "execl",   "execlp",
                                                   "execle",  "execv",  "execvp",  "execvpe",
                                                   "execve",  "fexecve", "posix_spawn", "posix_spawnp"};
  static const std::set<std::string_view> io = {"fopen", "freopen", "open",   "openat",
                                                "creat", "socket",  "connect"};
  if (threads.count(last)) return &kThreads;
  if (procs.count(last)) return &kProcesses;
  if (io.count(last)) return &kFileIo;
  return nullptr;
}

// Names that are forbidden wherever they appear (types, functions taken by address).
const Rule* name_rule(std::string_view qualified, std::string_view last) {
  if (last == "cudaDeviceReset" || last == "cudaSetDevice" || last == "cuDevicePrimaryCtxReset") return &kDevice;
  bool in_std = qualified.starts_with("std::");
  if (in_std && (last == "thread" || last == "jthread" || last == "async")) return &kThreads;
  if (in_std && (last == "ofstream" || last == "ifstream" || last == "fstream" ||
                 last == "basic_ofstream" || last == "basic_ifstream" || last == "basic_fstream")) {
    return &kFileIo;
  }
  return nullptr;
}

}  // namespace

std::string LintFinding::str() const {
  return (file.empty() ? "" : file + " (included), ") + "line " + std::to_string(line) + ":" + std::to_string(column) + ": " + token + ": " + message;
}

std::string strip_comments_and_strings(std::string_view src) { return core::blank_comments(src, true); }

std::vector<LintFinding> lint_candidate(std::string_view source) {
  const std::string s = strip_comments_and_strings(source);
  std::vector<LintFinding> found;
  // Line starts, for line/column of a byte offset.
  std::vector<std::size_t> line_start{0};
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n') line_start.push_back(i + 1);
  auto add = [&](std::size_t pos, const Rule& r, std::string token) {
    auto it = std::upper_bound(line_start.begin(), line_start.end(), pos);
    int line = static_cast<int>(it - line_start.begin());
    int col = static_cast<int>(pos - line_start[static_cast<std::size_t>(line - 1)]) + 1;
    found.push_back({"", line, col, std::string(r.rule), std::move(token), std::string(r.message)});
  };

  // #include <thread> (the header itself: nothing in it is usable by a candidate).
  for (std::size_t l = 0; l < line_start.size(); ++l) {
    std::size_t b = line_start[l];
    std::size_t e = l + 1 < line_start.size() ? line_start[l + 1] : s.size();
    std::string line = s.substr(b, e - b);
    std::string compact;
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
    if (compact.starts_with("#include<thread>") || compact.starts_with("#include<future>")) {
      add(b + line.find('#'), kThreads, compact.substr(std::string("#include").size()));
    } else if (compact.starts_with("#include_next") || compact.starts_with("#import")) {
      add(b + line.find('#'), kUnfollowedInclude, compact.substr(0, compact.find_first_of("\"<", 1)));
    } else if (compact.starts_with("#include")) {
      // Strings are blanked: a quoted name leaves nothing after the directive here.
      const std::string rest = compact.substr(std::string("#include").size());
      if (rest.starts_with("<") && rest.find("..") != std::string::npos)
        add(b + line.find('#'), kClimbingInclude, "#include" + rest);
      else if (!rest.empty() && !rest.starts_with("<"))
        add(b + line.find('#'), kComputedInclude, "#include " + rest);
    }
  }

  std::size_t i = 0;
  while (i < s.size()) {
    if (!is_ident_char(s[i]) || (i > 0 && is_ident_char(s[i - 1])) ||
        std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    // A possibly qualified name: a::b::c (a leading "::" is part of the previous char run).
    std::size_t start = i;
    std::size_t last_start = i;
    while (true) {
      while (i < s.size() && is_ident_char(s[i])) ++i;
      if (i + 2 < s.size() && s[i] == ':' && s[i + 1] == ':' && is_ident_char(s[i + 2])) {
        i += 2;
        last_start = i;
        continue;
      }
      break;
    }
    std::string_view qualified(s.data() + start, i - start);
    std::string_view last(s.data() + last_start, i - last_start);
    if (const Rule* r = name_rule(qualified, last)) {
      add(start, *r, std::string(qualified));
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j < s.size() && s[j] == '(') {
      // Declarations of a same-named member are calls too for our purpose: candidates
      // have no reason to name anything this way.
      if (const Rule* r = call_rule(last)) add(start, *r, std::string(qualified) + "(");
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const LintFinding& a, const LintFinding& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  return found;
}

std::vector<LintFinding> lint_candidate_file(const std::string& path, std::string_view source) {
  namespace fs = std::filesystem;
  std::vector<LintFinding> found = lint_candidate(source);
  const fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec);
  for (const core::IncludedFile& f : core::local_include_files(dir.string(), std::string(source))) {
    // Named relative to the candidate's directory when it is beneath it, else in full.
    const fs::path rel = fs::path(f.path).lexically_relative(base);
    const std::string shown = rel.empty() || *rel.begin() == ".." ? f.path : rel.string();
    for (LintFinding x : lint_candidate(f.content)) {
      x.file = shown;
      found.push_back(std::move(x));
    }
  }
  return found;
}

std::string hash_bytes(std::string_view bytes) { return core::git_blob_id(bytes); }

std::string hash_file(const std::string& path) {
  const core::ReadResult r = core::read_file(path);
  return r.ok() ? core::git_blob_id(r.bytes) : "";
}

std::vector<std::string> describe_workspace_changes(const core::WorkspaceSnapshot& before,
                                                    const core::WorkspaceSnapshot& after) {
  std::vector<std::string> changed;
  for (const core::WorkspaceChange& c : core::workspace_changes(before, after)) {
    switch (c.kind) {
      case core::WorkspaceChange::Kind::kCreated: changed.push_back(c.path + " (added)"); break;
      case core::WorkspaceChange::Kind::kDeleted: changed.push_back(c.path + " (removed)"); break;
      case core::WorkspaceChange::Kind::kModified: changed.push_back(c.path + " (modified)"); break;
      case core::WorkspaceChange::Kind::kModeChanged: break;
    }
  }
  return changed;
}

}  // namespace kgate::gates

#include "core/workspace.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/file_io.h"

namespace fs = std::filesystem;

namespace kgate::core {

bool is_root_git(std::string_view rel) { return rel == ".git" || rel.starts_with(".git/"); }

WorkspaceSnapshot snapshot_workspace(const std::string& root, const std::vector<std::string>& exempt,
                                     SnapshotContent content) {
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(root, ec);
  if (ec || !fs::is_directory(base, ec)) throw InfraError("workspace " + root + " is not a directory");
  WorkspaceSnapshot s;
  s.root = root;
  s.content = content;
  for (const std::string& x : exempt) {
    if (x.empty()) continue;
    // The exempt file's directory is resolved, not the file: a candidate that is a
    // symlink is still the candidate, not the file it points to.
    const fs::path e = fs::path(x).is_absolute() ? fs::path(x) : base / x;
    const fs::path dir = fs::weakly_canonical(e.parent_path(), ec);
    s.exempt.push_back((dir / e.filename()).lexically_relative(base).generic_string());
  }
  fs::recursive_directory_iterator it(base, fs::directory_options::none, ec), end;
  if (ec) throw InfraError("workspace " + root + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw InfraError("workspace " + root + ": " + ec.message());
    const fs::path& p = it->path();
    const std::string rel = p.lexically_relative(base).generic_string();
    if (is_root_git(rel)) {
      it.disable_recursion_pending();
      continue;
    }
    if (std::find(s.exempt.begin(), s.exempt.end(), rel) != s.exempt.end()) continue;
    const fs::file_status st = it->symlink_status(ec);
    if (ec) throw InfraError("workspace " + root + ": " + p.string() + ": " + ec.message());
    WorkspaceFile f;
    if (fs::is_symlink(st)) {
      f.is_link = true;
      f.link_target = fs::read_symlink(p, ec).string();
      if (ec) throw InfraError("workspace: cannot read the link " + p.string() + ": " + ec.message());
      f.id = "link:" + git_blob_id(f.link_target);
    } else if (fs::is_regular_file(st)) {
      f.mode = static_cast<unsigned>(st.permissions()) & 07777u;
      ReadResult r = read_file(p.string());
      if (!r.ok()) throw InfraError("workspace: cannot read " + p.string() + ": " + r.error);
      f.id = git_blob_id(r.bytes);
      if (content == SnapshotContent::kKeep) f.content = std::move(r.bytes);
    } else {
      continue;  // a directory (walked into) or a special file
    }
    s.files.emplace(rel, std::move(f));
  }
  return s;
}

std::string WorkspaceChange::describe() const {
  switch (kind) {
    case Kind::kModified: return "modified " + path;
    case Kind::kCreated: return "created " + path;
    case Kind::kDeleted: return "deleted " + path;
    case Kind::kModeChanged: return "changed the mode of " + path;
  }
  return path;
}

std::vector<WorkspaceChange> workspace_changes(const WorkspaceSnapshot& before,
                                               const WorkspaceSnapshot& after) {
  std::vector<WorkspaceChange> out;
  using K = WorkspaceChange::Kind;
  for (const auto& [path, f] : before.files) {
    auto it = after.files.find(path);
    if (it == after.files.end()) out.push_back({.kind = K::kDeleted, .path = path});
    else if (it->second.id != f.id) out.push_back({.kind = K::kModified, .path = path});
    else if (it->second.mode != f.mode) out.push_back({.kind = K::kModeChanged, .path = path});
  }
  for (const auto& [path, f] : after.files)
    if (!before.files.count(path)) out.push_back({.kind = K::kCreated, .path = path});
  std::stable_sort(out.begin(), out.end(),
                   [](const WorkspaceChange& a, const WorkspaceChange& b) { return a.path < b.path; });
  return out;
}

std::string workspace_hash(const WorkspaceSnapshot& s) {
  std::string manifest;
  for (const auto& [path, f] : s.files) {
    manifest += path;
    manifest += '\0';
    manifest += f.id;
    manifest += ' ';
    manifest += std::to_string(f.mode);
    manifest += '\n';
  }
  return git_blob_id(manifest);
}

}  // namespace kgate::core

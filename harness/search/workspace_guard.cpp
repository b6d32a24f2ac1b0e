#include "search/workspace_guard.h"

#include <filesystem>

#include "core/error.h"
#include "core/file_io.h"

namespace fs = std::filesystem;

namespace kgate::search {

WorkspaceSnapshot snapshot_workspace(const std::string& root, const std::vector<std::string>& exempt) {
  return core::snapshot_workspace(root, exempt, core::SnapshotContent::kKeep);
}

std::vector<Violation> find_violations(const WorkspaceSnapshot& before) {
  return core::workspace_changes(before, core::snapshot_workspace(before.root, before.exempt));
}

void restore_workspace(const WorkspaceSnapshot& before) {
  if (before.content != core::SnapshotContent::kKeep)
    throw InfraError("restore_workspace: the snapshot of " + before.root + " has no contents");
  const WorkspaceSnapshot now = core::snapshot_workspace(before.root, before.exempt);
  for (const auto& [path, f] : now.files) {
    if (before.files.count(path)) continue;
    std::error_code ec;
    fs::remove(fs::path(before.root) / path, ec);
  }
  // Directories the agent created are left empty; remove them bottom-up.
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(before.root, ec), end; it != end; it.increment(ec)) {
    if (ec) break;
    if (core::is_root_git(it->path().lexically_relative(before.root).generic_string())) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory() && !it->is_symlink()) dirs.push_back(it->path());
  }
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) {
    std::error_code rm;
    if (fs::is_empty(*d, rm)) fs::remove(*d, rm);
  }
  for (const auto& [path, f] : before.files) {
    fs::path p = fs::path(before.root) / path;
    auto it = now.files.find(path);
    const bool same = it != now.files.end() && it->second.id == f.id;
    if (!same) {
      std::error_code rm;
      fs::create_directories(p.parent_path(), rm);
      if (fs::exists(fs::symlink_status(p))) {
        // A read-only file can still be replaced: make it writable first.
        fs::permissions(p, fs::perms::owner_write, fs::perm_options::add, rm);
        fs::remove(p, rm);
      }
      if (f.is_link) {
        fs::create_symlink(f.link_target, p, rm);
      } else {
        core::WriteResult w = core::write_file_atomic(p.string(), f.content);
        if (!w.ok()) throw InfraError(p.string() + ": cannot restore: " + w.message());
      }
    }
    if (!f.is_link) {
      std::error_code pe;
      fs::permissions(p, static_cast<fs::perms>(f.mode), fs::perm_options::replace, pe);
    }
  }
}

}  // namespace kgate::search

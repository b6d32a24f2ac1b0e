#include "search/workspace_guard.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace fs = std::filesystem;

namespace kgate::search {
namespace {

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InfraError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, FileState> scan(const std::string& root, const std::string& exempt) {
  std::map<std::string, FileState> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  if (ec) throw InfraError(root + ": cannot scan the workspace: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw InfraError(root + ": cannot scan the workspace: " + ec.message());
    const fs::path& p = it->path();
    std::string rel = fs::relative(p, root).generic_string();
    if (rel == ".git" || rel.rfind(".git/", 0) == 0) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (rel == exempt) continue;
    auto st = it->symlink_status();
    if (fs::is_directory(st)) continue;
    FileState f;
    f.mode = static_cast<unsigned>(st.permissions()) & 07777u;
    if (fs::is_symlink(st)) {
      f.is_link = true;
      f.link_target = fs::read_symlink(p).string();
      f.hash = fnv1a("link:" + f.link_target);
    } else {
      f.content = slurp(p);
      f.hash = fnv1a(f.content);
    }
    files[rel] = std::move(f);
  }
  return files;
}

}  // namespace

std::string Violation::describe() const {
  switch (kind) {
    case Kind::kModified: return "modified " + path;
    case Kind::kCreated: return "created " + path;
    case Kind::kDeleted: return "deleted " + path;
    case Kind::kModeChanged: return "changed the mode of " + path;
  }
  return path;
}

WorkspaceSnapshot snapshot_workspace(const std::string& root, const std::string& exempt) {
  WorkspaceSnapshot s;
  s.root = root;
  s.exempt = exempt;
  s.files = scan(root, exempt);
  return s;
}

std::vector<Violation> find_violations(const WorkspaceSnapshot& before) {
  std::vector<Violation> out;
  auto now = scan(before.root, before.exempt);
  for (const auto& [path, f] : before.files) {
    auto it = now.find(path);
    if (it == now.end()) {
      out.push_back({Violation::Kind::kDeleted, path});
    } else if (it->second.hash != f.hash || it->second.is_link != f.is_link) {
      out.push_back({Violation::Kind::kModified, path});
    } else if (it->second.mode != f.mode) {
      out.push_back({Violation::Kind::kModeChanged, path});
    }
  }
  for (const auto& [path, f] : now)
    if (!before.files.count(path)) out.push_back({Violation::Kind::kCreated, path});
  std::sort(out.begin(), out.end(), [](const Violation& a, const Violation& b) { return a.path < b.path; });
  return out;
}

void restore_workspace(const WorkspaceSnapshot& before) {
  auto now = scan(before.root, before.exempt);
  for (const auto& [path, f] : now) {
    if (before.files.count(path)) continue;
    std::error_code ec;
    fs::remove(fs::path(before.root) / path, ec);
  }
  // Directories the agent created are left empty; remove them bottom-up.
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(before.root, ec), end; it != end; it.increment(ec)) {
    if (ec) break;
    std::string rel = fs::relative(it->path(), before.root).generic_string();
    if (rel == ".git") {
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
    auto it = now.find(path);
    bool same = it != now.end() && it->second.hash == f.hash && it->second.is_link == f.is_link;
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
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        if (!out) throw InfraError(p.string() + ": cannot restore");
        out << f.content;
      }
    }
    if (!f.is_link) {
      std::error_code pe;
      fs::permissions(p, static_cast<fs::perms>(f.mode), fs::perm_options::replace, pe);
    }
  }
}

uint64_t hash_snapshot(const WorkspaceSnapshot& s) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& [path, f] : s.files) {
    h = fnv1a(path, h);
    h = fnv1a(std::to_string(f.hash) + ":" + std::to_string(f.mode), h);
  }
  return h;
}

}  // namespace kgate::search

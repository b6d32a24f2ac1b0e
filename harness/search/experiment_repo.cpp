#include "search/experiment_repo.h"

#include <git2.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "core/error.h"
#include "core/git_owned.h"

namespace kgate::search {
namespace {

// libgit2 is initialised once per process and never shut down: other repositories may
// be open on other threads and process exit releases everything anyway.
void ensure_init() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

[[noreturn]] void throw_git(const std::string& what, const std::string& where) {
  throw InfraError(where + ": git: " + what + ": " + git::last_error());
}

using git::Commit;
using git::Obj;
using git::Owned;
using git::Tree;
using git::TreeEntry;
using Ref = Owned<git_reference, git_reference_free>;
using Index = Owned<git_index, git_index_free>;
using Sig = Owned<git_signature, git_signature_free>;
using Blob = Owned<git_blob, git_blob_free>;

git_oid parse_oid(const std::string& id, const std::string& where) {
  git_oid oid;
  if (git_oid_fromstr(&oid, id.c_str()) != 0) throw_git("bad commit id '" + id + "'", where);
  return oid;
}

std::string oid_str(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

}  // namespace

ExperimentRepo::ExperimentRepo(const std::string& workdir) : workdir_(workdir) {
  ensure_init();
  std::error_code ec;
  std::filesystem::create_directories(workdir_, ec);
  if (ec) throw InfraError(workdir_ + ": cannot create the workspace: " + ec.message());
  if (git_repository_open_ext(&repo_, workdir_.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    if (git_repository_init(&repo_, workdir_.c_str(), 0) != 0) throw_git("init failed", workdir_);
  }
}

std::vector<std::string> ExperimentRepo::remove_stale_locks() {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  const char* gitdir = git_repository_path(repo_);
  if (gitdir == nullptr) return removed;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(gitdir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2)) {
      if (it->path().filename() == "objects") it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() != ".lock") continue;
    if (fs::remove(it->path(), e2)) removed.push_back(it->path().string());
  }
  return removed;
}

ExperimentRepo::~ExperimentRepo() {
  if (repo_) git_repository_free(repo_);
}

void ExperimentRepo::use_branch(const std::string& branch) {
  std::string full = "refs/heads/" + branch;
  if (git_reference_is_valid_name(full.c_str()) != 1)
    throw InfraError(workdir_ + ": git: invalid branch name '" + branch + "'");
  if (git_repository_set_head(repo_, full.c_str()) != 0) throw_git("cannot switch to " + branch, workdir_);
}

std::string ExperimentRepo::current_branch() const {
  Ref head;
  if (git_reference_lookup(head.out(), repo_, "HEAD") != 0) throw_git("no HEAD", workdir_);
  const char* target = git_reference_symbolic_target(head.p);
  std::string t = target ? target : "";
  const std::string prefix = "refs/heads/";
  return t.rfind(prefix, 0) == 0 ? t.substr(prefix.size()) : t;
}

std::string ExperimentRepo::head() const {
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo_, "HEAD") != 0) return "";
  return oid_str(&oid);
}

std::string ExperimentRepo::commit(const std::string& message) {
  Index index;
  if (git_repository_index(index.out(), repo_) != 0) throw_git("no index", workdir_);
  char star[] = "*";
  char* patterns[] = {star};
  git_strarray spec = {patterns, 1};
  if (git_index_add_all(index.p, &spec, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr) != 0 ||
      git_index_update_all(index.p, &spec, nullptr, nullptr) != 0)
    throw_git("cannot stage the workspace", workdir_);
  if (git_index_write(index.p) != 0) throw_git("cannot write the index", workdir_);
  git_oid tree_id;
  if (git_index_write_tree(&tree_id, index.p) != 0) throw_git("cannot write the tree", workdir_);
  Tree tree;
  if (git_tree_lookup(tree.out(), repo_, &tree_id) != 0) throw_git("tree lookup", workdir_);
  Sig sig;
  if (git_signature_now(sig.out(), "kgate", "kgate@localhost") != 0) throw_git("signature", workdir_);
  Commit parent;
  std::string tip = head();
  const git_commit* parents[1];
  size_t n_parents = 0;
  if (!tip.empty()) {
    git_oid pid = parse_oid(tip, workdir_);
    if (git_commit_lookup(parent.out(), repo_, &pid) != 0) throw_git("parent lookup", workdir_);
    parents[0] = parent.p;
    n_parents = 1;
  }
  git_oid id;
  if (git_commit_create(&id, repo_, "HEAD", sig.p, sig.p, "UTF-8", message.c_str(), tree.p,
                        n_parents, parents) != 0)
    throw_git("commit failed", workdir_);
  return oid_str(&id);
}

void ExperimentRepo::reset_hard(const std::string& commit) {
  git_oid oid = parse_oid(commit, workdir_);
  Obj obj;
  if (git_object_lookup(obj.out(), repo_, &oid, GIT_OBJECT_COMMIT) != 0)
    throw_git("no commit " + commit, workdir_);
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  co.checkout_strategy = GIT_CHECKOUT_FORCE;
  if (git_reset(repo_, obj.p, GIT_RESET_HARD, &co) != 0) throw_git("reset --hard " + commit, workdir_);
}

void ExperimentRepo::set_ref(const std::string& refname, const std::string& commit) {
  git_oid oid = parse_oid(commit, workdir_);
  Ref ref;
  if (git_reference_create(ref.out(), repo_, refname.c_str(), &oid, 1, "kgate") != 0)
    throw_git("cannot set " + refname, workdir_);
}

void ExperimentRepo::delete_ref(const std::string& refname) {
  Ref ref;
  if (git_reference_lookup(ref.out(), repo_, refname.c_str()) != 0) return;
  if (git_reference_delete(ref.p) != 0) throw_git("cannot delete " + refname, workdir_);
}

void ExperimentRepo::tag(const std::string& name, const std::string& commit) {
  set_ref("refs/tags/" + name, commit);
}

std::string ExperimentRepo::resolve(const std::string& refname) const {
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo_, refname.c_str()) != 0) return "";
  return oid_str(&oid);
}

std::vector<std::string> ExperimentRepo::refs(const std::string& prefix) const {
  std::vector<std::string> out;
  git_strarray names{};
  if (git_reference_list(&names, repo_) != 0) throw_git("cannot list refs", workdir_);
  for (size_t i = 0; i < names.count; ++i) {
    std::string n = names.strings[i];
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  }
  git_strarray_dispose(&names);
  std::sort(out.begin(), out.end());
  return out;
}

CommitInfo ExperimentRepo::read(const std::string& commit) const {
  git_oid oid = parse_oid(commit, workdir_);
  Commit c;
  if (git_commit_lookup(c.out(), repo_, &oid) != 0) throw_git("no commit " + commit, workdir_);
  CommitInfo info;
  info.id = commit;
  info.message = git_commit_message(c.p);
  const char* summary = git_commit_summary(c.p);
  info.summary = summary ? summary : "";
  for (unsigned i = 0; i < git_commit_parentcount(c.p); ++i)
    info.parents.push_back(oid_str(git_commit_parent_id(c.p, i)));
  git_message_trailer_array arr{};
  if (git_message_trailers(&arr, info.message.c_str()) == 0) {
    for (size_t i = 0; i < arr.count; ++i) info.trailers[arr.trailers[i].key] = arr.trailers[i].value;
    git_message_trailer_array_free(&arr);
  }
  return info;
}

std::vector<CommitInfo> ExperimentRepo::log(const std::string& tip) const {
  std::vector<CommitInfo> out;
  std::string cur = tip;
  while (!cur.empty()) {
    out.push_back(read(cur));
    cur = out.back().parents.empty() ? "" : out.back().parents.front();
  }
  return out;
}

std::string ExperimentRepo::file_at(const std::string& commit, const std::string& path) const {
  git_oid oid = parse_oid(commit, workdir_);
  Commit c;
  if (git_commit_lookup(c.out(), repo_, &oid) != 0) throw_git("no commit " + commit, workdir_);
  Tree tree;
  if (git_commit_tree(tree.out(), c.p) != 0) throw_git("no tree", workdir_);
  TreeEntry entry;
  if (git_tree_entry_bypath(entry.out(), tree.p, path.c_str()) != 0)
    throw_git(path + " not in " + commit, workdir_);
  Blob blob;
  if (git_blob_lookup(blob.out(), repo_, git_tree_entry_id(entry.p)) != 0) throw_git("blob", workdir_);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.p)),
                     static_cast<size_t>(git_blob_rawsize(blob.p)));
}

std::string format_trailers(const std::vector<std::pair<std::string, std::string>>& trailers) {
  std::string s;
  for (const auto& [k, v] : trailers) s += k + ": " + v + "\n";
  return s;
}

}  // namespace kgate::search

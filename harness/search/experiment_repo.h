#pragma once
// The experiment log of one problem's workspace, as a git repository (libgit2, no
// shelling out): a branch per run, one commit per experiment with `Kgate-*` trailers,
// a hard reset to the best on revert, refs for every experiment and a tag on the best,
// so `git log` / `git for-each-ref` tell the story with standard tools.
#include <map>
#include <string>
#include <vector>

struct git_repository;

namespace kgate::search {

struct CommitInfo {
  std::string id;
  std::string summary;  // first line of the message
  std::string message;
  std::vector<std::string> parents;
  std::map<std::string, std::string> trailers;  // "Kgate-Verdict" -> "keep"
};

class ExperimentRepo {
 public:
  // Opens the repository at `workdir`, creating it (and the directory) when missing.
  // Throws InfraError on any libgit2 failure, with the git message.
  explicit ExperimentRepo(const std::string& workdir);
  ~ExperimentRepo();
  ExperimentRepo(const ExperimentRepo&) = delete;
  ExperimentRepo& operator=(const ExperimentRepo&) = delete;

  const std::string& workdir() const { return workdir_; }

  // Removes git's lock files (index.lock, HEAD.lock, refs/**.lock, packed-refs.lock) that
  // a process killed mid-write left in this repository; with one in place every later
  // commit, reset or ref update fails ("File exists"). Only for a caller that knows no
  // other process writes here (kgate run, holding its OUT's lock). Returns the paths.
  std::vector<std::string> remove_stale_locks();

  // Makes `branch` (short name, e.g. "kgate/demo/RUN/softmax") the current branch. A new
  // branch is unborn: the next commit starts it as a root commit. Files are untouched.
  void use_branch(const std::string& branch);
  std::string current_branch() const;

  // Tip of the current branch ("" when unborn).
  std::string head() const;

  // Stages the whole worktree (new, modified and deleted files; .gitignore honoured)
  // and commits it on the current branch with the tip as parent. Returns the id.
  std::string commit(const std::string& message);

  // Moves the current branch to `commit` and makes index and worktree match it.
  void reset_hard(const std::string& commit);

  // Creates or moves a reference ("refs/kgate/..."), or a lightweight tag (short name).
  void set_ref(const std::string& refname, const std::string& commit);
  void delete_ref(const std::string& refname);
  void tag(const std::string& name, const std::string& commit);
  std::string resolve(const std::string& refname) const;  // "" when missing
  std::vector<std::string> refs(const std::string& prefix) const;  // full names

  CommitInfo read(const std::string& commit) const;
  // First-parent history from `tip` (newest first).
  std::vector<CommitInfo> log(const std::string& tip) const;
  // Content of `path` in `commit`; throws InfraError when absent.
  std::string file_at(const std::string& commit, const std::string& path) const;

 private:
  std::string workdir_;
  git_repository* repo_ = nullptr;
};

// "Kgate-Verdict: keep\n..." in a stable order, for commit messages.
std::string format_trailers(const std::vector<std::pair<std::string, std::string>>& trailers);

}  // namespace kgate::search

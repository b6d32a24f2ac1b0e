#pragma once
// libgit2 helpers shared by the experiment repositories and `kgate check`: RAII for its
// handles (Owned<git_commit, git_commit_free> frees what it holds) and its last error.
#include <git2.h>

#include <string>

namespace kgate::git {

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (p) Free(p);
  }
  T** out() { return &p; }
};

using Commit = Owned<git_commit, git_commit_free>;
using Tree = Owned<git_tree, git_tree_free>;
using TreeEntry = Owned<git_tree_entry, git_tree_entry_free>;
using Obj = Owned<git_object, git_object_free>;

// libgit2's message for the call that just failed on this thread.
inline std::string last_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown error";
}

}  // namespace kgate::git

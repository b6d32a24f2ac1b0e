#pragma once
// RAII for libgit2 handles: Owned<git_commit, git_commit_free> frees what it holds.
#include <git2.h>

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

}  // namespace kgate::git

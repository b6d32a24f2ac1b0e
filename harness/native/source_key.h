#pragma once
// What identifies a compiled candidate in the compile caches (host and cuda): a git blob
// id (core::git_blob_id) over everything that decides the binary, including the headers a
// candidate pulls in from beside itself -- editing one of them must rebuild the candidate,
// not load a stale object from a runner's persistent cache.
#include <string>

namespace kgate::native {

// The files `text` (which lives in `dir`) pulls in from beside itself
// (core::local_include_files), as "path\0content\0" in the order they are first reached.
// The callers key the ABI header themselves.
std::string local_includes(const std::string& dir, const std::string& text);

}  // namespace kgate::native

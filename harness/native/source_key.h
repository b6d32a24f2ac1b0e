#pragma once
// What identifies a compiled candidate in the compile caches (host and cuda): a git blob
// id (core::git_blob_id) over everything that decides the binary, including the headers a
// candidate pulls in from beside itself -- editing one of them must rebuild the candidate,
// not load a stale object from a runner's persistent cache.
#include <string>

namespace kgate::native {

// The files `text` (which lives in `dir`) includes with #include "name" that resolve
// relative to the including file, recursively and each once, as "path\0content\0" in the
// order they are first reached. Names that do not resolve there (the ABI header, system
// headers written with quotes) are left out: the compiler finds them on its include path,
// and the callers key the ABI header themselves. Bounded (64 files, 16 MiB).
std::string local_includes(const std::string& dir, const std::string& text);

}  // namespace kgate::native

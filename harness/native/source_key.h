#pragma once
// What identifies a compiled candidate in the compile caches (host and cuda): a git blob
// id (core::git_blob_id) over everything that decides the binary, including kgate's own
// headers (the ABI header and the starter helpers under <include_dir>/kgate/) and the
// headers a candidate pulls in from beside itself -- editing one of them must rebuild the
// candidate, not load a stale object from a runner's persistent cache.
#include <string>

namespace kgate::native {

// The files `text` (which lives in `dir`) pulls in from beside itself
// (core::local_include_files), as "path\0content\0" in the order they are first reached.
// The callers key kgate's headers with kgate_headers.
std::string local_includes(const std::string& dir, const std::string& text);

// Every file under `include_dir`/kgate (kgate/kernel.h, kgate/starter_host.h,
// kgate/starter_cuda.cuh, ... and any subfolder), sorted by its name relative to
// `include_dir`, as "name\0content\0" each: a candidate may include any of them, so all of
// them go into the key. "" when the folder is missing (the callers check kernel.h first).
std::string kgate_headers(const std::string& include_dir);

}  // namespace kgate::native

#pragma once
// The files a C++/CUDA source pulls in from beside itself: what the compile caches key on
// (native/source_key.h) and what the static gate lints with the candidate
// (gates/static_gate.h), found by one walk.
#include <string>
#include <vector>

namespace kgate::core {

struct IncludedFile {
  std::string path;     // canonical
  std::string content;  // "" when it cannot be read (its compile then fails and says why)
};

// The files `text` (which lives in `dir`) includes with #include "name" resolving relative
// to the including file, or with an absolute path (#include "/p" or #include </p>),
// recursively and each once, in the order they are first reached. Names that do not
// resolve there (the ABI header, system headers written with quotes) are left out: the
// compiler finds them on its include path. Bounded (64 files, 16 MiB).
std::vector<IncludedFile> local_include_files(const std::string& dir, const std::string& text);

}  // namespace kgate::core

#pragma once
// The files a C++/CUDA source pulls in from beside itself: what the compile caches key on
// (native/source_key.h) and what the static gate lints with the candidate
// (gates/static_gate.h), found by one walk.
#include <string>
#include <string_view>
#include <vector>

namespace kgate::core {

struct IncludedFile {
  std::string path;     // canonical
  std::string content;  // "" when it cannot be read (its compile then fails and says why)
};

// The files `text` (which lives in `dir`) includes with #include "name" resolving relative
// to the including file, or with an absolute path (#include "/p" or #include </p>),
// recursively and each once, in the order they are first reached; an #include inside a
// comment is not followed. Names that do not
// resolve there (the ABI header, system headers written with quotes) are left out: the
// compiler finds them on its include path. Bounded (64 files, 16 MiB).
std::vector<IncludedFile> local_include_files(const std::string& dir, const std::string& text);

// `src` (C, C++ or CUDA) with its comments -- and, when `strings`, its string and character
// literals -- replaced by spaces; newlines are kept, so line and column numbers stay. A
// comment marker inside a literal is not a comment.
std::string blank_comments(std::string_view src, bool strings);

}  // namespace kgate::core

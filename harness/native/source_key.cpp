#include "native/source_key.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/file_io.h"
#include "core/includes.h"

namespace kgate::native {

std::string local_includes(const std::string& dir, const std::string& text) {
  std::string out;
  for (const core::IncludedFile& f : core::local_include_files(dir, text)) out += f.path + '\0' + f.content + '\0';
  return out;
}

std::string kgate_headers(const std::string& include_dir) {
  namespace fs = std::filesystem;
  const fs::path root(include_dir);
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root / "kgate", ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) names.push_back(it->path().lexically_relative(root).generic_string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += n + '\0' + core::read_file((root / n).string()).bytes + '\0';
  return out;
}

}  // namespace kgate::native

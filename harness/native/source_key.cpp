#include "native/source_key.h"

#include "core/includes.h"

namespace kgate::native {

std::string local_includes(const std::string& dir, const std::string& text) {
  std::string out;
  for (const core::IncludedFile& f : core::local_include_files(dir, text)) out += f.path + '\0' + f.content + '\0';
  return out;
}

}  // namespace kgate::native

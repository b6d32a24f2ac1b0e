#include "core/includes.h"

#include <filesystem>
#include <regex>
#include <set>

#include "core/file_io.h"

namespace kgate::core {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxFiles = 64;
constexpr std::size_t kMaxBytes = std::size_t{16} << 20;

struct Walk {
  std::set<fs::path> seen;
  std::vector<IncludedFile> files;
  std::size_t bytes = 0;
};

void scan(const fs::path& dir, const std::string& text, Walk& w) {
  static const std::regex include_re(R"re(^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<(/[^>]+)>))re",
                                     std::regex::multiline);
  for (std::sregex_iterator it(text.begin(), text.end(), include_re), end; it != end; ++it) {
    if (w.files.size() >= kMaxFiles || w.bytes >= kMaxBytes) return;
    const std::string name = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::path(name).is_absolute() ? fs::path(name) : dir / name, ec);
    if (ec || !fs::is_regular_file(p, ec) || !w.seen.insert(p).second) continue;
    IncludedFile f{p.string(), read_file(p.string()).bytes};
    w.bytes += f.content.size();
    const std::string content = f.content;
    w.files.push_back(std::move(f));
    scan(p.parent_path(), content, w);
  }
}

}  // namespace

std::vector<IncludedFile> local_include_files(const std::string& dir, const std::string& text) {
  Walk w;
  scan(fs::path(dir.empty() ? "." : dir), text, w);
  return std::move(w.files);
}

}  // namespace kgate::core

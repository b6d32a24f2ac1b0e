#include "native/source_key.h"

#include <filesystem>
#include <regex>
#include <set>

#include "core/file_io.h"

namespace kgate::native {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxFiles = 64;
constexpr std::size_t kMaxBytes = std::size_t{16} << 20;

struct Walk {
  std::set<fs::path> seen;
  std::string out;
};

void scan(const fs::path& dir, const std::string& text, Walk& w) {
  static const std::regex include_re(R"re(^[ \t]*#[ \t]*include[ \t]*"([^"]+)")re", std::regex::multiline);
  for (std::sregex_iterator it(text.begin(), text.end(), include_re), end; it != end; ++it) {
    if (w.seen.size() >= kMaxFiles || w.out.size() >= kMaxBytes) return;
    std::error_code ec;
    fs::path p = fs::weakly_canonical(dir / (*it)[1].str(), ec);
    if (ec || !fs::is_regular_file(p, ec) || !w.seen.insert(p).second) continue;
    // An include that cannot be read keys as empty: its compile then fails and says why.
    const std::string content = core::read_file(p.string()).bytes;
    w.out += p.string() + '\0' + content + '\0';
    scan(p.parent_path(), content, w);
  }
}

}  // namespace

std::string local_includes(const std::string& dir, const std::string& text) {
  Walk w;
  scan(fs::path(dir.empty() ? "." : dir), text, w);
  return w.out;
}

}  // namespace kgate::native

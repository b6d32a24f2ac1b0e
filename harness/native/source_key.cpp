#include "native/source_key.h"

#include <git2.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kgate::native {

namespace fs = std::filesystem;

std::string content_hash(const std::string& bytes) {
  static const int init = git_libgit2_init();  // idempotent; kept for the process lifetime
  (void)init;
  git_oid oid;
  if (git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) != 0) {
    const git_error* e = git_error_last();
    throw std::runtime_error(std::string("git_odb_hash failed: ") + (e != nullptr ? e->message : "?"));
  }
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

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
    std::ifstream f(p, std::ios::binary);
    std::ostringstream body;
    body << f.rdbuf();
    const std::string content = body.str();
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

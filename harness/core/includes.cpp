#include "core/includes.h"

#include <cctype>
#include <filesystem>
#include <regex>
#include <set>

#include "core/file_io.h"

namespace kgate::core {

namespace fs = std::filesystem;

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// True when the ' at src[i] continues a numeric literal (1'000, 0xFF'FF), i.e. the run of
// literal characters before it starts with a digit. u8'a' and L'a' start with a letter.
bool in_number(std::string_view src, std::size_t i) {
  std::size_t b = i;
  while (b > 0 && (is_ident_char(src[b - 1]) || src[b - 1] == '\'' || src[b - 1] == '.')) --b;
  return b < i && std::isdigit(static_cast<unsigned char>(src[b]));
}

constexpr std::size_t kMaxFiles = 64;
constexpr std::size_t kMaxBytes = std::size_t{16} << 20;

struct Walk {
  std::set<fs::path> seen;
  std::vector<IncludedFile> files;
  std::size_t bytes = 0;
};

void scan(const fs::path& dir, const std::string& source, Walk& w) {
  static const std::regex include_re(R"re(^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<(/[^>]+)>))re",
                                     std::regex::multiline);
  // an #include inside a comment is not compiled: not followed (nor linted)
  const std::string text = blank_comments(source, false);
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

std::string blank_comments(std::string_view src, bool strings) {
  std::string out(src);
  const std::size_t n = src.size();
  auto blank = [&](std::size_t i) {
    if (out[i] != '\n') out[i] = ' ';
  };
  auto literal = [&](std::size_t i) {  // a character of a string or character literal
    if (strings) blank(i);
  };
  std::size_t i = 0;
  while (i < n) {
    char c = src[i];
    if (c == '/' && i + 1 < n && src[i + 1] == '/') {
      // Line comment; a backslash-newline continues it.
      while (i < n && src[i] != '\n') {
        if (src[i] == '\\' && i + 1 < n && src[i + 1] == '\n') {
          blank(i);
          i += 2;
          continue;
        }
        blank(i++);
      }
      continue;
    }
    if (c == '/' && i + 1 < n && src[i + 1] == '*') {
      blank(i++);
      blank(i++);
      while (i < n && !(src[i] == '*' && i + 1 < n && src[i + 1] == '/')) blank(i++);
      if (i < n) {
        blank(i++);
        blank(i++);
      }
      continue;
    }
    if (c == 'R' && i + 1 < n && src[i + 1] == '"' && (i == 0 || !is_ident_char(src[i - 1]) ||
                                                       src[i - 1] == 'u' || src[i - 1] == 'U' ||
                                                       src[i - 1] == 'L' || src[i - 1] == '8')) {
      // Raw string R"delim( ... )delim".
      std::size_t open = src.find('(', i + 2);
      if (open != std::string_view::npos) {
        std::string close = ")" + std::string(src.substr(i + 2, open - i - 2)) + "\"";
        std::size_t end = src.find(close, open + 1);
        std::size_t stop = end == std::string_view::npos ? n : end + close.size();
        for (std::size_t k = i + 1; k < stop; ++k) literal(k);
        i = stop;
        continue;
      }
    }
    if (c == '"' || (c == '\'' && !in_number(src, i))) {
      // String or character literal (a ' inside a number is a digit separator).
      const char quote = c;
      literal(i++);
      while (i < n && src[i] != quote && src[i] != '\n') {
        if (src[i] == '\\' && i + 1 < n) literal(i++);
        literal(i++);
      }
      if (i < n && src[i] == quote) literal(i++);
      continue;
    }
    ++i;
  }
  return out;
}

std::vector<IncludedFile> local_include_files(const std::string& dir, const std::string& text) {
  Walk w;
  scan(fs::path(dir.empty() ? "." : dir), text, w);
  return std::move(w.files);
}

}  // namespace kgate::core

#include "search/tune_space.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"

namespace kgate::search {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

[[noreturn]] void fail(const std::string& file, int line, size_t col, const std::string& what) {
  throw UsageError(file + ":" + std::to_string(line) + ":" + std::to_string(col + 1) +
                   ": error: " + what);
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  lines.push_back(cur);
  return lines;
}

// Position just after the `kgate:tune` marker when the line holds one inside a comment.
size_t find_marker(const std::string& line) {
  static const std::string kMarker = "kgate:tune";
  size_t at = line.find(kMarker);
  if (at == std::string::npos) return std::string::npos;
  // Only a comment declares: `//` or `#` then optional blanks right before the marker.
  size_t p = at;
  while (p > 0 && (line[p - 1] == ' ' || line[p - 1] == '\t')) --p;
  bool slash = p >= 2 && line[p - 1] == '/' && line[p - 2] == '/';
  bool hash = p >= 1 && line[p - 1] == '#';
  if (!slash && !hash) return std::string::npos;
  return at + kMarker.size();
}

const std::regex& c_define() {
  static const std::regex r(R"(^(\s*#\s*define\s+)([A-Za-z_][A-Za-z0-9_]*)(\s+)([^\s/]+)(.*)$)");
  return r;
}
const std::regex& py_assign() {
  static const std::regex r(R"(^()([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)([^\s#]+)(.*)$)");
  return r;
}

}  // namespace

std::size_t TuneSpace::size() const {
  std::size_t n = 1;
  for (const auto& p : params) {
    if (p.values.empty()) return 0;
    if (n > SIZE_MAX / p.values.size()) return SIZE_MAX;
    n *= p.values.size();
  }
  return n;
}

Point TuneSpace::default_point() const {
  Point pt;
  for (const auto& p : params) pt[p.name] = p.default_value;
  return pt;
}

const Tunable* TuneSpace::find(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

TuneSpace parse_tune_space(const std::string& source, const std::string& file) {
  TuneSpace space;
  std::vector<std::string> lines = split_lines(source);
  std::set<std::string> seen;
  std::vector<std::pair<int, Point>> seed_lines;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    int lineno = static_cast<int>(li) + 1;
    size_t pos = find_marker(line);
    if (pos == std::string::npos) continue;
    // `kgate:tune-local`: the declared defaults are already a good point (a compiler's own
    // choice); search around them, never from a spread of random far-away points.
    if (line.compare(pos, 6, "-local") == 0) {
      space.local = true;
      continue;
    }
    if (line.compare(pos, 5, "-seed") == 0) {
      std::istringstream ss(line.substr(pos + 5));
      std::string tok;
      Point seed;
      while (ss >> tok) {
        if (tok == "*/") break;
        size_t eq = tok.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == tok.size())
          fail(file, lineno, line.find(tok, pos), "expected NAME=value after kgate:tune-seed, got '" + tok + "'");
        seed[tok.substr(0, eq)] = tok.substr(eq + 1);
      }
      if (seed.empty()) fail(file, lineno, pos, "kgate:tune-seed names no value (expected NAME=value ...)");
      seed_lines.push_back({lineno, seed});
      continue;
    }
    bool any = false;
    while (true) {
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
      if (pos >= line.size() || line.compare(pos, 2, "*/") == 0) break;
      if (!is_ident_start(line[pos]))
        fail(file, lineno, pos, "expected NAME=[v1,v2,...] after kgate:tune");
      size_t name_start = pos;
      while (pos < line.size() && is_ident(line[pos])) ++pos;
      std::string name = line.substr(name_start, pos - name_start);
      if (pos >= line.size() || line[pos] != '=')
        fail(file, lineno, pos, "expected '=' after tunable '" + name + "'");
      ++pos;
      if (pos >= line.size() || line[pos] != '[')
        fail(file, lineno, pos, "expected '[' to open the values of '" + name + "'");
      size_t close = line.find(']', pos);
      if (close == std::string::npos)
        fail(file, lineno, pos, "missing ']' closing the values of '" + name + "'");
      std::string body = line.substr(pos + 1, close - pos - 1);
      Tunable t;
      t.name = name;
      t.line = lineno;
      std::set<std::string> vals;
      std::stringstream ss(body);
      std::string item;
      size_t col = pos + 1;
      while (std::getline(ss, item, ',')) {
        std::string v = trim(item);
        if (v.empty()) fail(file, lineno, col, "empty value in the list of '" + name + "'");
        for (char c : v)
          if (std::isspace(static_cast<unsigned char>(c)) || c == '[' || c == ']')
            fail(file, lineno, col, "value '" + v + "' of '" + name + "' contains '" + c + "'");
        if (!vals.insert(v).second)
          fail(file, lineno, col, "value '" + v + "' listed twice for '" + name + "'");
        t.values.push_back(v);
        col += item.size() + 1;
      }
      if (t.values.empty()) fail(file, lineno, pos, "tunable '" + name + "' has no values");
      if (!seen.insert(name).second)
        fail(file, lineno, name_start, "tunable '" + name + "' declared twice");
      space.params.push_back(std::move(t));
      any = true;
      pos = close + 1;
    }
    if (!any) fail(file, lineno, pos, "kgate:tune declares nothing (expected NAME=[v1,...])");
  }
  // Defaults: the first `#define NAME v` / `NAME = v` line of each tunable.
  for (auto& t : space.params) {
    for (const auto& line : lines) {
      std::smatch m;
      if ((std::regex_match(line, m, c_define()) || std::regex_match(line, m, py_assign())) &&
          m[2].str() == t.name) {
        t.default_value = m[4].str();
        break;
      }
    }
    if (t.default_value.empty()) {
      t.default_value = t.values.front();
    } else if (std::find(t.values.begin(), t.values.end(), t.default_value) == t.values.end()) {
      // The declared default is the start point even when the list omits it.
      t.values.insert(t.values.begin(), t.default_value);
    }
  }
  for (const auto& [lineno, seed] : seed_lines) {
    Point pt = space.default_point();
    for (const auto& [name, value] : seed) {
      const Tunable* t = space.find(name);
      if (t == nullptr) fail(file, lineno, 0, "kgate:tune-seed names '" + name + "', which no kgate:tune declares");
      if (std::find(t->values.begin(), t->values.end(), value) == t->values.end())
        fail(file, lineno, 0, "kgate:tune-seed value " + name + "=" + value + " is not among its declared values");
      pt[name] = value;
    }
    space.seeds.push_back(pt);
  }
  return space;
}

std::string apply_point(const std::string& source, const Point& point) {
  std::vector<std::string> lines = split_lines(source);
  std::set<std::string> done;
  for (auto& line : lines) {
    std::smatch m;
    if (!std::regex_match(line, m, c_define()) && !std::regex_match(line, m, py_assign())) continue;
    auto it = point.find(m[2].str());
    if (it == point.end() || done.count(it->first)) continue;
    line = m[1].str() + m[2].str() + m[3].str() + it->second + m[5].str();
    done.insert(it->first);
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size()) out += '\n';
  }
  return out;
}

std::string format_point(const Point& point) {
  std::string s;
  for (const auto& [k, v] : point) {
    if (!s.empty()) s += ' ';
    s += k + "=" + v;
  }
  return s;
}

}  // namespace kgate::search

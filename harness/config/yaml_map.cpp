#include "config/yaml_map.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>

#include "config/suggest.h"

namespace kgate::config {

SourceLoc loc_of(const std::string& file, const YAML::Mark& mark) {
  SourceLoc loc;
  loc.file = file;
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

SourceLoc loc_of(const std::string& file, const YAML::Node& node) {
  if (!node.IsDefined()) return loc_of(file, YAML::Mark::null_mark());
  return loc_of(file, node.Mark());
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a sequence";
  return "'" + node.Scalar() + "'";
}

bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, *out, 10);
  return ec == std::errc() && p == e;
}

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, *out, std::chars_format::general);
  return ec == std::errc() && p == e && std::isfinite(*out);
}

bool parse_bool(const std::string& s, bool* out) {
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No",
                                       "NO",    "off",   "Off",   "OFF"};
  for (const char* t : kTrue)
    if (s == t) return *out = true, true;
  for (const char* f : kFalse)
    if (s == f) return *out = false, true;
  return false;
}

YamlMap::YamlMap(const YAML::Node& node, std::string file, std::string prefix,
                 std::vector<std::string> keys, Diagnostics& diags, const SourceLoc& where)
    : file_(std::move(file)),
      prefix_(std::move(prefix)),
      keys_(std::move(keys)),
      diags_(diags),
      where_(where) {
  if (node.IsDefined() && node.Mark().line >= 0) where_ = loc_of(file_, node);
  if (!node.IsDefined() || !node.IsMap()) {
    std::string what =
        prefix_.empty() ? "this file" : "'" + prefix_.substr(0, prefix_.size() - 1) + "'";
    diags_.error(where_, what + " must be a mapping, got " + describe(node));
    return;
  }
  valid_ = true;
  for (const auto& kv : node) {
    const YAML::Node k = kv.first;
    SourceLoc kloc = loc_of(file_, k);
    if (!k.IsScalar()) {
      diags_.error(kloc, "keys must be plain names, got " + describe(k));
      continue;
    }
    std::string key = k.Scalar();
    if (std::find(keys_.begin(), keys_.end(), key) == keys_.end()) {
      diags_.error(kloc, "unknown key '" + prefix_ + key + "'" + did_you_mean(key, keys_));
      continue;
    }
    if (find(key) != nullptr) {
      diags_.error(kloc, "duplicate key '" + prefix_ + key + "'");
      continue;
    }
    entries_.push_back({key, kv.second});
  }
}

const YamlMap::Entry* YamlMap::find(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

bool YamlMap::has(std::string_view key) const { return find(key) != nullptr; }

YAML::Node YamlMap::get(std::string_view key) const {
  const Entry* e = find(key);
  return e ? e->value : YAML::Node();
}

SourceLoc YamlMap::loc(std::string_view key) const {
  const Entry* e = find(key);
  if (e && e->value.Mark().line >= 0) return loc_of(file_, e->value);
  return where_;
}

void YamlMap::error(std::string_view key, std::string message) {
  diags_.error(loc(key), std::move(message));
}

const YamlMap::Entry* YamlMap::scalar(std::string_view key, bool required, const char* expected) {
  assert(std::find(keys_.begin(), keys_.end(), key) != keys_.end() && "undeclared key");
  if (!valid_) return nullptr;
  const Entry* e = find(key);
  if (e == nullptr) {
    if (required) diags_.error(where_, "missing required key '" + name(key) + "'");
    return nullptr;
  }
  if (!e->value.IsScalar()) {
    error(key, "'" + name(key) + "' must be " + expected + ", got " + describe(e->value));
    return nullptr;
  }
  return e;
}

bool YamlMap::read(std::string_view key, std::string* out, bool required) {
  const Entry* e = scalar(key, required, "a string");
  if (!e) return false;
  *out = e->value.Scalar();
  return true;
}

bool YamlMap::read(std::string_view key, int64_t* out, bool required) {
  const Entry* e = scalar(key, required, "an integer");
  if (!e) return false;
  int64_t v = 0;
  if (!parse_int(e->value.Scalar(), &v)) {
    error(key, "'" + name(key) + "' must be an integer, got " + describe(e->value));
    return false;
  }
  *out = v;
  return true;
}

bool YamlMap::read(std::string_view key, int* out, bool required) {
  int64_t v = 0;
  if (!read(key, &v, required)) return false;
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    error(key, "'" + name(key) + "' is out of range: " + std::to_string(v));
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool YamlMap::read(std::string_view key, uint64_t* out, bool required) {
  int64_t v = 0;
  if (!read(key, &v, required)) return false;
  if (v < 0) {
    error(key, "'" + name(key) + "' must be >= 0, got " + std::to_string(v));
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

bool YamlMap::read(std::string_view key, double* out, bool required) {
  const Entry* e = scalar(key, required, "a number");
  if (!e) return false;
  double v = 0;
  if (!parse_double(e->value.Scalar(), &v)) {
    error(key, "'" + name(key) + "' must be a number, got " + describe(e->value));
    return false;
  }
  *out = v;
  return true;
}

bool YamlMap::read(std::string_view key, bool* out, bool required) {
  const Entry* e = scalar(key, required, "true or false");
  if (!e) return false;
  bool v = false;
  if (!parse_bool(e->value.Scalar(), &v)) {
    error(key, "'" + name(key) + "' must be true or false, got " + describe(e->value));
    return false;
  }
  *out = v;
  return true;
}

bool YamlMap::read(std::string_view key, std::vector<std::string>* out, bool required,
                   std::vector<SourceLoc>* locs) {
  YAML::Node seq;
  if (!sequence(key, &seq, required)) return false;
  out->clear();
  if (locs) locs->clear();
  bool ok = true;
  for (const auto& item : seq) {
    if (!item.IsScalar()) {
      diags_.error(loc_of(file_, item),
                   "entries of '" + name(key) + "' must be strings, got " + describe(item));
      ok = false;
      continue;
    }
    out->push_back(item.Scalar());
    if (locs) locs->push_back(loc_of(file_, item));
  }
  return ok;
}

bool YamlMap::node(std::string_view key, YAML::Node* out, bool required, YAML::NodeType::value kind,
                   const char* what) {
  assert(std::find(keys_.begin(), keys_.end(), key) != keys_.end() && "undeclared key");
  if (!valid_) return false;
  const Entry* e = find(key);
  if (e == nullptr) {
    if (required) diags_.error(where_, "missing required key '" + name(key) + "'");
    return false;
  }
  if (e->value.Type() != kind) {
    error(key, "'" + name(key) + "' must be " + what + ", got " + describe(e->value));
    return false;
  }
  *out = e->value;
  return true;
}

bool YamlMap::mapping(std::string_view key, YAML::Node* out, bool required) {
  return node(key, out, required, YAML::NodeType::Map, "a mapping");
}

bool YamlMap::sequence(std::string_view key, YAML::Node* out, bool required) {
  return node(key, out, required, YAML::NodeType::Sequence, "a sequence");
}

}  // namespace kgate::config

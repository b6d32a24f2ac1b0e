#pragma once
// Protocol fixtures (tests/fixtures/protocol/README.md): expected JSON with placeholders
// for volatile values, and the ${VAR} substitution in requests.
#include <stdlib.h>

#include <fstream>
#include <stdexcept>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace kgate::testing {

using Json = nlohmann::json;

// Empty when `got` matches `want`, else the path and reason of the first mismatch.
// Placeholders in `want`: "<any>" (anything, key must exist), "<number>", "<string>",
// "<bool>", "<array>", "<object>", "<contains:TEXT>" (a string containing TEXT).
// Objects match when every expected key matches (extra keys in `got` are fine: fields
// are added additively); arrays match element by element and must have the same length.
inline std::string json_mismatch(const Json& want, const Json& got, const std::string& path = "$") {
  if (want.is_string()) {
    const std::string w = want.get<std::string>();
    if (w == "<any>") return "";
    if (w == "<number>") return got.is_number() ? "" : path + ": want a number, got " + got.dump();
    if (w == "<string>") return got.is_string() ? "" : path + ": want a string, got " + got.dump();
    if (w == "<bool>") return got.is_boolean() ? "" : path + ": want a bool, got " + got.dump();
    if (w == "<array>") return got.is_array() ? "" : path + ": want an array, got " + got.dump();
    if (w == "<object>") return got.is_object() ? "" : path + ": want an object, got " + got.dump();
    const std::string pre = "<contains:";
    if (w.rfind(pre, 0) == 0 && w.size() > pre.size() && w.back() == '>') {
      std::string needle = w.substr(pre.size(), w.size() - pre.size() - 1);
      if (got.is_string() && got.get<std::string>().find(needle) != std::string::npos) return "";
      return path + ": want a string containing \"" + needle + "\", got " + got.dump();
    }
  }
  if (want.is_object()) {
    if (!got.is_object()) return path + ": want an object, got " + got.dump();
    for (const auto& [k, v] : want.items()) {
      if (!got.contains(k)) return path + ": missing key \"" + k + "\"";
      if (auto m = json_mismatch(v, got.at(k), path + "." + k); !m.empty()) return m;
    }
    return "";
  }
  if (want.is_array()) {
    if (!got.is_array()) return path + ": want an array, got " + got.dump();
    if (want.size() != got.size()) {
      return path + ": want " + std::to_string(want.size()) + " elements, got " +
             std::to_string(got.size());
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (auto m = json_mismatch(want[i], got[i], path + "[" + std::to_string(i) + "]"); !m.empty()) {
        return m;
      }
    }
    return "";
  }
  if (want.is_number() && got.is_number()) {
    return want.get<double>() == got.get<double>() ? "" : path + ": want " + want.dump() + ", got " + got.dump();
  }
  return want == got ? "" : path + ": want " + want.dump() + ", got " + got.dump();
}

// Replaces every ${NAME} in the text.
inline std::string substitute(std::string text, const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    const std::string pat = "${" + k + "}";
    for (std::size_t p = text.find(pat); p != std::string::npos; p = text.find(pat, p + v.size())) {
      text.replace(p, pat.size(), v);
    }
  }
  return text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fixture session: request lines to send (objects are dumped; strings are sent raw)
// and the expected responses (null = no response expected for that line).
struct FixtureSession {
  std::vector<std::string> lines;
  std::vector<Json> expected;
};

inline FixtureSession load_fixture(const std::string& dir, const std::string& name,
                                   const std::map<std::string, std::string>& vars) {
  FixtureSession s;
  Json req = Json::parse(substitute(read_text(dir + "/" + name + ".request.json"), vars));
  Json resp = Json::parse(substitute(read_text(dir + "/" + name + ".response.json"), vars));
  if (!req.is_array()) req = Json::array({req});
  if (!resp.is_array()) resp = Json::array({resp});
  for (const auto& r : req) s.lines.push_back(r.is_string() ? r.get<std::string>() : r.dump());
  for (const auto& r : resp) s.expected.push_back(r);
  return s;
}

// A fresh directory under $TMPDIR (or /tmp) for one test's cache.
inline std::string make_temp_dir(const std::string& tag) {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/kgate-" + tag + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  return tmpl;
}

}  // namespace kgate::testing

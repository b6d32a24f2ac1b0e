#pragma once
// Helpers shared by the report_* unit tests: fixture paths, temp dirs, golden files.
// Golden files may contain {{*}} placeholders that match any text within one line (for
// volatile numbers, times and versions). KGATE_UPDATE_GOLDEN=1 rewrites the goldens.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/record_io.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <string>
#include <utility>
#include <vector>

namespace kgate::report::testing {

inline std::string fixture(const std::string& rel) {
  return std::string(KGATE_TEST_DATA) + "/report/" + rel;
}

// One row of a gate table, for records a test builds by hand.
inline gates::GateResult gate_row(gates::Gate gate, gates::GateStatus status,
                                  gates::Fault fault = gates::Fault::kNone, std::string reason = "") {
  gates::GateResult g;
  g.gate = gate;
  g.status = status;
  g.fault = fault;
  g.reason = std::move(reason);
  return g;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("kgate-report-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string operator/(const std::string& rel) const { return (path / rel).string(); }
};

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

inline bool line_matches(const std::string& golden, const std::string& actual) {
  if (golden.find("{{*}}") == std::string::npos) return golden == actual;
  std::string re;
  size_t pos = 0;
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  while (true) {
    size_t hit = golden.find("{{*}}", pos);
    std::string lit = golden.substr(pos, hit == std::string::npos ? std::string::npos : hit - pos);
    re += std::regex_replace(lit, special, R"(\$&)");
    if (hit == std::string::npos) break;
    re += ".*";
    pos = hit + 5;
  }
  return std::regex_match(actual, std::regex(re));
}

inline void expect_golden(const std::string& actual, const std::string& golden_rel) {
  std::string path = fixture("golden/" + golden_rel);
  if (const char* u = std::getenv("KGATE_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    write_file(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << "missing golden " << path
                                             << " (run with KGATE_UPDATE_GOLDEN=1)";
  auto want = split_lines(read_file(path));
  auto got = split_lines(actual);
  ASSERT_EQ(want.size(), got.size()) << "line count differs from " << path;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(line_matches(want[i], got[i]))
        << path << ":" << (i + 1) << "\n  want: " << want[i] << "\n  got:  " << got[i];
}

// Runs a shell command, returns (exit status, stdout+stderr).
inline std::pair<int, std::string> run_command(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

inline std::string kgate_bin() {
  const char* b = std::getenv("KGATE_BIN");
  return b ? b : std::string(KGATE_BINARY_DIR) + "/kgate";
}

// A small JSON Schema check (the subset the kgate schemas use: $ref to #/$defs, type,
// required, properties, items, enum, minimum). Returns the problems found ("" = valid).
inline std::string schema_errors(const nlohmann::json& schema, const nlohmann::json& root,
                                 const nlohmann::json& node, const std::string& where) {
  const nlohmann::json* s = &node;
  if (node.contains("$ref")) {
    std::string ref = node["$ref"];
    s = &root["$defs"][ref.substr(std::string("#/$defs/").size())];
  }
  std::string err;
  auto type_ok = [](const std::string& t, const nlohmann::json& v) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  };
  if (s->contains("type")) {
    bool ok = false;
    if ((*s)["type"].is_array()) {
      for (const auto& t : (*s)["type"]) ok = ok || type_ok(t, schema);
    } else {
      ok = type_ok((*s)["type"], schema);
    }
    if (!ok) return where + ": wrong type " + std::string(schema.type_name()) + "\n";
  }
  if (s->contains("enum")) {
    bool found = false;
    for (const auto& e : (*s)["enum"]) found = found || e == schema;
    if (!found) err += where + ": " + schema.dump() + " not in enum\n";
  }
  if (s->contains("minimum") && schema.is_number() &&
      schema.get<double>() < (*s)["minimum"].get<double>())
    err += where + ": below minimum\n";
  if (schema.is_object()) {
    if (s->contains("required"))
      for (const auto& k : (*s)["required"])
        if (!schema.contains(k.get<std::string>()))
          err += where + ": missing required \"" + k.get<std::string>() + "\"\n";
    if (s->contains("properties"))
      for (auto it = (*s)["properties"].begin(); it != (*s)["properties"].end(); ++it)
        if (schema.contains(it.key()))
          err += schema_errors(schema[it.key()], root, it.value(), where + "." + it.key());
  }
  if (schema.is_array() && s->contains("items"))
    for (size_t i = 0; i < schema.size(); ++i)
      err += schema_errors(schema[i], root, (*s)["items"], where + "[" + std::to_string(i) + "]");
  return err;
}

// `doc` checked against the schema file `schema_path`.
inline std::string validate_against(const std::string& schema_path, const nlohmann::json& doc) {
  nlohmann::json schema = nlohmann::json::parse(read_file(schema_path));
  return schema_errors(doc, schema, schema, "$");
}

// The first record of a run as a dispatch-aware (compiled-mode) problem.
inline ProblemResult compiled_record(const RunRecords& run, Outcome outcome) {
  ProblemResult r = run.results.front();
  r.mode = "compiled";
  r.outcome = outcome;
  return r;
}

// The first record of a run with its eager column empty, `why` recorded as the reason.
inline ProblemResult eager_unmeasured(const RunRecords& run, const std::string& why) {
  ProblemResult r = run.results.front();
  r.eager_us = 0;
  r.references_missing = {{"eager", why}};
  return r;
}

}  // namespace kgate::report::testing

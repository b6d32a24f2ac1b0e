#pragma once
// YamlMap: reads one YAML mapping into typed values while recording diagnostics with
// source positions. The keys a mapping may hold are declared up front, so unknown keys
// (with "did you mean"), duplicate keys, missing keys and wrong types are all reported in
// one pass and a reader never throws on malformed input.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostics.h"

namespace kgate::config {

// yaml-cpp marks are 0-based; SourceLoc is 1-based (0 = unknown).
SourceLoc loc_of(const std::string& file, const YAML::Mark& mark);
SourceLoc loc_of(const std::string& file, const YAML::Node& node);

// "a mapping", "a sequence", "a scalar 'x'", "nothing": for "must be X, got Y" messages.
std::string describe(const YAML::Node& node);

class YamlMap {
 public:
  // `where` is the location used when the node itself has no position (e.g. absent);
  // `prefix` is prepended to key names in messages ("budget." -> "budget.seeds").
  YamlMap(const YAML::Node& node, std::string file, std::string prefix,
          std::vector<std::string> keys, Diagnostics& diags, const SourceLoc& where);

  bool valid() const { return valid_; }  // the node was a mapping
  bool has(std::string_view key) const;
  YAML::Node get(std::string_view key) const;  // a null node when absent
  SourceLoc loc(std::string_view key) const;   // the value's position, else the mapping's
  SourceLoc where() const { return where_; }
  const std::string& file() const { return file_; }
  std::string name(std::string_view key) const { return prefix_ + std::string(key); }

  // Each returns true when the key was present with a value of the right type (stored in
  // *out); false when absent (reported if `required`) or malformed (always reported).
  bool read(std::string_view key, std::string* out, bool required = false);
  bool read(std::string_view key, int64_t* out, bool required = false);
  bool read(std::string_view key, int* out, bool required = false);
  bool read(std::string_view key, uint64_t* out, bool required = false);
  bool read(std::string_view key, double* out, bool required = false);
  bool read(std::string_view key, bool* out, bool required = false);
  // A sequence of scalars; locs (optional) receives each element's position.
  bool read(std::string_view key, std::vector<std::string>* out, bool required = false,
            std::vector<SourceLoc>* locs = nullptr);
  // A nested mapping (null node + false when absent or not a mapping; reported).
  bool mapping(std::string_view key, YAML::Node* out, bool required = false);
  bool sequence(std::string_view key, YAML::Node* out, bool required = false);

  void error(std::string_view key, std::string message);  // at the key's value

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
  };
  const Entry* find(std::string_view key) const;
  // Present, non-null scalar value? Reports missing / null / wrong shape.
  const Entry* scalar(std::string_view key, bool required, const char* expected);
  // A nested node of one kind (mapping or sequence, `what` naming it in the error).
  bool node(std::string_view key, YAML::Node* out, bool required, YAML::NodeType::value kind,
            const char* what);

  std::string file_;
  std::string prefix_;
  std::vector<std::string> keys_;
  Diagnostics& diags_;
  SourceLoc where_;
  std::vector<Entry> entries_;
  bool valid_ = false;
};

// Scalar parsing shared by YamlMap and list/map readers: strict base-10 integers,
// finite decimals, YAML booleans.
bool parse_int(const std::string& s, int64_t* out);
bool parse_double(const std::string& s, double* out);
bool parse_bool(const std::string& s, bool* out);

}  // namespace kgate::config

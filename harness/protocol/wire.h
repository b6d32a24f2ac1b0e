#pragma once
// Strict JSON <-> struct conversion for the protocol's messages (messages.h).
//
// nlohmann's own generated from_json converts whatever it finds: a float into an int field
// is cast (undefined behaviour past the int's range: a worker's `"sm_count": 1e300`), a
// negative number into an unsigned one wraps, and a wrong type escapes as a
// nlohmann::json::type_error that the readers of worker answers (gates/evaluator.cpp) do
// not expect. These readers check every field instead:
//   - a field that is absent keeps its default; one that is present must have its type:
//     a string, true/false, a number, an integer in the field's range (an integral float
//     such as 3.0 is accepted), an array, an object;
//   - a mismatch throws DecodeError (a kgate::InfraError: the other side broke the
//     protocol) naming the field's path: "malformed protocol message: 'cases[0].dims.R'
//     must be an integer in [-2^63, 2^63), got 1e+300".
// Requests (what kgate-native decodes, KGATE_WIRE_PARAMS) rethrow it as a
// nlohmann::json::type_error at the top, which the runner answers with bad_request.
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kgate::protocol::wire {

using Json = nlohmann::json;

// A field that does not have its type. path(): "cases[0].dims.R" ("" = the message).
class DecodeError : public InfraError {
 public:
  DecodeError(std::string path, std::string problem)
      : InfraError("malformed protocol message: " +
                   (path.empty() ? std::string("the message") : "'" + path + "'") + " " + problem),
        path_(std::move(path)),
        problem_(std::move(problem)) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  std::string problem_;
};

// A short account of a value for messages: its JSON, cut at 40 characters.
inline std::string shown(const Json& j) {
  std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

[[noreturn]] inline void mismatch(const Json& j, const std::string& expected) {
  throw DecodeError("", "must be " + expected + ", got " + shown(j));
}

// Runs `read` on a member at `step` ("name", "[3]"), prefixing the step to a DecodeError.
template <typename F>
void at(const std::string& step, F&& read) {
  try {
    read();
  } catch (const DecodeError& e) {
    std::string path = step;
    if (!e.path().empty()) path += e.path().front() == '[' ? e.path() : "." + e.path();
    throw DecodeError(path, e.problem());
  }
}

inline void read(const Json& j, std::string& out) {
  if (!j.is_string()) mismatch(j, "a string");
  out = j.get_ref<const std::string&>();
}

inline void read(const Json& j, bool& out) {
  if (!j.is_boolean()) mismatch(j, "true or false");
  out = j.get<bool>();
}

inline void read(const Json& j, double& out) {
  if (!j.is_number()) mismatch(j, "a number");
  out = j.get<double>();
}

template <std::integral T>
  requires(!std::same_as<T, bool>)
void read(const Json& j, T& out) {
  using L = std::numeric_limits<T>;
  const std::string expected = "an integer in [" + std::to_string(L::min()) + ", " +
                               std::to_string(L::max()) + "]";
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(L::max())) mismatch(j, expected);
    out = static_cast<T>(v);
  } else if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (v < static_cast<int64_t>(L::min()) || v > static_cast<int64_t>(L::max()))
        mismatch(j, expected);
    } else {
      if (v < 0 || static_cast<uint64_t>(v) > static_cast<uint64_t>(L::max())) mismatch(j, expected);
    }
    out = static_cast<T>(v);
  } else if (j.is_number_float()) {
    // 3.0 is 3; 2.5, 1e300 and anything past the range are not integers of T. The bounds
    // are powers of two, exact as doubles: [min, max + 1).
    const double d = j.get<double>();
    const double lo = static_cast<double>(L::min());
    const double hi = std::ldexp(1.0, L::digits);
    if (!(d >= lo && d < hi) || std::trunc(d) != d) mismatch(j, expected);
    out = static_cast<T>(d);
  } else {
    mismatch(j, expected);
  }
}

// Enums declared with NLOHMANN_JSON_SERIALIZE_ENUM: a string (an unknown name is the
// enum's first value, as nlohmann maps it).
template <typename T>
  requires std::is_enum_v<T>
void read(const Json& j, T& out) {
  if (!j.is_string()) mismatch(j, "a string");
  out = j.get<T>();
}

template <typename T>
void read(const Json& j, std::vector<T>& out);
template <typename T>
void read(const Json& j, std::map<std::string, T>& out);

// A message type: its from_json (KGATE_WIRE_*), found by argument-dependent lookup.
template <typename T>
  requires std::is_class_v<T>
void read(const Json& j, T& out) {
  from_json(j, out);
}

template <typename T>
void read(const Json& j, std::vector<T>& out) {
  if (!j.is_array()) mismatch(j, "an array");
  std::vector<T> v;
  v.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    at("[" + std::to_string(i) + "]", [&] { read(j[i], v.emplace_back()); });
  out = std::move(v);
}

template <typename T>
void read(const Json& j, std::map<std::string, T>& out) {
  if (!j.is_object()) mismatch(j, "an object");
  std::map<std::string, T> m;
  for (auto it = j.begin(); it != j.end(); ++it) at(it.key(), [&] { read(*it, m[it.key()]); });
  out = std::move(m);
}

inline void require_object(const Json& j) {
  if (!j.is_object()) mismatch(j, "a JSON object");
}

// One member of an object: absent keeps the default.
template <typename T>
void field(const Json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  at(key, [&] { read(*it, out); });
}

}  // namespace kgate::protocol::wire

#define KGATE_WIRE_FROM(v1) ::kgate::protocol::wire::field(kgate_j, #v1, kgate_t.v1);

// to_json as nlohmann's NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT; from_json strict.
#define KGATE_WIRE_TYPE(Type, ...)                                                     \
  inline void to_json(::nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))            \
  }                                                                                    \
  inline void from_json(const ::nlohmann::json& kgate_j, Type& kgate_t) {              \
    ::kgate::protocol::wire::require_object(kgate_j);                                  \
    kgate_t = Type{};                                                                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(KGATE_WIRE_FROM, __VA_ARGS__))            \
  }

// What workers answer (and the parts of requests): a mismatch is a DecodeError.
#define KGATE_WIRE_RESULT(Type, ...) KGATE_WIRE_TYPE(Type, __VA_ARGS__)
#define KGATE_WIRE_PART(Type, ...) KGATE_WIRE_TYPE(Type, __VA_ARGS__)

// A request's params as a worker decodes them: a mismatch is a nlohmann type_error (302)
// with the same message, which kgate-native answers with bad_request.
#define KGATE_WIRE_PARAMS(Type, ...)                                                   \
  inline void to_json(::nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))            \
  }                                                                                    \
  inline void from_json(const ::nlohmann::json& kgate_j, Type& kgate_t) {              \
    try {                                                                              \
      ::kgate::protocol::wire::require_object(kgate_j);                                \
      kgate_t = Type{};                                                                \
      NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(KGATE_WIRE_FROM, __VA_ARGS__))          \
    } catch (const ::kgate::protocol::wire::DecodeError& e) {                          \
      throw ::nlohmann::json::type_error::create(302, e.what(), nullptr);              \
    }                                                                                  \
  }

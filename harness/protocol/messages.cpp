#include "protocol/messages.h"

#include <limits>

namespace kgate::protocol {

namespace {

// An integer member that fits int64 (nlohmann keeps a positive number past 2^63 as
// unsigned; get<int64_t> would wrap it).
bool is_int64(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return false;
  return !it->is_number_unsigned() ||
         it->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

}  // namespace

bool parse_request(const std::string& line, Request* out, std::string* err) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *err = "request is not a JSON object";
    return false;
  }
  if (!is_int64(j, "v")) {
    *err = "request has no integer \"v\"";
    return false;
  }
  // As int64: get<int> would cut 4294967297 down to 1.
  if (j["v"].get<int64_t>() != kVersion) {
    *err = "protocol version " + j["v"].dump() + " not supported (this worker speaks " +
           std::to_string(kVersion) + ")";
    return false;
  }
  if (!is_int64(j, "id")) {
    *err = "request has no integer \"id\" (a 64-bit signed integer)";
    return false;
  }
  if (!j.contains("op") || !j["op"].is_string()) {
    *err = "request has no string \"op\"";
    return false;
  }
  out->v = kVersion;
  out->id = j["id"].get<int64_t>();
  out->op = j["op"].get<std::string>();
  j.erase("v");
  j.erase("id");
  j.erase("op");
  out->params = std::move(j);
  return true;
}

std::string make_request(int64_t id, const std::string& op, const Json& params) {
  Json j = params.is_object() ? params : Json::object();
  j["v"] = kVersion;
  j["id"] = id;
  j["op"] = op;
  return j.dump();
}

bool parse_response(const std::string& line, Response* out, std::string* err) {
  Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *err = "response is not a JSON object";
    return false;
  }
  if (!is_int64(j, "v") || j["v"].get<int64_t>() != kVersion) {
    *err = "response has a missing or unsupported \"v\"";
    return false;
  }
  if (!is_int64(j, "id") || !j.contains("ok") || !j["ok"].is_boolean()) {
    *err = "response lacks \"id\" or \"ok\"";
    return false;
  }
  out->v = kVersion;
  out->id = j["id"].get<int64_t>();
  out->ok = j["ok"].get<bool>();
  if (out->ok) {
    // Every op's result is an object (docs/protocol.md); an absent one is {}.
    if (j.contains("result") && !j["result"].is_object()) {
      *err = "response's \"result\" is not a JSON object";
      return false;
    }
    out->result = j.value("result", Json::object());
    out->error.reset();
  } else {
    if (!j.contains("error") || !j["error"].is_object()) {
      *err = "error response lacks \"error\"";
      return false;
    }
    try {
      out->error = j["error"].get<WireError>();
    } catch (const std::exception& e) {
      *err = std::string("bad error object: ") + e.what();
      return false;
    }
  }
  return true;
}

std::string make_ok(int64_t id, const Json& result) {
  Json j;
  j["v"] = kVersion;
  j["id"] = id;
  j["ok"] = true;
  j["result"] = result;
  // A compiler log may carry bytes that are not UTF-8; replace them rather than throw.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string make_error(int64_t id, ErrorKind kind, const std::string& message) {
  Json j;
  j["v"] = kVersion;
  j["id"] = id;
  j["ok"] = false;
  j["error"] = WireError{kind, message};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kgate::protocol

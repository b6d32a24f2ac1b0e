// libFuzzer target: the worker protocol decoder (harness/protocol/messages.h).
//
// The input is one line as kgate reads it from a worker's stdout (and, for kgate-native,
// one request line as the runner reads it from kgate). A response line goes through
// parse_response() and, when it is an ok answer, its result is decoded as every op's
// result type the way kgate's callers do (`reply.result.get<protocol::CheckResult>()` in
// gates/evaluator.cpp and cli/cmd_doctor.cpp).
// Contract: parse_request()/parse_response() return false with a reason on a malformed
// line and never throw; decoding a result that does not match its type throws
// kgate::InfraError (the worker broke the protocol). Anything else -- an nlohmann
// exception escaping, a crash, a sanitizer report (e.g. a float cast out of an int's
// range) -- is a bug in the decoder.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "protocol/messages.h"

namespace {

using namespace kgate::protocol;

template <typename T>
void decode_as(const Json& result) {
  try {
    T v = result.get<T>();
    (void)Json(v).dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const kgate::InfraError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  // The worker client drops one trailing '\r' before parsing (worker.cpp).
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::string err;
  Response resp;
  if (parse_response(line, &resp, &err) && resp.ok) {
    decode_as<HelloResult>(resp.result);
    decode_as<LoadProblemResult>(resp.result);
    decode_as<CompileResult>(resp.result);
    decode_as<CheckResult>(resp.result);
    decode_as<TimeResult>(resp.result);
  }
  Request req;
  (void)parse_request(line, &req, &err);
  return 0;
}

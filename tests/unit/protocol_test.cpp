#include "protocol/messages.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace kgate::protocol {
namespace {

TEST(Protocol, RequestRoundTrip) {
  std::string line = make_request(7, "check", Json{{"slot", "candidate"}});
  Request r;
  std::string err;
  ASSERT_TRUE(parse_request(line, &r, &err)) << err;
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.op, "check");
  EXPECT_EQ(r.params["slot"], "candidate");
  EXPECT_FALSE(r.params.contains("v"));
}

TEST(Protocol, RejectsWrongVersionAndGarbage) {
  Request r;
  std::string err;
  EXPECT_FALSE(parse_request(R"({"v":2,"id":1,"op":"hello"})", &r, &err));
  EXPECT_NE(err.find("version 2"), std::string::npos) << err;
  EXPECT_FALSE(parse_request("not json", &r, &err));
  EXPECT_FALSE(parse_request(R"({"v":1,"op":"hello"})", &r, &err));
  EXPECT_FALSE(parse_request(R"([1,2])", &r, &err));
}

TEST(Protocol, ErrorResponseRoundTrip) {
  Response resp;
  std::string err;
  ASSERT_TRUE(parse_response(make_error(3, ErrorKind::kUnsupported, "no CUDA driver"), &resp, &err))
      << err;
  EXPECT_FALSE(resp.ok);
  ASSERT_TRUE(resp.error.has_value());
  EXPECT_EQ(resp.error->kind, ErrorKind::kUnsupported);
  EXPECT_EQ(resp.error->message, "no CUDA driver");
}

TEST(Protocol, TypedParamsDefaultMissingFields) {
  TimeParams p = Json{{"dtype", "f16"}, {"dims", {{"R", 4}, {"C", 8}}}}.get<TimeParams>();
  EXPECT_EQ(p.dtype, "f16");
  EXPECT_EQ(p.dims.at("C"), 8);
  EXPECT_EQ(p.min_samples, 30);
  ASSERT_EQ(p.slots.size(), 2u);
}

}  // namespace
}  // namespace kgate::protocol

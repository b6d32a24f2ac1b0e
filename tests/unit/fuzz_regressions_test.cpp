// What the fuzz targets of tests/fuzz found (docs/fuzzing.md), one test per fix: the
// input, reduced, and the typed error with its message that a reader now gives instead of
// a leaked nlohmann exception or undefined behaviour. The corpus files named
// regression-* replay the same inputs through the targets.
#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/loader.h"
#include "core/error.h"
#include "protocol/messages.h"
#include "report/record.h"
#include "search/experiment_record.h"
#include "search/journal.h"

namespace kgate {
namespace {

using ::testing::HasSubstr;
using protocol::Json;

// ---- protocol ---------------------------------------------------------------------------

TEST(FuzzRegressions, ProtocolAnOkResponseWhoseResultIsNoObjectIsMalformed) {
  protocol::Response r;
  std::string err;
  EXPECT_FALSE(protocol::parse_response(R"({"v":1,"id":5,"ok":true,"result":"<object>"})", &r, &err));
  EXPECT_THAT(err, HasSubstr("\"result\" is not a JSON object"));
  // An absent result is still {}.
  ASSERT_TRUE(protocol::parse_response(R"({"v":1,"id":5,"ok":true})", &r, &err)) << err;
  EXPECT_TRUE(r.result.is_object());
}

TEST(FuzzRegressions, ProtocolAResultFieldOfTheWrongTypeIsAnInfraErrorNamingIt) {
  const Json j = Json::parse(R"({"cases":[{"case_id":"a","outputs":[{"name":"y","nan":"x"}]}]})");
  try {
    (void)j.get<protocol::CheckResult>();
    FAIL() << "decoded";
  } catch (const InfraError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'cases[0].outputs[0].nan' must be an integer"));
    EXPECT_THAT(e.what(), HasSubstr("got \"x\""));
  }
}

TEST(FuzzRegressions, ProtocolAFloatPastAnIntsRangeIsAnErrorNotACast) {
  // nlohmann's own from_json cast 1e300 to int (undefined behaviour, UBSan's report).
  const Json j = Json::parse(R"({"device":{"sm_count":1e300}})");
  EXPECT_THROW((void)j.get<protocol::HelloResult>(), InfraError);
  const Json neg = Json::parse(R"({"seed":-1})");
  EXPECT_THROW((void)neg.get<protocol::CheckCase>(), InfraError);
  const Json frac = Json::parse(R"({"batch":2.5})");
  EXPECT_THROW((void)frac.get<protocol::TimeResult>(), InfraError);
}

TEST(FuzzRegressions, ProtocolIntegralFloatsAndIntegersForDoublesStillDecode) {
  const auto t = Json::parse(R"({"batch":3.0,"flops":7,"samples_us":{"candidate":[1,2.5]}})")
                     .get<protocol::TimeResult>();
  EXPECT_EQ(t.batch, 3);
  EXPECT_EQ(t.flops, 7.0);
  ASSERT_EQ(t.samples_us.at("candidate").size(), 2u);
  EXPECT_EQ(t.samples_us.at("candidate")[1], 2.5);
  // A field that is absent keeps its default.
  EXPECT_EQ(Json::object().get<protocol::TimeResult>().batch, 1);
}

TEST(FuzzRegressions, ProtocolRequestParamsOfTheWrongTypeStayAJsonTypeError) {
  // kgate-native answers these with bad_request (runner.cpp catches Json::exception).
  const Json j = Json::parse(R"({"slot":"candidate","cases":[{"repeats":1e300}]})");
  try {
    (void)j.get<protocol::CheckParams>();
    FAIL() << "decoded";
  } catch (const Json::type_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'cases[0].repeats' must be an integer"));
  }
}

TEST(FuzzRegressions, ProtocolAVersionPastIntIsNotVersionOne) {
  // get<int>() cut 4294967297 (2^32 + 1) down to 1.
  protocol::Request rq;
  protocol::Response rs;
  std::string err;
  EXPECT_FALSE(protocol::parse_request(R"({"v":4294967297,"id":1,"op":"hello"})", &rq, &err));
  EXPECT_THAT(err, HasSubstr("4294967297"));
  EXPECT_FALSE(protocol::parse_response(R"({"v":4294967297,"id":1,"ok":true})", &rs, &err));
  // An id past int64 is no id.
  EXPECT_FALSE(protocol::parse_request(R"({"v":1,"id":18446744073709551615,"op":"hello"})", &rq, &err));
  EXPECT_THAT(err, HasSubstr("\"id\""));
}

// ---- journal ----------------------------------------------------------------------------

const std::string kHeader =
    R"({"format":"kgate-journal","v":1,"run_id":"r1","suite":"demo","seed":5600804533402862782})";

TEST(FuzzRegressions, JournalAHeaderSeedPastUint64IsAnErrorAtLineOne) {
  // 56006804533402862782 > 2^64 parses as a float; value<uint64_t>() cast it.
  const std::string data =
      R"({"format":"kgate-journal","v":1,"run_id":"r1","seed":56006804533402862782})" "\n";
  try {
    (void)search::Journal::parse(data, "out/journal.jsonl");
    FAIL() << "parsed";
  } catch (const InfraError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out/journal.jsonl:1:1: error: journal header field 'seed'"));
  }
  EXPECT_THROW((void)search::Journal::parse(R"({"format":"kgate-journal","v":1,"run_id":7})" "\n", "j"),
               InfraError);
}

TEST(FuzzRegressions, JournalAFormatOrVersionOfAnotherTypeIsAForeignFile) {
  // value("format", "") and value("v", 0) threw nlohmann type_errors on these.
  EXPECT_THROW((void)search::Journal::parse(R"({"format":1,"v":1})" "\n", "j"), UsageError);
  try {
    (void)search::Journal::parse(R"({"format":"kgate-journal","v":"1"})" "\n", "j");
    FAIL() << "parsed";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("j:1:1: error: journal version \"1\" is not supported"));
  }
  EXPECT_THROW((void)search::Journal::parse(R"({"format":"kgate-journal","v":1e300})" "\n", "j"),
               UsageError);
}

TEST(FuzzRegressions, JournalAFloatInAnIntegerFieldOfAnEventIsAnErrorAtItsLine) {
  try {
    (void)search::Journal::parse(kHeader + "\n" + R"({"event":"experiment","problem":"p","n":1e300})" "\n",
                                 "out/journal.jsonl");
    FAIL() << "parsed";
  } catch (const InfraError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out/journal.jsonl:2: error: experiment event: 'n' must be an integer"));
  }
  // Nested: a problem_done's result, its gate rows; unsigned fields refuse negatives.
  const std::string done =
      R"({"event":"problem_done","problem":"p","result":{"outcome":"improved","experiments":2.5}})";
  EXPECT_THROW((void)search::Journal::parse(kHeader + "\n" + done + "\n", "j"), InfraError);
  const std::string seed = R"({"event":"problem_done","problem":"p","result":{"seed":-3}})";
  EXPECT_THROW((void)search::Journal::parse(kHeader + "\n" + seed + "\n", "j"), InfraError);
}

TEST(FuzzRegressions, JournalEventsAsKgateWritesThemStillParse) {
  search::ExperimentRecord r;
  r.problem = "native/softmax";
  r.n = 3;
  r.latency_us = 12.5;
  r.gates.resize(2);
  r.gates[1].rows.resize(2);
  r.gates[1].elapsed_s = 4;  // an integer where a double is: fine
  Json e = r;
  e["event"] = "experiment";
  report::ProblemResult res;
  res.problem = "softmax";
  res.seed = 18446744073709551615u;
  res.experiments = 4;
  res.gates.resize(1);
  res.vs_accepted = report::AcceptedComparison{};
  const Json done = {{"event", "problem_done"}, {"problem", "native/softmax"}, {"result", res}};
  const auto c = search::Journal::parse(kHeader + "\n" + e.dump() + "\n" + done.dump() + "\n", "j");
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].get<search::ExperimentRecord>().n, 3);
  EXPECT_EQ(c.events[1].at("result").get<report::ProblemResult>().seed, 18446744073709551615u);
  EXPECT_EQ(c.header.value("seed", uint64_t{0}), 5600804533402862782u);
}

// ---- config -----------------------------------------------------------------------------

TEST(FuzzRegressions, ConfigTextIsReadAsTheFileWouldBeAtItsPath) {
  config::Diagnostics d;
  auto g = config::parse_gpu_text("somewhere/configs/gpus/x.yaml", "version: 1\nid: x\nbogus: 1\n", d);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->id, "x");
  EXPECT_THAT(d.str(), HasSubstr("somewhere/configs/gpus/x.yaml:3:1: error: unknown key 'bogus'"));
  config::Diagnostics bad;
  EXPECT_FALSE(config::parse_suite_text("s/suites/a.yaml", "[unclosed", bad).has_value());
  EXPECT_THAT(bad.str(), HasSubstr("s/suites/a.yaml:"));
  EXPECT_THAT(bad.str(), HasSubstr("invalid YAML"));
}

}  // namespace
}  // namespace kgate

#include "native/runner.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "native/host_backend.h"
#include "native_fixture_match.h"

namespace kgate::native {
namespace {
namespace fs = std::filesystem;
using testing::Json;

class NativeRunnerFixtures : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { cache_ = testing::make_temp_dir("rn"); }
  void TearDown() override { fs::remove_all(cache_); }
  std::string cache_;
};

TEST_P(NativeRunnerFixtures, SessionMatches) {
  auto s = testing::load_fixture(std::string(KGATE_TEST_DATA) + "/protocol", GetParam(),
                                 {{"FIXTURES", KGATE_TEST_DATA}, {"CACHE_DIR", cache_}});
  ASSERT_EQ(s.lines.size(), s.expected.size());
  Runner runner;
  for (std::size_t i = 0; i < s.lines.size(); ++i) {
    std::string resp = runner.handle(s.lines[i]);
    Json got = Json::parse(resp, nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << "response is not JSON: " << resp;
    EXPECT_EQ(testing::json_mismatch(s.expected[i], got), "")
        << "request " << i << ": " << s.lines[i] << "\nresponse: " << resp;
  }
}

INSTANTIATE_TEST_SUITE_P(Protocol, NativeRunnerFixtures,
                         ::testing::Values("hello_host", "bad_requests", "softmax_session",
                                           "compile_failures", "user_reference"));

TEST(NativeRunner, BlankLinesGetNoResponseAndShutdownEnds) {
  Runner r;
  EXPECT_EQ(r.handle("   "), "");
  EXPECT_FALSE(r.done());
  Json resp = Json::parse(r.handle(R"({"v":1,"id":3,"op":"shutdown"})"));
  EXPECT_TRUE(resp["ok"].get<bool>());
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.exit_code(), kRunnerExitOk);
}

TEST(NativeRunner, CudaHelloIsUnsupportedWithoutThePlugin) {
  Runner r;
  Json resp = Json::parse(r.handle(R"({"v":1,"id":1,"op":"hello","backend":"cuda"})"));
  // The test binary's directory holds no plugin: unsupported, with the loader's reason.
  ASSERT_FALSE(resp["ok"].get<bool>()) << resp.dump();
  EXPECT_EQ(resp["error"]["kind"], "unsupported");
  EXPECT_NE(resp["error"]["message"].get<std::string>().find("libkgate_native_cuda.so"),
            std::string::npos);
  EXPECT_FALSE(r.done());
}

// A backend whose launches fault, to test the exit-after-fault rule.
class FaultingBackend : public HostBackend {
 public:
  std::string name() const override { return "faulty"; }
  int run(const Module&, const std::vector<kgate_tensor>&, std::vector<kgate_tensor>&) override {
    throw DeviceFault("illegal address (simulated)");
  }
};

TEST(NativeRunner, DeviceFaultAnswersThenAsksToExit) {
  RunnerOptions opts;
  opts.backend_factory = [](const protocol::HelloParams&, std::string*) {
    return std::unique_ptr<Backend>(new FaultingBackend());
  };
  std::string cache = testing::make_temp_dir("rn");
  Runner r(opts);
  auto call = [&](const std::string& line) { return Json::parse(r.handle(line)); };
  ASSERT_TRUE(call(R"({"v":1,"id":1,"op":"hello","cache_dir":")" + cache + "\"}")["ok"].get<bool>());
  ASSERT_TRUE(call(R"({"v":1,"id":2,"op":"load_problem","problem":{"id":"p","op":"softmax"}})")["ok"].get<bool>());
  Json c = call(R"({"v":1,"id":3,"op":"compile","source_path":")" + std::string(KGATE_TEST_DATA) +
                "/candidates/runner/softmax_ok.cpp\"}");
  ASSERT_TRUE(c["result"]["compiled"].get<bool>()) << c.dump();
  Json resp = call(R"({"v":1,"id":4,"op":"check","cases":[{"case_id":"a","seed":1,"dims":{"R":2,"C":3}}]})");
  EXPECT_FALSE(resp["ok"].get<bool>());
  EXPECT_EQ(resp["id"], 4);
  EXPECT_EQ(resp["error"]["kind"], "internal");
  EXPECT_NE(resp["error"]["message"].get<std::string>().find("device fault"), std::string::npos);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.exit_code(), kRunnerExitDeviceFault);
  fs::remove_all(cache);
}

TEST(NativeRunner, DefaultTolerancesComeFromTheOpWhenOmitted) {
  std::string cache = testing::make_temp_dir("rn");
  Runner r;
  auto call = [&](const std::string& line) { return Json::parse(r.handle(line)); };
  call(R"({"v":1,"id":1,"op":"hello","cache_dir":")" + cache + "\"}");
  call(R"({"v":1,"id":2,"op":"load_problem","problem":{"id":"p","op":"softmax"}})");
  call(R"({"v":1,"id":3,"op":"compile","source_path":")" + std::string(KGATE_TEST_DATA) +
       "/candidates/runner/softmax_ok.cpp\"}");
  // f16 with explicit zero tolerance: rounding is over; without tolerances: the op's apply.
  Json strict = call(R"({"v":1,"id":4,"op":"check","cases":[{"case_id":"a","seed":1,"dims":{"R":4,"C":50},"dtype":"f16","atol":0,"rtol":0}]})");
  Json dflt = call(R"({"v":1,"id":5,"op":"check","cases":[{"case_id":"a","seed":1,"dims":{"R":4,"C":50},"dtype":"f16"}]})");
  EXPECT_GT(strict["result"]["cases"][0]["outputs"][0]["over_tol"].get<int>(), 0) << strict.dump();
  EXPECT_EQ(dflt["result"]["cases"][0]["outputs"][0]["over_tol"].get<int>(), 0) << dflt.dump();
  fs::remove_all(cache);
}

// A failed compile empties the slot and names no library; a good one names the shared
// object it loaded (what kgate copies for the PyTorch references).
TEST(NativeRunner, FailedCompileEmptiesTheSlot) {
  std::string cache = testing::make_temp_dir("rn");
  Runner r;
  auto call = [&](const std::string& line) { return Json::parse(r.handle(line)); };
  call(R"({"v":1,"id":1,"op":"hello","cache_dir":")" + cache + "\"}");
  call(R"({"v":1,"id":2,"op":"load_problem","problem":{"id":"p","op":"softmax"}})");
  std::string dir = std::string(KGATE_TEST_DATA) + "/candidates/runner/";
  Json ok = call(R"({"v":1,"id":3,"op":"compile","source_path":")" + dir + "softmax_ok.cpp\"}")["result"];
  EXPECT_TRUE(ok["compiled"].get<bool>());
  const std::string lib = ok.value("library", "");
  EXPECT_TRUE(fs::path(lib).is_absolute() && fs::path(lib).extension() == ".so" && fs::is_regular_file(lib)) << lib;
  Json bad = call(R"({"v":1,"id":4,"op":"compile","source_path":")" + dir + "broken_syntax.cpp\"}")["result"];
  EXPECT_FALSE(bad["compiled"].get<bool>());
  EXPECT_EQ(bad.value("library", ""), "");
  Json resp = call(R"({"v":1,"id":5,"op":"check","cases":[{"case_id":"a","seed":1,"dims":{"R":2,"C":3}}]})");
  EXPECT_EQ(resp["error"]["kind"], "no_candidate");
  fs::remove_all(cache);
}

}  // namespace
}  // namespace kgate::native

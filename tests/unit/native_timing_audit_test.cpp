// The audit of the timed calls in kgate-native (native/timing_audit.h): the schedule, and
// the host runner's `time` on cheating candidates and correct ones.
#include "native/timing_audit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "native/runner.h"
#include "native_fixture_match.h"

namespace kgate::native {
namespace {
namespace fs = std::filesystem;
using testing::Json;

// The result-cache rule (us): a cost per call on new contents that the baseline shows too
// (8 -> 20 us for a fast honest slot against the baseline's 100 -> 112) is not a cache; a
// factor alone would call it one (2.5x against 1.12x).
TEST(ResultCacheRule, ACostPerCallOnNewContentsIsNotACacheButACacheBeyondItIs) {
  EXPECT_FALSE(looks_like_result_cache(100, 112, 8, 20));
  EXPECT_TRUE(looks_like_result_cache(100, 112, 8, 110));  // computes only on new contents
  // the host backend: no cost per call, the factor rule (a 9.3x cache)
  EXPECT_TRUE(looks_like_result_cache(1000, 1010, 107, 1000));
  EXPECT_FALSE(looks_like_result_cache(1000, 1010, 990, 1100));
  // the baseline slowed as much: load, not a cache; no baseline or slot times: no finding
  EXPECT_FALSE(looks_like_result_cache(100, 200, 10, 200));
  EXPECT_FALSE(looks_like_result_cache(0, 112, 8, 110));
  EXPECT_FALSE(looks_like_result_cache(100, 112, 0, 110));
}

TEST(RoundAudit, TheFirstRoundsAreAlwaysComparedAndAFailureStopsSampling) {
  std::vector<std::size_t> seen;
  RoundAudit a([&](std::size_t set) { seen.push_back(set); return std::string(); }, {}, 1);
  for (std::size_t r = 0; r < RoundAudit::kFirstRounds; ++r) EXPECT_TRUE(a.after_round(r % 2, 10.0));
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 0, 1}));
  RoundAudit b([&](std::size_t set) { return set == 1 ? std::string("differs") : std::string(); }, {}, 1);
  EXPECT_TRUE(b.after_round(0, 10.0));
  EXPECT_FALSE(b.after_round(1, 10.0));
  EXPECT_FALSE(b.after_round(0, 10.0));  // stays failed
  EXPECT_EQ(b.failure(), "sampling round 2 (input set 1): differs");
  protocol::TimeResult r;
  b.fill(r);
  EXPECT_EQ(r.audited, 2);
  EXPECT_EQ(r.audit_failure, b.failure());
}

TEST(RoundAudit, AnOutOfScheduleFailureCarriesItsMeaningAndPoisonCallsBack) {
  std::vector<std::size_t> poisoned;
  RoundAudit a([&](std::size_t set) { return set == 1 ? std::string("unwritten") : std::string(); },
               [&](std::size_t set) { poisoned.push_back(set); }, 1);
  a.poison(0);
  a.poison(1);
  EXPECT_EQ(poisoned, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(a.audit_now(0, "a replay (set 0)", "what it means"));
  EXPECT_EQ(a.failure(), "");
  EXPECT_FALSE(a.audit_now(1, "a replay (set 1)", "what it means"));
  EXPECT_EQ(a.failure(), "a replay (set 1): unwritten; what it means");
  EXPECT_FALSE(a.audit_now(0, "later"));  // the first failure stands
  EXPECT_EQ(a.failure(), "a replay (set 1): unwritten; what it means");
}

TEST(RoundAudit, AnExpensiveComparisonIsDrawnRarelyButNeverBelowOneIn32) {
  // Rounds of 1 us against a comparison the schedule measures as far slower: after the
  // first rounds about 1 in 32 is compared.
  int compared = 0;
  RoundAudit a([&](std::size_t) {
    ++compared;
    volatile double x = 0;
    for (int i = 0; i < 200000; ++i) x = x + i;
    return std::string();
  }, {}, 7);
  for (int r = 0; r < 3200; ++r) a.after_round(0, 1.0);
  EXPECT_GT(compared, RoundAudit::kFirstRounds + 50);
  EXPECT_LT(compared, RoundAudit::kFirstRounds + 200);
  // Sampling that stopped early still ends with kMinAudited comparisons (one per set).
  RoundAudit b([&](std::size_t) { return std::string(); }, {}, 7);
  b.after_round(0, 1.0);
  EXPECT_TRUE(b.finish(3));
  EXPECT_EQ(b.audited(), 4);
  RoundAudit c([&](std::size_t) { return std::string(); }, {}, 7);
  for (int r = 0; r < 4; ++r) c.after_round(r % 2, 1.0);
  EXPECT_TRUE(c.finish(20));
  EXPECT_EQ(c.audited(), RoundAudit::kMinAudited);
}

class NativeTimingAudit : public ::testing::Test {
 protected:
  void SetUp() override { cache_ = testing::make_temp_dir("ta"); }
  void TearDown() override { fs::remove_all(cache_); }
  Json call(const std::string& line) { return Json::parse(runner_.handle(line)); }
  // The softmax problem with `baseline` and `candidate` (runner fixtures; `defines` the
  // candidate's, a JSON object) compiled, the baseline checked (the audit's tolerance),
  // then one `time` of both.
  Json time_pair(const std::string& candidate, int input_sets = 2, const std::string& defines = "{}") {
    const std::string dir = std::string(KGATE_TEST_DATA) + "/candidates/runner/";
    call(R"({"v":1,"id":1,"op":"hello","cache_dir":")" + cache_ + "\"}");
    call(R"({"v":1,"id":2,"op":"load_problem","problem":{"id":"p","op":"softmax"}})");
    for (auto [slot, file] : {std::pair{"baseline", "softmax_ok.cpp"}, std::pair{"candidate", candidate.c_str()}}) {
      Json c = call(R"({"v":1,"id":3,"op":"compile","slot":")" + std::string(slot) + R"(","source_path":")" +
                    dir + file + R"(","defines":)" + (std::string(slot) == "candidate" ? defines : "{}") + "}");
      EXPECT_TRUE(c["result"]["compiled"].get<bool>()) << c.dump();
    }
    Json chk = call(R"({"v":1,"id":4,"op":"check","slot":"baseline","cases":[{"case_id":"a","seed":1,"dims":{"R":16,"C":64},"dtype":"f32"}]})");
    EXPECT_EQ(chk["result"]["cases"][0]["outputs"][0]["over_tol"].get<int>(), 0) << chk.dump();
    Json t = call(R"({"v":1,"id":5,"op":"time","slots":["candidate","baseline"],"dims":{"R":16,"C":64},)"
                  R"("dtype":"f32","seed":3,"warmup_s":0.01,"min_time_s":0.05,"max_time_s":0.3,)"
                  R"("min_samples":10,"max_samples":400,"target_rse":0.5,"input_sets":)" +
                  std::to_string(input_sets) + "}");
    EXPECT_TRUE(t.contains("result")) << t.dump();
    return t["result"];
  }
  std::string cache_;
  Runner runner_;
};

TEST_F(NativeTimingAudit, ACorrectCandidateComputedAnotherWayPasses) {
  Json r = time_pair("softmax_tuned.cpp");
  EXPECT_EQ(r["audit_failure"].get<std::string>(), "") << r.dump();
  EXPECT_GE(r["audited"].get<int>(), RoundAudit::kMinAudited) << r.dump();
  EXPECT_FALSE(r["samples_us"]["candidate"].empty());
}

TEST_F(NativeTimingAudit, ACandidateComputingEveryOtherCallIsCaught) {
  // With two input sets, one set's calls are the skipped ones: its cleared outputs stay
  // cleared (a sampling round), or the other set's result stays where fresh contents
  // were rotated in.
  Json r = time_pair("softmax_every_other.cpp");
  const std::string f = r["audit_failure"].get<std::string>();
  EXPECT_TRUE(f.find("sampling round") == 0 || f.find("a round on fresh contents") == 0) << r.dump();
  EXPECT_NE(f.find("slot 'candidate' output 'y'"), std::string::npos) << f;
}

TEST_F(NativeTimingAudit, ACandidateHonestOnlyWhileCheckedIsCaught) {
  Json r = time_pair("../softmax/less_work_while_timed.cpp", 2, R"({"HONEST_CALLS":"30","BENCH_ROWS":"16"})");
  EXPECT_NE(r["audit_failure"].get<std::string>().find("differ from slot 'baseline'"), std::string::npos)
      << r.dump();
}

TEST_F(NativeTimingAudit, AResultCacheKeyedOnAddressesIsCaughtOnFreshContents) {
  Json r = time_pair("softmax_cache_by_address.cpp");
  EXPECT_NE(r["audit_failure"].get<std::string>().find("a round on fresh contents"), std::string::npos)
      << r.dump();
}

TEST_F(NativeTimingAudit, OneInputSetSaysItHadNoFreshRound) {
  Json r = time_pair("softmax_tuned.cpp", 1);
  EXPECT_EQ(r["audit_failure"].get<std::string>(), "") << r.dump();
  EXPECT_EQ(r["audit_note"].get<std::string>(), "one input set: no round on fresh contents");
}

}  // namespace
}  // namespace kgate::native

// `kgate check`: the changed-file -> problem mapping and the PR verdict of one candidate.
#include "cli/check_map.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace kgate::cli::check {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A repository with a native level (one softmax: host and cuda starters), a second
// native problem sharing the host starter, and a KernelBench level with solutions.
class CheckMap : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kgate_check_map_" + std::to_string(std::random_device{}()));
    write(root_ / "configs/gpus/host.yaml",
          "version: 1\nid: host\nname: Host CPU\nbackend: host\nmatch: {name: \".*\"}\npeak_bandwidth_gbps: 20\n");
    write(root_ / "configs/levels/nat.yaml",
          "version: 1\nid: nat\ntitle: n\nkind: native\nroot: ../../native\nselect: all\n");
    write(root_ / "configs/levels/kb.yaml",
          "version: 1\nid: kb\ntitle: k\nkind: kernelbench\nroot: ../../kb/ref\nselect: all\n"
          "baseline: eager\nsolutions: ../../kb/sol\n");
    const std::string body = "op: softmax\nbench: {R: 4, C: 8}\nsweep: [{R: 3, C: 5}]\ndtypes: [f32]\nbench_dtype: f32\n";
    write(root_ / "native/sm.yaml", "version: 1\nid: sm\ntitle: s\n" + body +
                                        "starters: {host: starters/sm.cpp, cuda: starters/sm.cu}\n");
    write(root_ / "native/sm2.yaml", "version: 1\nid: sm2\ntitle: s2\n" + body +
                                         "starters: {host: starters/sm.cpp}\n");
    write(root_ / "native/starters/sm.cpp", "// host\n");
    write(root_ / "native/starters/sm.cu", "// cuda\n");
    write(root_ / "kb/ref/19_ReLU.py", "# model\n");
    write(root_ / "kb/sol/19_ReLU.py", "# ModelNew\n");
    write(root_ / "kb/sol/99_Orphan.py", "# no reference\n");
    write(root_ / "README.md", "docs\n");
    config::Diagnostics d;
    cat_ = config::load_repo_catalog(root_.string(), d);
    ASSERT_FALSE(d.has_errors()) << d.str();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  ChangeMap map(const std::vector<std::string>& files, const std::string& backend = "host") {
    return map_changed_files(cat_, root_.string(), files, backend);
  }
  fs::path root_;
  config::Catalog cat_;
};

std::vector<std::string> ids(const ChangeMap& m) {
  std::vector<std::string> v;
  for (const auto& t : m.targets) v.push_back(t.problem);
  return v;
}

TEST_F(CheckMap, HostStarterMapsToEveryProblemUsingIt) {
  ChangeMap m = map({"native/starters/sm.cpp"});
  EXPECT_EQ(ids(m), (std::vector<std::string>{"nat/sm", "nat/sm2"}));
  ASSERT_EQ(m.targets.size(), 2u);
  EXPECT_EQ(m.targets[0].kind, "native");
  EXPECT_EQ(m.targets[0].level, "nat");
  EXPECT_EQ(m.targets[0].rel, "native/starters/sm.cpp");
  ASSERT_NE(m.targets[0].native, nullptr);
  EXPECT_EQ(m.targets[0].native->id, "sm");
  EXPECT_TRUE(m.unmapped.empty());
  EXPECT_TRUE(m.other_backend.empty());
}

TEST_F(CheckMap, StarterOfAnotherBackendIsReportedNotChecked) {
  ChangeMap m = map({"native/starters/sm.cu"});
  EXPECT_TRUE(m.targets.empty());
  ASSERT_EQ(m.other_backend.size(), 1u);
  EXPECT_EQ(m.other_backend[0].problem, "nat/sm");
  EXPECT_EQ(m.other_backend[0].backend, "cuda");
  EXPECT_TRUE(m.unmapped.empty());
  // With --backend cuda it is checked, and the host starter is the other one.
  ChangeMap c = map({"native/starters/sm.cu", "native/starters/sm.cpp"}, "cuda");
  EXPECT_EQ(ids(c), (std::vector<std::string>{"nat/sm"}));
  ASSERT_EQ(c.other_backend.size(), 1u);  // nat/sm2 (host only); nat/sm is checked
  EXPECT_EQ(c.other_backend[0].problem, "nat/sm2");
}

TEST_F(CheckMap, KernelBenchSolutionWithReference) {
  ChangeMap m = map({"kb/sol/19_ReLU.py", "kb/sol/99_Orphan.py", "kb/ref/19_ReLU.py"});
  EXPECT_EQ(ids(m), (std::vector<std::string>{"kb/19_ReLU"}));
  ASSERT_EQ(m.targets.size(), 1u);
  EXPECT_EQ(m.targets[0].kind, "kernelbench");
  EXPECT_EQ(m.targets[0].baseline_mode, "eager");
  EXPECT_EQ(fs::path(m.targets[0].source).filename(), "19_ReLU.py");
  EXPECT_EQ(fs::path(m.targets[0].source).parent_path().filename(), "ref");
  // No reference for the orphan; the reference model itself is no candidate.
  EXPECT_EQ(m.unmapped, (std::vector<std::string>{"kb/sol/99_Orphan.py", "kb/ref/19_ReLU.py"}));
}

TEST_F(CheckMap, OtherFilesDeletedFilesAndDuplicates) {
  ChangeMap m = map({"README.md", "native/sm.yaml", "native/starters/gone.cpp",
                     "./native/starters/sm.cpp", "native/starters/sm.cpp"});
  EXPECT_EQ(ids(m), (std::vector<std::string>{"nat/sm", "nat/sm2"}));
  EXPECT_EQ(m.unmapped,
            (std::vector<std::string>{"README.md", "native/sm.yaml", "native/starters/gone.cpp"}));
  EXPECT_TRUE(map({}).targets.empty());
}

// A candidate the change deletes (gone from the work tree) maps its problems to `deleted`:
// they fail the check, never silently drop out of it.
TEST_F(CheckMap, DeletedCandidateMapsToDeleted) {
  fs::remove(root_ / "kb/sol/19_ReLU.py");
  fs::remove(root_ / "native/starters/sm.cpp");
  ChangeMap m = map({"kb/sol/19_ReLU.py", "native/starters/sm.cpp", "native/starters/gone.cpp"});
  EXPECT_TRUE(m.targets.empty());
  std::vector<std::string> gone;
  for (const auto& t : m.deleted) gone.push_back(t.problem + " " + t.rel);
  EXPECT_EQ(gone, (std::vector<std::string>{"kb/19_ReLU kb/sol/19_ReLU.py", "nat/sm native/starters/sm.cpp",
                                            "nat/sm2 native/starters/sm.cpp"}));
  EXPECT_EQ(m.unmapped, (std::vector<std::string>{"native/starters/gone.cpp"}));
}

gates::CandidateVerdict verdict(bool passed) {
  gates::CandidateVerdict v;
  v.passed = passed;
  for (gates::Gate g : {gates::Gate::kStatic, gates::Gate::kCorrectness, gates::Gate::kOracle,
                        gates::Gate::kPerformance}) {
    gates::GateResult r;
    r.gate = g;
    r.status = gates::GateStatus::kPass;
    v.gates.push_back(r);
  }
  return v;
}

gates::Timing timing(double s, double lo, double hi, gates::SpeedVerdict verdict) {
  gates::Timing t;
  t.baseline_us = 10;
  t.candidate_us = 10 / s;
  t.speedup = s;
  t.speedup_lo = lo;
  t.speedup_hi = hi;
  t.verdict = verdict;
  return t;
}

// The GPU target a check's records name, as `kgate run` would (the accepted results' key).
TEST_F(CheckMap, GpuTargetOfACheck) {
  write(root_ / "configs/gpus/cpu2.yaml",
        "version: 1\nid: cpu2\nname: Other CPU\nbackend: host\nmatch: {name: \"^other\"}\npeak_bandwidth_gbps: 10\n");
  write(root_ / "configs/gpus/h200.yaml",
        "version: 1\nid: h200\nname: NVIDIA H200\nbackend: cuda\nmatch: {name: \"H200\", cc: \"9.0\"}\n"
        "sm_count: 132\nl2_bytes: 52428800\nmemory_bytes: 150000000000\npeak_bandwidth_gbps: 4800\n"
        "peak_tflops: {f32: 66.9}\n");
  config::Diagnostics d;
  config::Catalog cat = config::load_repo_catalog(root_.string(), d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  ASSERT_TRUE(cat.gpu("h200"));
  // The suite's only target for the backend, whatever the device is called.
  EXPECT_EQ(gpu_target_for(cat, {"host", "h200"}, "host", "some cpu", ""), "host");
  EXPECT_EQ(gpu_target_for(cat, {"host", "h200"}, "cuda", "NVIDIA H200", "9.0"), "h200");
  // Several for the backend: the one the device matches.
  EXPECT_EQ(gpu_target_for(cat, {"host", "cpu2"}, "host", "other box", ""), "cpu2");
  EXPECT_EQ(gpu_target_for(cat, {"host", "cpu2"}, "host", "some cpu", ""), "host");
  // No suite: the catalog's match; a device nothing matches: none.
  EXPECT_EQ(gpu_target_for(cat, {}, "cuda", "NVIDIA H200", "9.0"), "h200");
  EXPECT_EQ(gpu_target_for(cat, {}, "cuda", "NVIDIA A100", "8.0"), "");
  // The suite lists targets, none of which the device is: none (not the catalog's match).
  EXPECT_EQ(gpu_target_for(cat, {"h200"}, "host", "some cpu", ""), "");
}

TEST(CheckOutcome, FailedGateNamesGateAndCase) {
  gates::CandidateVerdict v = verdict(false);
  v.failed_gate = gates::Gate::kCorrectness;
  v.gates[1].status = gates::GateStatus::kFail;
  v.gates[1].failed_case = "seed=7/R=3,C=5/f32/normal";
  v.gates[1].reason = "max_abs_err 0.5 > atol";
  Conclusion c = check_outcome(v, {});
  EXPECT_EQ(c.outcome, report::Outcome::kRegressed);
  EXPECT_TRUE(c.failed);
  EXPECT_EQ(c.reason, "correctness gate failed at case seed=7/R=3,C=5/f32/normal: max_abs_err 0.5 > atol");
  // A reason that names the case already is not repeated.
  v.gates[1].reason = "correctness: case seed=7/R=3,C=5/f32/normal: 15 of 15 elements over tolerance";
  EXPECT_EQ(check_outcome(v, {}).reason,
            "correctness gate failed: correctness: case seed=7/R=3,C=5/f32/normal: 15 of 15 elements over tolerance");
}

TEST(CheckOutcome, SpeedClasses) {
  config::GateThresholds t;  // keep 1.01, regression 1.03
  gates::CandidateVerdict v = verdict(true);
  v.timing = timing(1.5, 1.4, 1.6, gates::SpeedVerdict::kFaster);
  EXPECT_EQ(check_outcome(v, t).outcome, report::Outcome::kImproved);
  EXPECT_FALSE(check_outcome(v, t).failed);

  v.timing = timing(1.0, 0.98, 1.02, gates::SpeedVerdict::kSame);
  EXPECT_EQ(check_outcome(v, t).outcome, report::Outcome::kMatched);
  EXPECT_FALSE(check_outcome(v, t).failed);

  // Upper bound below 1/1.03 = 0.971: a significant slowdown even when the verdict is not `slower`.
  v.timing = timing(0.95, 0.94, 0.96, gates::SpeedVerdict::kUnknown);
  Conclusion c = check_outcome(v, t);
  EXPECT_EQ(c.outcome, report::Outcome::kRegressed);
  EXPECT_TRUE(c.failed);
  EXPECT_NE(c.reason.find("slower than the base"), std::string::npos) << c.reason;

  // Slightly slower, within the threshold and not significant: matched.
  v.timing = timing(0.98, 0.96, 0.99, gates::SpeedVerdict::kSame);
  EXPECT_FALSE(check_outcome(v, t).failed);
  // The stats verdict `slower` fails on its own.
  v.timing = timing(0.98, 0.96, 0.99, gates::SpeedVerdict::kSlower);
  EXPECT_TRUE(check_outcome(v, t).failed);

  // A degenerate problem never counts as improved.
  v.timing = timing(1.5, 1.4, 1.6, gates::SpeedVerdict::kFaster);
  v.degenerate = "constant output";
  EXPECT_EQ(check_outcome(v, t).outcome, report::Outcome::kMatched);
}

}  // namespace
}  // namespace kgate::cli::check

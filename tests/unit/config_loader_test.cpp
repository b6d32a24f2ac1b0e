#include "config/loader.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "config_fake_ops.h"
#include "core/error.h"
#include "core/sandbox.h"

namespace kgate::config {
namespace {

using testing::fake_ops;
using testing::fixture;
using testing::lines_for;
namespace fs = std::filesystem;

TEST(ConfigLoader, FileKindFollowsDirectory) {
  EXPECT_EQ(file_kind_of("configs/gpus/h200.yaml"), FileKind::kGpu);
  EXPECT_EQ(file_kind_of("/x/configs/levels/native.yaml"), FileKind::kLevel);
  EXPECT_EQ(file_kind_of("suites/demo.yaml"), FileKind::kSuite);
  EXPECT_EQ(file_kind_of("kernelbench/native/softmax.yaml"), FileKind::kProblem);
  EXPECT_EQ(file_kind_of("configs/gpus/old/a100.yaml"), FileKind::kGpu);  // nearest wins
  EXPECT_EQ(file_kind_of("suites/native/x.yaml"), FileKind::kProblem);
  EXPECT_EQ(file_kind_of("elsewhere/x.yaml"), std::nullopt);
  EXPECT_EQ(file_kind_of("x.yaml"), std::nullopt);
}

TEST(ConfigLoader, GoodGpuTarget) {
  Diagnostics d;
  auto g = parse_gpu_file(fixture("good/configs/gpus/big-gpu.yaml"), d);
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_EQ(g->id, "big-gpu");
  EXPECT_EQ(g->name, "Test GPU");
  EXPECT_EQ(g->backend, "cuda");
  EXPECT_EQ(g->match_name, "Test GPU 9000");
  EXPECT_EQ(g->match_cc, "9.0");
  EXPECT_EQ(g->sm_count, 100);
  EXPECT_EQ(g->l2_bytes, 52428800);
  EXPECT_EQ(g->memory_bytes, 85899345920);
  EXPECT_DOUBLE_EQ(g->peak_bandwidth_gbps, 3000.5);
  std::map<std::string, double> peaks = {{"f16", 900}, {"bf16", 900}, {"tf32", 450}, {"fp8", 1800}};
  EXPECT_EQ(g->peak_tflops, peaks);  // "bfloat16" is stored under its canonical name
  EXPECT_EQ(g->loc.str(), fixture("good/configs/gpus/big-gpu.yaml") + ":2:5");
}

TEST(ConfigLoader, GoodHostTargetNeedsOnlyBandwidth) {
  GpuTarget g = load_gpu_target(fixture("good/configs/gpus/host.yaml"));
  EXPECT_EQ(g.backend, "host");
  EXPECT_EQ(g.match_cc, "");
  EXPECT_EQ(g.sm_count, 0);
  EXPECT_DOUBLE_EQ(g.peak_bandwidth_gbps, 20);
}

TEST(ConfigLoader, GoodLevels) {
  LevelConfig l = load_level(fixture("good/configs/levels/nat-pick.yaml"));
  EXPECT_EQ(l.id, "nat-pick");
  EXPECT_EQ(l.kind, "native");
  EXPECT_EQ(l.root, fixture("good/native"));
  EXPECT_EQ(l.select, "list");
  EXPECT_EQ(l.problems, (std::vector<std::string>{"rms", "softmax"}));
  EXPECT_EQ(l.baseline, "reference");

  LevelConfig all = load_level(fixture("good/configs/levels/nat.yaml"));
  EXPECT_EQ(all.select, "all");  // inferred: neither problems nor glob
  EXPECT_EQ(all.title, "All native fixtures");

  LevelConfig kb = load_level(fixture("good/configs/levels/kb.yaml"));
  EXPECT_EQ(kb.kind, "kernelbench");
  EXPECT_EQ(kb.select, "glob");  // inferred from `glob:`
  EXPECT_EQ(kb.glob, "level1/*.py");
  EXPECT_EQ(kb.baseline, "compile");  // the kernelbench default
}

TEST(ConfigLoader, GoodSuiteEveryKey) {
  Suite s = load_suite(fixture("good/suites/full.yaml"));
  EXPECT_EQ(s.id, "full");
  EXPECT_EQ(s.levels, (std::vector<std::string>{"nat-pick", "kb"}));
  EXPECT_EQ(s.problems, (std::vector<std::string>{"nat/softmax", "nat/rms"}));
  EXPECT_EQ(s.gpus, (std::vector<std::string>{"big-gpu", "host"}));
  EXPECT_EQ(s.backend, "auto");
  EXPECT_EQ(s.budget.max_experiments, 3);
  EXPECT_DOUBLE_EQ(s.budget.problem_wall_s, 30);
  EXPECT_DOUBLE_EQ(s.budget.suite_wall_s, 90);
  EXPECT_DOUBLE_EQ(s.budget.problem_floor_s, 5);
  EXPECT_EQ(s.budget.max_consecutive_reverts, 5);  // default kept
  EXPECT_DOUBLE_EQ(s.budget.screen_slack, 0.1);
  EXPECT_EQ(s.agent.kind, "http");
  EXPECT_EQ(s.agent.url, "http://localhost:8000/v1");
  EXPECT_EQ(s.agent.model, "test-model");
  EXPECT_EQ(s.agent.api_key_env, "TEST_KEY");
  EXPECT_EQ(s.gates.seeds, 4);
  EXPECT_DOUBLE_EQ(s.gates.rho, 8);
  EXPECT_DOUBLE_EQ(s.gates.keep_threshold, 1.02);
  EXPECT_DOUBLE_EQ(s.gates.confidence, 0.9);
  EXPECT_DOUBLE_EQ(s.gates.gamma, 1.03);  // default kept
  EXPECT_DOUBLE_EQ(s.measurement.min_time_s, 0.1);
  EXPECT_DOUBLE_EQ(s.measurement.max_time_s, 1);
  EXPECT_EQ(s.measurement.min_samples, 5);
  EXPECT_DOUBLE_EQ(s.measurement.target_rse, 0.01);
  EXPECT_FALSE(s.measurement.flush_l2);
  EXPECT_TRUE(s.fail_on.correctness);
  EXPECT_TRUE(s.fail_on.performance);
}

std::string file_text(const fs::path& f) {
  std::ifstream in(f);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Sizes whose element count wraps around int64 or passes kgate's cap on one tensor are
// refused where they are written, never handed to a worker as a small wrapped size.
TEST(ConfigLoader, TensorSizesThatOverflowAreRefused) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kgate_dims_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(fixture("good"), dir, fs::copy_options::recursive);
  const fs::path f = dir / "native" / "softmax.yaml";
  const std::string text = file_text(f);
  for (const std::string dims : {"{R: 9223372036854775807, C: 4}", "{R: 1000000, C: 1000000}"}) {
    std::string t = text;
    t.replace(t.find("{R: 1024, C: 1024}"), 18, dims);
    std::ofstream(f, std::ios::trunc) << t;
    Diagnostics d;
    auto p = parse_native_problem_file(f.string(), d);  // the real softmax op: x[R, C]
    EXPECT_FALSE(p.has_value() && d.empty());
    EXPECT_NE(d.str().find("more than 2^36 elements"), std::string::npos) << dims << "\n" << d.str();
    EXPECT_NE(d.str().find(f.string() + ":6:"), std::string::npos) << d.str();
  }
  fs::remove_all(dir);
}

// A host_bench whose tensors would not fit in a host worker's address space here is refused
// at its line with the numbers (f16 at 1024x1024: 2 MiB in, 2 x 2 MiB out, 8 MiB of float64
// truth = 14 MiB).
TEST(ConfigLoader, HostBenchPastTheHostWorkersMemoryIsRefused) {
  const std::string f = fixture("good/native/softmax.yaml");
  ::setenv("KGATE_SANDBOX_MEMORY_MB", "13", 1);
  Diagnostics d;
  auto p = parse_native_problem_file(f, d);
  EXPECT_FALSE(p.has_value() && d.empty());
  EXPECT_NE(d.str().find(f + ":6:"), std::string::npos) << d.str();  // host_bench's line
  EXPECT_NE(d.str().find("'host_bench' needs 14.0 MiB at {C: 1024, R: 1024} (inputs, two outputs and their "
                         "float64 truth), more than the 13.0 MiB a host worker may map here"),
            std::string::npos)
      << d.str();
  ::setenv("KGATE_SANDBOX_MEMORY_MB", "15", 1);  // fits
  Diagnostics ok;
  parse_native_problem_file(f, ok);
  EXPECT_EQ(ok.str().find("host_bench"), std::string::npos) << ok.str();
  ::unsetenv("KGATE_SANDBOX_MEMORY_MB");
}

// Sizes under the element cap that no host here could hold are refused against the
// machine's available memory (MemAvailable) when the worker's cap is off, and a sweep
// shape is bounded like host_bench (its inputs, output and float64 truth).
TEST(ConfigLoader, ShapesPastThisMachinesAvailableMemoryAreRefused) {
  ASSERT_GT(core::host_memory_available(), 0u) << "no MemAvailable in /proc/meminfo";
  const fs::path dir = fs::path(::testing::TempDir()) / ("kgate_mem_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(fixture("good"), dir, fs::copy_options::recursive);
  const fs::path f = dir / "native" / "softmax.yaml";
  const std::string text = file_text(f);
  ::setenv("KGATE_SANDBOX_MEMORY_MB", "0", 1);  // no address-space cap: MemAvailable bounds
  struct Case {
    std::string from, to, what;
  };
  for (const Case& c : {Case{"host_bench: {R: 1024, C: 1024}", "host_bench: {R: 1000000, C: 60000}", "'host_bench' needs"},
                        Case{"sweep: [{R: 128, C: 1023}", "sweep: [{R: 1000000, C: 60000}", "'sweep' needs"}}) {
    std::string t = text;
    t.replace(t.find(c.from), c.from.size(), c.to);
    std::ofstream(f, std::ios::trunc) << t;
    Diagnostics d;
    auto p = parse_native_problem_file(f.string(), d);  // 6e10 elements: under the 2^36 cap
    EXPECT_FALSE(p.has_value() && d.empty());
    EXPECT_NE(d.str().find(c.what), std::string::npos) << d.str();
    EXPECT_NE(d.str().find("this machine has available (MemAvailable in /proc/meminfo)"), std::string::npos)
        << d.str();
    EXPECT_NE(d.str().find(f.string() + ":" + (c.what[1] == 'h' ? "6:" : "7:")), std::string::npos) << d.str();
  }
  ::unsetenv("KGATE_SANDBOX_MEMORY_MB");
  fs::remove_all(dir);
}

TEST(ConfigLoader, MemAvailableIsReadFromMeminfo) {
  const fs::path f = fs::path(::testing::TempDir()) / ("kgate_meminfo_" + std::to_string(getpid()));
  std::ofstream(f) << "MemTotal:       24683712 kB\nMemFree:        21765632 kB\nMemAvailable:   23417284 kB\n";
  EXPECT_EQ(core::host_memory_available(f.string()), std::uint64_t{23417284} << 10);
  std::ofstream(f, std::ios::trunc) << "MemTotal:       24683712 kB\n";
  EXPECT_EQ(core::host_memory_available(f.string()), 0u);  // unknown: no bound from it
  EXPECT_EQ(core::host_memory_available(f.string() + ".none"), 0u);
  EXPECT_EQ(core::host_memory_total(f.string()), std::uint64_t{24683712} << 10);
  // The OOM killer's count, as /proc/vmstat gives it; -1 when the file does not say.
  std::ofstream(f, std::ios::trunc) << "oom_kill_extra 9\noom_stall 3\noom_kill 17\n";
  EXPECT_EQ(core::oom_kill_count(f.string()), 17);
  std::ofstream(f, std::ios::trunc) << "pgfault 12\n";
  EXPECT_EQ(core::oom_kill_count(f.string()), -1);
  EXPECT_EQ(core::oom_kill_count(f.string() + ".none"), -1);
  EXPECT_GE(core::oom_kill_count(), 0) << "no oom_kill in /proc/vmstat (Linux 4.13 and later have it)";
  fs::remove(f);
}

// A container's memory limit, as its cgroup says it: v2's memory.max, v1's
// memory.limit_in_bytes (a number near 2^63 is v1's "unlimited").
TEST(ConfigLoader, TheMemoryCgroupLimitIsReadForV2AndV1) {
  const fs::path root = fs::path(::testing::TempDir()) / ("kgate_cgroup_" + std::to_string(getpid()));
  const fs::path self = root / "self_cgroup";
  fs::create_directories(root / "kubepods" / "pod1");
  fs::create_directories(root / "memory" / "docker" / "abc");
  std::ofstream(self) << "0::/kubepods/pod1\n";
  std::ofstream(root / "kubepods" / "pod1" / "memory.max") << "34359738368\n";
  EXPECT_EQ(core::memory_cgroup_limit(self.string(), root.string()), std::uint64_t{34359738368});
  std::ofstream(root / "kubepods" / "pod1" / "memory.max", std::ios::trunc) << "max\n";
  EXPECT_EQ(core::memory_cgroup_limit(self.string(), root.string()), 0u);
  std::ofstream(self, std::ios::trunc) << "12:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n";
  std::ofstream(root / "memory" / "docker" / "abc" / "memory.limit_in_bytes") << "8589934592\n";
  EXPECT_EQ(core::memory_cgroup_limit(self.string(), root.string()), std::uint64_t{8589934592});
  std::ofstream(root / "memory" / "docker" / "abc" / "memory.limit_in_bytes", std::ios::trunc)
      << "9223372036854771712\n";
  EXPECT_EQ(core::memory_cgroup_limit(self.string(), root.string()), 0u);
  EXPECT_EQ(core::memory_cgroup_limit((root / "none").string(), root.string()), 0u);
  fs::remove_all(root);
}

TEST(ConfigLoader, GoodNativeProblemEveryKey) {
  Diagnostics d;
  auto p = parse_native_problem_file(fixture("good/native/softmax.yaml"), d, fake_ops());
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_EQ(p->id, "softmax");
  EXPECT_EQ(p->title, "Row-wise softmax");
  EXPECT_EQ(p->op, "softmax");
  EXPECT_EQ(p->bench, (ops::Dims{{"R", 4096}, {"C", 4096}}));
  EXPECT_EQ(p->host_bench, (ops::Dims{{"R", 1024}, {"C", 1024}}));
  ASSERT_EQ(p->sweep.size(), 2u);
  EXPECT_EQ(p->sweep[1], (ops::Dims{{"R", 33}, {"C", 4097}}));
  EXPECT_EQ(p->dtypes, (std::vector<DType>{DType::kF32, DType::kF16, DType::kBF16}));
  EXPECT_EQ(p->bench_dtype, DType::kF16);
  ASSERT_EQ(p->tolerance.size(), 1u);
  EXPECT_DOUBLE_EQ(p->tolerance.at(DType::kF16).atol, 1e-3);
  EXPECT_DOUBLE_EQ(p->tolerance.at(DType::kF16).rtol, 2e-3);
  EXPECT_EQ(p->starters.at("host"), fixture("good/native/starters/softmax.cpp"));
  EXPECT_EQ(p->starters.at("cuda"), fixture("good/native/starters/softmax.cu"));
  EXPECT_EQ(p->baselines.at("cuda"), fixture("good/native/starters/softmax_base.cu"));
  EXPECT_EQ(p->reference_source, fixture("good/native/my_ref.cpp"));
  for (const auto& [backend, path] : p->starters) EXPECT_TRUE(fs::path(path).is_absolute());
}

TEST(ConfigLoader, ToleranceOverrideKeepsTheOpDefaultForTheOtherBound) {
  std::string dir = ::testing::TempDir() + "kgate_tol_" + std::to_string(getpid());
  fs::create_directories(dir);
  std::ofstream(dir + "/k.cpp") << "// k\n";
  std::ofstream(dir + "/p.yaml") << "version: 1\nid: p\ntitle: t\nop: softmax\n"
                                    "bench: {R: 2, C: 2}\nsweep: [{R: 1, C: 1}]\n"
                                    "dtypes: [f32]\nbench_dtype: float32\n"
                                    "tolerance: {fp32: {atol: 0.125}}\nstarters: {host: k.cpp}\n";
  Diagnostics d;
  auto p = parse_native_problem_file(dir + "/p.yaml", d, fake_ops());
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_DOUBLE_EQ(p->tolerance.at(DType::kF32).atol, 0.125);
  EXPECT_DOUBLE_EQ(p->tolerance.at(DType::kF32).rtol, 0.25);  // FakeOp's default
  EXPECT_EQ(p->bench_dtype, DType::kF32);
  fs::remove_all(dir);
}

// ---- bad files: every error, with its exact position and message -------------------

TEST(ConfigLoader, BadGpuReportsEveryError) {
  std::string f = fixture("bad/configs/gpus/typos.yaml");
  Diagnostics d;
  auto g = parse_gpu_file(f, d);
  ASSERT_TRUE(g.has_value());  // best effort: what could be read is still there
  EXPECT_EQ(g->id, "typo-gpu");
  d.sort();
  std::vector<std::string> want = {
      f + ":1:1: error: missing required key 'name'",
      f + ":1:1: error: missing required key 'peak_bandwidth_gbps'",
      f + ":4:15: error: 'match.name' is not a valid regular expression: Mismatched '(' and ')' "
          "in regular expression",
      f + ":4:28: error: 'match.cc' must look like '9.0', got '9'",
      f + ":5:11: error: 'sm_count' must be an integer, got 'lots'",
      f + ":6:11: error: 'l2_bytes' must be >= 1, got -5",
      f + ":8:1: error: unknown key 'peak_bandwith_gbps' (did you mean 'peak_bandwidth_gbps'?)",
      f + ":9:25: error: unknown format 'f8' in 'peak_tflops' (did you mean 'fp8'?)",
      f + ":9:38: error: 'peak_tflops.tf32' must be > 0, got -1",
  };
  EXPECT_EQ(lines_for(d, f), want);
}

// A device-name pattern the standard library's regex compiler would overflow on (a
// backreference number or a repeat count read into an int unchecked: undefined behaviour,
// found by fuzz_config), or one past the length bound, is an error at its line.
TEST(ConfigLoader, DeviceNamePatternsAreBoundedBeforeTheRegexCompilerSeesThem) {
  const fs::path f = fs::path(::testing::TempDir()) / ("kgate_pattern_" + std::to_string(getpid()) + ".yaml");
  auto errors_for = [&](const std::string& pattern) {
    std::ofstream(f) << "version: 1\nid: g\nname: G\nbackend: cuda\nmatch: {name: '" << pattern
                     << "'}\nsm_count: 1\nl2_bytes: 1\nmemory_bytes: 1\npeak_bandwidth_gbps: 1\npeak_tflops: {f32: 1}\n";
    Diagnostics d;
    parse_gpu_file(f.string(), d);
    return lines_for(d, f.string());
  };
  EXPECT_EQ(errors_for("H1\\99999999999999999999"),
            std::vector<std::string>{f.string() + ":5:15: error: 'match.name' has a backreference number of 20 "
                                                  "digits at offset 3 (at most 4)"});
  EXPECT_EQ(errors_for("a{2,1234567}"),
            std::vector<std::string>{f.string() + ":5:15: error: 'match.name' has a repeat count of 7 digits at "
                                                  "offset 4 (at most 4)"});
  EXPECT_EQ(errors_for(std::string(300, 'a')),
            std::vector<std::string>{f.string() + ":5:15: error: 'match.name' is 300 characters long; a "
                                                  "device-name pattern has at most 256"});
  // What real targets write: escapes, digits in names, small counts.
  EXPECT_TRUE(errors_for("H100.*(SXM|HBM3)").empty());
  EXPECT_TRUE(errors_for("RTX 4090|\\bL40S\\b|A100\\d{0,2}").empty());
  EXPECT_TRUE(errors_for("\\\\12345678").empty());  // an escaped backslash, then digits
  fs::remove(f);
}

TEST(ConfigLoader, SyntaxErrorIsADiagnosticNotAnException) {
  std::string f = fixture("bad/configs/gpus/syntax.yaml");
  Diagnostics d;
  std::optional<GpuTarget> g;
  EXPECT_NO_THROW(g = parse_gpu_file(f, d));
  EXPECT_FALSE(g.has_value());
  EXPECT_EQ(lines_for(d, f),
            std::vector<std::string>{f + ":4:8: error: invalid YAML: end of sequence flow not found"});
}

TEST(ConfigLoader, BadNativeProblemReportsEveryError) {
  std::string f = fixture("bad/native/softmax.yaml");
  std::string dir = fixture("bad/native");
  Diagnostics d;
  auto p = parse_native_problem_file(f, d, fake_ops());
  ASSERT_TRUE(p.has_value());
  d.sort();
  std::vector<std::string> want = {
      f + ":5:21: error: 'bench.C' must be >= 1, got -1",
      f + ":5:25: error: unknown dimension 'X' in 'bench' (softmax takes R, C)",
      f + ":6:9: error: 'sweep[0]' is missing dimension 'C' (softmax takes R, C)",
      f + ":7:15: error: unknown dtype 'f8' in 'dtypes' (dtypes: f16, bf16, f32, f64, i32, i64) "
          "(did you mean 'f16'?)",
      f + ":7:19: error: duplicate dtype 'f16' in 'dtypes'",
      f + ":8:14: error: bench_dtype 'f64' is not one of dtypes [f16]",
      f + ":9:13: error: tolerance for 'bf16', which is not one of dtypes [f16]",
      f + ":9:26: error: 'tolerance.bf16.atol' must be >= 0, got -1",
      f + ":9:36: error: 'tolerance.f16' needs 'atol' and/or 'rtol'",
      f + ":10:18: error: 'starters.host': file '" + dir + "/starters/missing.cpp' does not exist",
      f + ":10:46: error: 'starters.cuda': a cuda source must end in .cu",
      f + ":10:67: error: unknown backend 'rocm' in 'starters' (backends: cuda, host)",
      f + ":12:12: error: reference file '" + dir + "/nope.cpp' does not exist",
  };
  EXPECT_EQ(lines_for(d, f), want);
  // The good parts survive: the second sweep shape is complete and valid.
  ASSERT_EQ(p->sweep.size(), 1u);
  EXPECT_EQ(p->sweep[0], (ops::Dims{{"R", 1}, {"C", 2}}));
}

TEST(ConfigLoader, UnknownOpSuggestsTheBuiltInName) {
  std::string f = fixture("bad/native/unknown_op.yaml");
  Diagnostics d;
  parse_native_problem_file(f, d, fake_ops());
  EXPECT_EQ(lines_for(d, f),
            std::vector<std::string>{f + ":4:5: error: unknown op 'softmx' (built-in ops: pairs, "
                                         "rmsnorm, softmax) (did you mean 'softmax'?)"});
}

TEST(ConfigLoader, DimsTheOpRejects) {
  std::string f = fixture("fake_op/odd.yaml");
  Diagnostics d;
  auto p = parse_native_problem_file(f, d, fake_ops());
  ASSERT_TRUE(p.has_value());
  d.sort();
  EXPECT_EQ(lines_for(d, f),
            (std::vector<std::string>{
                f + ":5:8: error: 'bench' {N: 3} is not valid for pairs: N must be even",
                f + ":6:17: error: 'sweep[1]' {N: 5} is not valid for pairs: N must be even"}));
  ASSERT_EQ(p->sweep.size(), 1u);
  EXPECT_EQ(p->sweep[0].at("N"), 4);
}

TEST(ConfigLoader, EmptyAndNonMappingFiles) {
  Diagnostics d;
  std::string empty = fixture("bad/native/empty.yaml"), listy = fixture("bad/native/not_map.yaml");
  EXPECT_FALSE(parse_native_problem_file(empty, d, fake_ops()).has_value());
  parse_native_problem_file(listy, d, fake_ops());
  EXPECT_EQ(lines_for(d, empty),
            std::vector<std::string>{
                empty + ":1:1: error: file is empty: expected a mapping starting with 'version: 1'"});
  EXPECT_EQ(lines_for(d, listy),
            std::vector<std::string>{listy + ":1:1: error: this file must be a mapping, got a sequence"});
}

TEST(ConfigLoader, MissingFileIsADiagnostic) {
  Diagnostics d;
  EXPECT_FALSE(parse_suite_file("/nonexistent/suites/x.yaml", d).has_value());
  ASSERT_EQ(d.error_count(), 1);
  EXPECT_EQ(d.items()[0].str(), "/nonexistent/suites/x.yaml: error: cannot read file: No such file or directory");
}

// Was: a directory read as an empty document ("file is empty: expected a mapping ...").
TEST(ConfigLoader, ADirectoryIsUnreadableNotEmpty) {
  const std::string dir = ::testing::TempDir() + "kgate_loader_dir_" + std::to_string(::getpid()) + ".yaml";
  std::filesystem::create_directories(dir);
  Diagnostics d;
  EXPECT_FALSE(parse_suite_file(dir, d).has_value());
  ASSERT_EQ(d.error_count(), 1);
  EXPECT_EQ(d.items()[0].str(), dir + ": error: cannot read file: Is a directory");
  std::filesystem::remove_all(dir);
}

TEST(ConfigLoader, StrictLoaderThrowsUsageErrorWithEveryError) {
  try {
    load_gpu_target(fixture("bad/configs/gpus/typos.yaml"));
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("typos.yaml:1:1: error: missing required key 'name'"), std::string::npos);
    EXPECT_NE(msg.find("typos.yaml:9:38: error:"), std::string::npos) << msg;
    EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 8);  // nine lines
  }
}

TEST(ConfigLoader, SuiteRulesOnAgentsAndFailOn) {
  std::string dir = ::testing::TempDir() + "kgate_suite_" + std::to_string(getpid()) + "/suites";
  fs::create_directories(dir);
  std::string f = dir + "/s.yaml";
  std::ofstream(f) << "version: 1\nid: s\nlevels: [x]\ngpus: [g]\n"
                      "agent: {kind: tuner, url: http://x, api_key_env: 'not a var'}\n"
                      "fail_on: {correctness: no, performance: maybe}\n";
  Diagnostics d;
  parse_suite_file(f, d);
  d.sort();
  EXPECT_EQ(lines_for(d, f),
            (std::vector<std::string>{
                f + ":5:27: error: 'agent.url' is only used with 'agent.kind: http'",
                f + ":5:50: error: 'agent.api_key_env' names an environment variable (e.g. "
                    "OPENAI_API_KEY), got 'not a var'",
                f + ":5:50: error: 'agent.api_key_env' is only used with 'agent.kind: http'",
                f + ":6:24: error: 'fail_on.correctness' cannot be false: a correctness failure "
                    "always fails the pipeline",
                f + ":6:41: error: 'fail_on.performance' must be true or false, got 'maybe'"}));
  fs::remove_all(fs::path(dir).parent_path());
}

TEST(ConfigLoader, TorchReferencesNameModes) {
  std::string dir = ::testing::TempDir() + "kgate_suite_torch_" + std::to_string(getpid()) + "/suites";
  fs::create_directories(dir);
  std::string f = dir + "/s.yaml";
  std::ofstream(f) << "version: 1\nid: s\nlevels: [x]\ngpus: [g]\ntorch_references: [eager, compile, eager]\n";
  Diagnostics d;
  std::optional<Suite> s = parse_suite_file(f, d);
  EXPECT_TRUE(lines_for(d, f).empty()) << lines_for(d, f).front();
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(s->torch_references.has_value());
  EXPECT_EQ(*s->torch_references, (std::vector<std::string>{"eager", "compile"}));
  // Given empty (KernelBench problems: no reference columns) is not the same as absent
  // (KernelBench problems: every default column).
  for (const auto& [line, given] : std::vector<std::pair<std::string, bool>>{{"torch_references: []\n", true}, {"", false}}) {
    std::ofstream(f, std::ios::trunc) << "version: 1\nid: s\nlevels: [x]\ngpus: [g]\n" << line;
    Diagnostics de;
    std::optional<Suite> se = parse_suite_file(f, de);
    ASSERT_TRUE(se.has_value()) << line;
    EXPECT_TRUE(se->torch_references.value_or(std::vector<std::string>{}).empty());
    EXPECT_EQ(se->torch_references.has_value(), given) << line;
  }
  std::ofstream(f, std::ios::trunc) << "version: 1\nid: s\nlevels: [x]\ngpus: [g]\n"
                                       "torch_references: [eager, compile-max-autotun]\n";
  Diagnostics d2;
  parse_suite_file(f, d2);
  auto lines = lines_for(d2, f);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(":5:19: error: 'torch_references' lists 'compile-max-autotun': each must be eager, "
                          "compile or compile-max-autotune (did you mean 'compile-max-autotune'?)"),
            std::string::npos)
      << lines[0];
  fs::remove_all(fs::path(dir).parent_path());
}

TEST(ConfigLoader, TemplateAgentKind) {
  std::string dir = ::testing::TempDir() + "kgate_suite_tpl_" + std::to_string(getpid()) + "/suites";
  fs::create_directories(dir);
  std::string f = dir + "/s.yaml";
  std::ofstream(f) << "version: 1\nid: s\nlevels: [x]\ngpus: [g]\nagent: {kind: template, seed: 3}\n";
  Diagnostics d;
  std::optional<Suite> s = parse_suite_file(f, d);
  EXPECT_TRUE(lines_for(d, f).empty()) << lines_for(d, f).front();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->agent.kind, "template");
  EXPECT_EQ(s->agent.seed, 3u);
  std::ofstream(f, std::ios::trunc) << "version: 1\nid: s\nlevels: [x]\ngpus: [g]\nagent: {kind: templates}\n";
  Diagnostics d2;
  parse_suite_file(f, d2);
  auto lines = lines_for(d2, f);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(":5:15: error: 'agent.kind' must be one of tuner, template, command, http, reference, "
                          "got 'templates' (did you mean 'template'?)"),
            std::string::npos)
      << lines[0];
  fs::remove_all(fs::path(dir).parent_path());
}

// Whatever the bytes, the loaders report and return; they never throw.
// A level file written into a scratch directory (levels resolve paths near themselves).
std::string write_level(const std::string& name, const std::string& text) {
  std::string dir = ::testing::TempDir() + "kgate_levels_" + std::to_string(getpid());
  fs::create_directories(dir + "/root");
  fs::create_directories(dir + "/sol");
  std::string f = dir + "/" + name + ".yaml";
  std::ofstream(f, std::ios::binary) << text;
  return f;
}

TEST(ConfigLoader, KernelBenchStarterModes) {
  const std::string head = "version: 1\nid: x\nkind: kernelbench\nroot: root\n";
  Diagnostics d;
  auto def = parse_level_file(write_level("def", head), d);
  ASSERT_TRUE(def.has_value()) << d.str();
  EXPECT_EQ(def->starter, "auto");  // a solution where there is one, else torch.compile's model
  auto strict = parse_level_file(write_level("strict", head + "solutions: sol\nstarter: solutions\n"), d);
  ASSERT_TRUE(strict.has_value());
  EXPECT_EQ(strict->starter, "solutions");
  auto compiled = parse_level_file(write_level("comp", head + "starter: compiled\n"), d);
  EXPECT_EQ(compiled->starter, "compiled");
  auto ref = parse_level_file(write_level("ref", head + "starter: reference\n"), d);
  EXPECT_EQ(ref->starter, "reference");  // the reference as a ModelNew: LLM agents start anywhere
  EXPECT_TRUE(d.empty()) << d.str();

  Diagnostics bad;
  parse_level_file(write_level("bad1", head + "starter: solutions\n"), bad);
  parse_level_file(write_level("bad2", head + "starter: compild\n"), bad);
  parse_level_file(write_level("bad3", "version: 1\nid: n\nkind: native\nroot: root\nstarter: compiled\n"), bad);
  std::string all = bad.str();
  EXPECT_NE(all.find("bad1.yaml:5:10: error: 'starter: solutions' needs a 'solutions' directory"), std::string::npos)
      << all;
  EXPECT_NE(all.find("bad2.yaml:5:10: error: 'starter' must be one of auto, compiled, solutions, reference, got 'compild'"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("bad3.yaml:5:10: error: 'starter' is only used by kernelbench levels"), std::string::npos) << all;
}

TEST(ConfigLoader, LevelRootFromTheEnvironment) {
  const std::string text = "version: 1\nid: x\nkind: kernelbench\nroot: ${KGATE_TEST_KB}/root\n";
  ::unsetenv("KGATE_TEST_KB");
  Diagnostics d;
  auto unset = parse_level_file(write_level("env", text), d);
  ASSERT_TRUE(unset.has_value());
  EXPECT_TRUE(d.empty()) << d.str();  // unavailable here, not invalid
  EXPECT_EQ(unset->root, "");
  EXPECT_NE(unset->unavailable.find("uses ${KGATE_TEST_KB}, which is not set"), std::string::npos) << unset->unavailable;

  std::string dir = fs::path(write_level("env", text)).parent_path().string();
  ::setenv("KGATE_TEST_KB", dir.c_str(), 1);
  auto set = parse_level_file(write_level("env", text), d);
  ::unsetenv("KGATE_TEST_KB");
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_EQ(set->unavailable, "");
  EXPECT_EQ(set->root, (fs::path(dir) / "root").lexically_normal().string());

  Diagnostics bad;
  parse_level_file(write_level("env2", "version: 1\nid: x\nkind: kernelbench\nroot: ${KGATE_TEST_KB/root\n"), bad);
  EXPECT_NE(bad.str().find("unterminated '${'"), std::string::npos) << bad.str();
}

TEST(ConfigLoader, MalformedInputNeverThrows) {
  const char* inputs[] = {
      "",
      "\t\t: :",
      "version: [1\n",
      "{{{{",
      "- - - -",
      "version: 1\nid: [a, b]\n",
      "version: 1\n? [complex, key]\n: value\n",
      "version: 1\nversion: 1\n",
      "version: &a 1\nid: *a\n",
      "version: *undefined\n",
      "version: 1\nbench: {R: 1e99999, C: 0x10}\nsweep: {a: b}\ndtypes: f16\n",
      "version: 1\nbudget: [1, 2]\nagent: 5\ngates: {seeds: {x: 1}}\n",
      "\xff\xfe\x00garbage",
      "%YAML 1.2\n---\nversion: 1\n...\n---\nsecond: doc\n",
      "key: 'unterminated\n",
      "version: 1\nmatch: {name: '[', cc: 9.0.0}\npeak_tflops: [1]\n",
      "version: 1\nstarters: {host: [a]}\ntolerance: {f16: 3}\nsweep: [1, [2], {R: -1}]\n",
  };
  std::string dir = ::testing::TempDir() + "kgate_fuzz_" + std::to_string(getpid());
  fs::create_directories(dir);
  int i = 0;
  for (const char* text : inputs) {
    std::string f = dir + "/f" + std::to_string(i++) + ".yaml";
    std::ofstream(f, std::ios::binary) << text;
    Diagnostics d;
    EXPECT_NO_THROW(parse_gpu_file(f, d)) << text;
    EXPECT_NO_THROW(parse_level_file(f, d)) << text;
    EXPECT_NO_THROW(parse_suite_file(f, d)) << text;
    EXPECT_NO_THROW(parse_native_problem_file(f, d, fake_ops())) << text;
    EXPECT_TRUE(d.has_errors()) << text;
    for (const auto& x : d.items()) EXPECT_EQ(x.loc.file, f);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kgate::config

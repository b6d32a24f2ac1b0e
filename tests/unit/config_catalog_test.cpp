#include "config/catalog.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config_fake_ops.h"
#include "config_fixture_copy.h"
#include "core/error.h"

namespace kgate::config {
namespace {

using testing::fake_ops;
using testing::fixture;
using testing::lines_for;

Catalog good_catalog() {
  Diagnostics d;
  Catalog cat = load_catalog({fixture("good")}, d, fake_ops());
  EXPECT_TRUE(d.empty()) << d.str();
  return cat;
}

std::vector<std::string> names(const std::vector<LevelProblem>& ps) {
  std::vector<std::string> v;
  for (const auto& p : ps) v.push_back(p.id);
  return v;
}

TEST(ConfigCatalog, LoadsEveryKindFromADirectory) {
  Catalog cat = good_catalog();
  EXPECT_EQ(cat.files.size(), 10u);
  ASSERT_EQ(cat.gpus.size(), 3u);
  EXPECT_EQ(cat.gpus[0].id, "any-gpu");  // sorted by id
  EXPECT_EQ(cat.levels.size(), 3u);
  EXPECT_EQ(cat.suites.size(), 2u);
  EXPECT_EQ(cat.problems.size(), 2u);
  ASSERT_NE(cat.gpu("host"), nullptr);
  ASSERT_NE(cat.level("kb"), nullptr);
  ASSERT_NE(cat.suite("full"), nullptr);
  EXPECT_EQ(cat.gpu("nope"), nullptr);
}

TEST(ConfigCatalog, LevelSelection) {
  Catalog cat = good_catalog();
  EXPECT_EQ(names(selected_problems(cat, *cat.level("nat"))),
            (std::vector<std::string>{"nat/rms", "nat/softmax"}));
  // A list keeps its own order.
  EXPECT_EQ(names(selected_problems(cat, *cat.level("nat-pick"))),
            (std::vector<std::string>{"nat-pick/rms", "nat-pick/softmax"}));
  // KernelBench levels list the .py files below the root; `_`-files are not problems.
  EXPECT_EQ(names(available_problems(cat, *cat.level("kb"))),
            (std::vector<std::string>{"kb/level1/19_ReLU", "kb/level1/1_Square_matmul",
                                      "kb/level2/1_Conv_ReLU"}));
  auto kb = selected_problems(cat, *cat.level("kb"));
  EXPECT_EQ(names(kb), (std::vector<std::string>{"kb/level1/19_ReLU", "kb/level1/1_Square_matmul"}));
  EXPECT_EQ(kb[0].source, fixture("good/kernelbench/level1/19_ReLU.py"));
  EXPECT_EQ(kb[0].native, nullptr);
}

TEST(ConfigCatalog, LoadingOneSuiteBringsItsConfigsAndProblems) {
  Diagnostics d;
  Catalog cat = load_catalog({fixture("good/suites/minimal.yaml")}, d, fake_ops());
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_EQ(cat.suites.size(), 1u);
  EXPECT_EQ(cat.gpus.size(), 3u);
  EXPECT_EQ(cat.levels.size(), 3u);
  EXPECT_EQ(cat.problems.size(), 2u);
}

TEST(ConfigCatalog, PlanOrderBackendsAndSkips) {
  Catalog cat = good_catalog();
  Plan plan = plan_suite(cat, *cat.suite("full"));
  EXPECT_EQ(plan.suite.id, "full");
  // Per GPU: the levels' selections in suite order, then extra problems not yet taken (the
  // same file reached through two levels runs once).
  std::vector<std::string> want = {"nat-pick/rms", "nat-pick/softmax", "kb/level1/19_ReLU",
                                   "kb/level1/1_Square_matmul"};
  for (const char* gpu : {"big-gpu", "host"}) {
    auto items = plan.for_gpu(gpu);
    std::vector<std::string> got;
    for (const auto* it : items) got.push_back(it->problem);
    EXPECT_EQ(got, want) << gpu;
  }
  ASSERT_EQ(plan.items.size(), 8u);
  const PlanItem& rms_cuda = plan.items[0];
  EXPECT_EQ(rms_cuda.gpu.id, "big-gpu");
  EXPECT_EQ(rms_cuda.backend, "cuda");
  EXPECT_EQ(rms_cuda.kind, "native");
  ASSERT_TRUE(rms_cuda.native.has_value());
  EXPECT_EQ(rms_cuda.native->op, "rmsnorm");
  EXPECT_EQ(rms_cuda.skip_reason, "no cuda starter");
  const PlanItem& softmax_cuda = plan.items[1];
  EXPECT_EQ(softmax_cuda.skip_reason, "");
  EXPECT_EQ(softmax_cuda.starter, fixture("good/native/starters/softmax.cu"));
  // A KernelBench level without solutions starts from torch.compile's model: nothing skipped.
  EXPECT_EQ(plan.items[2].kind, "kernelbench");
  EXPECT_EQ(plan.items[2].skip_reason, "");
  ASSERT_TRUE(plan.items[2].native.has_value());
  EXPECT_EQ(plan.items[2].native->kernelbench_mode, "compiled");
  EXPECT_EQ(plan.items[2].starter, plan.items[2].native->path);
  const PlanItem& rms_host = plan.items[4];
  EXPECT_EQ(rms_host.backend, "host");
  EXPECT_EQ(rms_host.starter, fixture("good/native/starters/rms.cpp"));
  EXPECT_EQ(rms_host.skip_reason, "");
}

// agent: reference (the A/A mode): every KernelBench problem starts from its reference as
// its own ModelNew; native problems have no Python reference to run against itself.
TEST(ConfigCatalog, ReferenceAgentPlansEveryKernelBenchProblemAsItsOwnCandidate) {
  Catalog cat = good_catalog();
  Suite s = *cat.suite("full");
  s.agent.kind = "reference";
  Plan plan = plan_suite(cat, s);
  int kb = 0;
  for (const auto& it : plan.items) {
    ASSERT_TRUE(it.native.has_value());
    if (it.kind == "kernelbench") {
      ++kb;
      EXPECT_EQ(it.native->kernelbench_mode, "reference") << it.problem;
      EXPECT_EQ(it.starter, it.native->path);
      EXPECT_EQ(it.skip_reason, "");
    } else {
      EXPECT_NE(it.skip_reason.find("agent: reference runs KernelBench problems"), std::string::npos) << it.skip_reason;
    }
  }
  EXPECT_EQ(kb, 4);
}

TEST(ConfigCatalog, ExtraProblemsFollowTheLevels) {
  Catalog cat = good_catalog();
  Suite s = *cat.suite("minimal");
  s.levels.clear();
  s.problems = {"nat/softmax", "kb/level2/1_Conv_ReLU", "nat/softmax"};
  Plan plan = plan_suite(cat, s);
  ASSERT_EQ(plan.items.size(), 2u);
  EXPECT_EQ(plan.items[0].problem, "nat/softmax");
  EXPECT_EQ(plan.items[1].problem, "kb/level2/1_Conv_ReLU");
}

TEST(ConfigCatalog, PlanThrowsOnDanglingNames) {
  Catalog cat = good_catalog();
  Suite s = *cat.suite("minimal");
  s.levels = {"nat", "ghost"};
  s.gpus = {"host", "phantom"};
  try {
    plan_suite(cat, s);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("level 'ghost'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GPU target 'phantom'"), std::string::npos) << msg;
  }
}

TEST(ConfigCatalog, MatchGpu) {
  Catalog cat = good_catalog();
  // A target that pins the compute capability beats a looser one.
  EXPECT_EQ(match_gpu(cat, "Test GPU 9000", "9.0")->id, "big-gpu");
  EXPECT_EQ(match_gpu(cat, "test gpu 9000", "9.0")->id, "big-gpu");  // case-insensitive
  EXPECT_EQ(match_gpu(cat, "Test GPU 9000", "8.0")->id, "any-gpu");
  EXPECT_EQ(match_gpu(cat, "Test GPU 10", "9.0")->id, "any-gpu");
  EXPECT_EQ(match_gpu(cat, "NVIDIA H100", "9.0"), nullptr);
  // An empty cc is a CPU: only host targets.
  EXPECT_EQ(match_gpu(cat, "AMD EPYC 9654", "")->id, "host");
  EXPECT_EQ(match_gpu(cat, "Test GPU 9000", "")->id, "host");
}

TEST(ConfigCatalog, FindProblem) {
  Catalog cat = good_catalog();
  ASSERT_NE(find_problem(cat, "nat/softmax"), nullptr);
  EXPECT_EQ(find_problem(cat, "nat/softmax")->op, "softmax");
  EXPECT_EQ(find_problem(cat, "nat-pick/rms")->op, "rmsnorm");
  EXPECT_EQ(find_problem(cat, "softmax")->op, "softmax");  // bare id, one file holds it
  EXPECT_EQ(find_problem(cat, "nat/nope"), nullptr);
  EXPECT_EQ(find_problem(cat, "ghost/softmax"), nullptr);
  EXPECT_EQ(find_problem(cat, "kb/level1/19_ReLU"), nullptr);  // not a native problem
}

TEST(ConfigCatalog, RepoRoot) {
  EXPECT_EQ(repo_root_of(fixture("good/suites/full.yaml")), fixture("good"));
  EXPECT_EQ(repo_root_of("/nonexistent-kgate-dir/suites/x.yaml"), "");
  EXPECT_FALSE(default_repo_root().empty());
}

// ---- cross-file errors ---------------------------------------------------------------

TEST(ConfigCatalog, BadTreeReportsDuplicatesAndDanglingNames) {
  Diagnostics d;
  Catalog cat = load_catalog({fixture("bad")}, d, fake_ops());
  EXPECT_EQ(cat.files.size(), 11u);
  std::string gpus = fixture("bad/configs/gpus/"), levels = fixture("bad/configs/levels/");
  std::string native = fixture("bad/native");
  EXPECT_EQ(lines_for(d, gpus + "host-b.yaml"),
            (std::vector<std::string>{
                gpus + "host-b.yaml:2:5: error: duplicate gpu target id 'host-a' (first defined at " +
                    gpus + "host-a.yaml:2:5)",
                gpus + "host-b.yaml:5:25: error: 'match.cc' is for cuda targets; a host target has no "
                       "compute capability"}));
  EXPECT_EQ(lines_for(d, levels + "dangling.yaml"),
            (std::vector<std::string>{
                levels + "dangling.yaml:6:21: error: level 'dangling' lists problem 'sofmax', which "
                         "is not in '" + native + "' (did you mean 'softmax'?)",
                levels + "dangling.yaml:7:11: error: 'baseline' must be one of reference, starter, "
                         "got 'eager'"}));
  EXPECT_EQ(lines_for(d, levels + "noroot.yaml"),
            (std::vector<std::string>{
                levels + "noroot.yaml:3:7: error: 'kind' must be one of native, kernelbench, got "
                         "'natve' (did you mean 'native'?)",
                levels + "noroot.yaml:4:7: error: level root '" + fixture("bad/nowhere") +
                    "' is not a directory",
                levels + "noroot.yaml:5:9: error: 'select: glob' needs a 'glob' pattern"}));
  std::string dup = native + "/unknown_op.yaml";
  EXPECT_EQ(lines_for(d, dup)[0], dup + ":2:5: error: duplicate native problem id 'softmax' (first "
                                        "defined at " + native + "/softmax.yaml:2:5)");
}

TEST(ConfigCatalog, BadSuiteReportsEveryError) {
  Diagnostics d;
  std::string f = fixture("bad/suites/bad_suite.yaml");
  load_catalog({f}, d, fake_ops());  // brings bad/configs along for the names
  std::vector<std::string> want = {
      f + ":1:10: error: unsupported version 2 (this kgate reads version 1)",
      f + ":2:5: error: id 'bad suite' may only contain letters, digits, '_', '-' and '.'",
      f + ":3:20: error: suite 'bad suite' names level 'missing-level', which is not defined in "
          "configs/levels",
      f + ":4:12: error: problem 'dangling/nope': level 'dangling' has no problem 'nope'",
      f + ":4:27: error: problem 'softmax' must be written '<level>/<problem>', e.g. "
          "'native/softmax'",
      f + ":5:8: error: suite 'bad suite' runs backend 'cuda' but GPU target 'host-a' is a host "
          "target",
      f + ":5:16: error: suite 'bad suite' names GPU target 'hots-a', which is not defined in "
          "configs/gpus (did you mean 'host-a'?)",
      f + ":7:27: error: 'budget.max_experiments' must be >= 0, got -1",
      f + ":7:47: error: 'budget.problem_wall_s' must be > 0, got 0",
      f + ":7:64: error: 'budget.screen_slack' must be >= 0, got -0.5",
      f + ":8:15: error: 'agent.kind: command' needs 'agent.command'",
      f + ":8:24: error: unknown key 'agent.timeout' (did you mean 'timeout_s'?)",
      f + ":9:21: error: 'gates.confidence' must be in (0, 1), got 1.5",
      f + ":9:33: error: 'gates.seeds' must be >= 1, got 0",
      f + ":10:42: error: 'measurement.max_time_s' (1) is smaller than 'measurement.min_time_s' (2)",
      f + ":11:24: error: 'fail_on.correctness' cannot be false: a correctness failure always fails "
          "the pipeline",
  };
  EXPECT_EQ(lines_for(d, f), want);
}

TEST(ConfigCatalog, UnknownPathsAndKinds) {
  Diagnostics d;
  // Both paths live under the fixture directory so the file-sorted order of the
  // diagnostics does not depend on where the checkout is.
  const std::string missing = fixture("fake_op/zz-missing.yaml");
  const std::string why =
      ": error: cannot tell what kind of config this is: put it under a directory named gpus/, levels/, "
      "suites/ or native/, or give it the top-level keys of one kind (a suite's levels:, a GPU target's "
      "match:, a level's root:, a problem's op:)\n";
  load_catalog({missing, fixture("fake_op/no_kind.yaml"), fixture("fake_op/two_kinds.yaml")}, d, fake_ops());
  EXPECT_EQ(d.str(), fixture("fake_op/no_kind.yaml") + why + fixture("fake_op/two_kinds.yaml") + why + missing +
                         ": error: no such file or directory");
}

// A suite kept outside suites/ (a user repository's ci/nightly.yaml) is a suite by its keys,
// its levels and GPU targets read from the configs/ above it.
TEST(ConfigCatalog, ASuiteOutsideSuitesIsToldByItsKeys) {
  namespace fs = std::filesystem;
  const fs::path root = testing::copy_with_edit(fixture("good"), "suite-keys", "suites/minimal.yaml", "", "");
  fs::create_directories(root / "ci");
  const fs::path suite = root / "ci" / "nightly.yaml";
  fs::rename(root / "suites" / "minimal.yaml", suite);
  EXPECT_EQ(file_kind_of(suite.string()), std::nullopt);
  EXPECT_EQ(file_kind_by_keys(suite.string()), FileKind::kSuite);
  Diagnostics d;
  Catalog cat = load_catalog({suite.string()}, d, fake_ops());
  EXPECT_TRUE(d.empty()) << d.str();
  ASSERT_EQ(cat.suites.size(), 1u);
  EXPECT_EQ(cat.suites[0].id, "minimal");
  EXPECT_EQ(file_kind_by_keys(fixture("good/configs/gpus/big-gpu.yaml")), FileKind::kGpu);
  EXPECT_EQ(file_kind_by_keys(fixture("good/configs/levels/nat.yaml")), FileKind::kLevel);
  // `problems` is a suite's key and a level's: a level picking its problems is a level
  EXPECT_EQ(file_kind_by_keys(fixture("good/configs/levels/nat-pick.yaml")), FileKind::kLevel);
  EXPECT_EQ(file_kind_by_keys(fixture("fake_op/odd.yaml")), FileKind::kProblem);
  fs::remove_all(root);
}

// A file outside the known directories that is not valid YAML (or is empty) gets the
// parser's error at its line, as one inside them does -- not "cannot tell what kind".
TEST(ConfigCatalog, AFileOfNoKnownDirectoryThatIsNotYamlGetsTheSyntaxErrorAtItsLine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("kgate_kind_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path bad = dir / "t.yaml", empty = dir / "e.yaml";
  std::ofstream(bad) << "version: 1\nid: x\nlevels: [level1\ngpus: [h200]\n";
  std::ofstream(empty) << "";
  Diagnostics d;
  load_catalog({bad.string(), empty.string()}, d, fake_ops());
  EXPECT_EQ(d.error_count(), 2) << d.str();
  EXPECT_NE(d.str().find(bad.string() + ":4:5: error: invalid YAML: end of sequence flow not found"),
            std::string::npos)
      << d.str();
  EXPECT_NE(d.str().find(empty.string() + ":1:1: error: file is empty"), std::string::npos) << d.str();
  EXPECT_EQ(d.str().find("cannot tell what kind"), std::string::npos) << d.str();
  EXPECT_EQ(file_kind_by_keys(bad.string()), std::nullopt);  // no diagnostics asked for: none kept
  fs::remove_all(dir);
}

// A misspelt kind is one error: its problems, 'solutions' and 'starter' are not checked
// against a kind the level does not have (a new user saw six errors for one typo).
TEST(ConfigCatalog, AMisspeltKindIsOneErrorNotACascade) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("kgate_kindtypo_" + std::to_string(::getpid()));
  fs::create_directories(dir / "configs/levels");
  fs::create_directories(dir / "probs");
  fs::create_directories(dir / "sols");
  fs::copy_file(std::string(KGATE_SOURCE_DIR) + "/tests/fixtures/kernelbench/relu.py", dir / "probs/relu.py");
  const fs::path level = dir / "configs/levels/kb.yaml";
  std::ofstream(level) << "version: 1\nid: kb\nkind: kernelbanch\nroot: ../../probs\nselect: list\n"
                          "problems: [relu]\nbaseline: eager\nsolutions: ../../sols\nstarter: solutions\n";
  Diagnostics d;
  load_catalog({level.string()}, d, fake_ops());
  EXPECT_EQ(d.error_count(), 1) << d.str();
  EXPECT_NE(d.str().find(level.string() + ":3:7: error: 'kind' must be one of native, kernelbench, got "
                                          "'kernelbanch' (did you mean 'kernelbench'?)"),
            std::string::npos)
      << d.str();
  fs::remove_all(dir);
}

TEST(ConfigCatalog, APythonFileIsSaidToBeAProblemToLoadNotInvalidYaml) {
  const std::string py = std::string(KGATE_SOURCE_DIR) + "/tests/fixtures/kernelbench/relu.py";
  Diagnostics d;
  load_catalog({py}, d, fake_ops());
  EXPECT_EQ(d.error_count(), 1) << d.str();
  EXPECT_NE(d.str().find(py + ": error: a Python file, not a YAML config"), std::string::npos) << d.str();
  EXPECT_NE(d.str().find("kgate profile " + py), std::string::npos) << d.str();
  EXPECT_EQ(d.str().find("invalid YAML"), std::string::npos) << d.str();
}

TEST(ConfigCatalog, StrictPlanOfASuiteFile) {
  Plan plan = plan_suite_file(fixture("good/suites/minimal.yaml"));
  EXPECT_EQ(plan.suite.id, "minimal");
  EXPECT_EQ(plan.items.size(), 2u);
  EXPECT_THROW(plan_suite_file(fixture("bad/suites/bad_suite.yaml")), UsageError);
}

// A host-backend problem without host_bench is timed at bench: bounded at plan time like a
// host_bench (rms at 4096x4096 f32: 64 MiB in, 2 x 64 MiB out, 128 MiB of truth, a 16 KiB weight).
TEST(ConfigCatalog, AHostPlanBoundsTheBenchShapeOfAProblemWithoutHostBench) {
  const std::filesystem::path d = testing::copy_with_edit(
      fixture("good"), "catalog-bench", "native/rms.yaml", "bench: {R: 64, C: 256}", "bench: {R: 4096, C: 4096}");
  const std::string rms = (d / "native" / "rms.yaml").string();
  const std::string suite = (d / "suites" / "minimal.yaml").string();
  ::setenv("KGATE_SANDBOX_MEMORY_MB", "300", 1);
  try {
    plan_suite_file(suite);
    ADD_FAILURE() << "a bench past the host worker's memory was planned";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(rms + ":5:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'bench' needs 320.0 MiB at {C: 4096, R: 4096}"), std::string::npos) << msg;
    EXPECT_NE(msg.find("this problem has no host_bench"), std::string::npos) << msg;
  }
  ::setenv("KGATE_SANDBOX_MEMORY_MB", "400", 1);
  EXPECT_NO_THROW(plan_suite_file(suite));
  ::unsetenv("KGATE_SANDBOX_MEMORY_MB");
  std::filesystem::remove_all(d);
}

// The CUDA backend times bench on the GPU: a bench shape whose inputs and two outputs exceed
// the target's memory_bytes is a planning error at bench's line (softmax f16 at
// 262144x131072: 64 GiB in, 2 x 64 GiB out, on big-gpu's 80 GiB), not an out-of-memory
// error in a worker; a shape that fits plans.
TEST(ConfigCatalog, ACudaPlanBoundsTheBenchShapeByTheTargetsMemory) {
  const std::filesystem::path d = testing::copy_with_edit(
      fixture("good"), "catalog-gpu-bench", "native/softmax.yaml", "bench: {R: 4096, C: 4096}",
      "bench: {R: 262144, C: 131072}");
  const std::string softmax = (d / "native" / "softmax.yaml").string();
  const std::string suite = (d / "suites" / "full.yaml").string();
  try {
    plan_suite_file(suite);
    ADD_FAILURE() << "a bench past the GPU target's memory was planned";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(softmax + ":5:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'bench' needs 192.0 GiB of GPU memory at {C: 131072, R: 262144} (inputs and two "
                       "outputs), more than the 80.0 GiB of big-gpu (memory_bytes in "),
              std::string::npos)
        << msg;
  }
  std::filesystem::remove_all(d);
  const std::filesystem::path ok = testing::copy_with_edit(
      fixture("good"), "catalog-gpu-bench-ok", "native/softmax.yaml", "bench: {R: 4096, C: 4096}",
      "bench: {R: 65536, C: 131072}");  // 48 GiB
  EXPECT_NO_THROW(plan_suite_file((ok / "suites" / "full.yaml").string()));
  std::filesystem::remove_all(ok);
}

// Input files are regular files: a directory named like a config, a FIFO among the
// configs or a device given as a suite is an error at its path (exit 2 for the CLI),
// never a silent pass, a blocked open or an unbounded read.
TEST(ConfigCatalog, AnInputThatIsNoRegularFileIsAnErrorAtItsPath) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() /
                                  ("kgate-catalog-inputs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d / "demo.yaml");
  std::filesystem::create_directories(d / "suites");
  ASSERT_EQ(::mkfifo((d / "suites" / "fifo.yaml").c_str(), 0644), 0);
  {
    Diagnostics diags;
    load_catalog({(d / "demo.yaml").string()}, diags, fake_ops());
    EXPECT_NE(diags.str().find((d / "demo.yaml").string() + ": error: is a directory, not a YAML file"),
              std::string::npos)
        << diags.str();
  }
  {
    Diagnostics diags;
    load_catalog({(d / "suites").string()}, diags, fake_ops());
    EXPECT_NE(diags.str().find((d / "suites" / "fifo.yaml").string() + ": error: cannot read file: not a regular file (a FIFO)"),
              std::string::npos)
        << diags.str();
  }
  {
    Diagnostics diags;
    std::filesystem::create_directories(d / "empty");
    load_catalog({(d / "empty").string()}, diags, fake_ops());
    EXPECT_FALSE(diags.has_errors());
    EXPECT_EQ(diags.warning_count(), 1) << diags.str();
  }
  EXPECT_THROW(plan_suite_file("/dev/zero"), UsageError);
  try {
    plan_suite_file("/dev/zero");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a regular file (a character device)"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace kgate::config

// The real kgate binary: exit codes of the command line and of `kgate validate`.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "config_fixture_copy.h"

namespace {

std::string kgate_bin() {
  if (const char* b = std::getenv("KGATE_BIN"); b && *b) return b;
  return std::string(KGATE_BINARY_DIR) + "/kgate";
}

struct Result {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

// Runs `kgate ARGS` in `dir` through the shell; args are trusted test strings.
Result kgate(const std::string& args, const std::string& dir = "") {
  std::string cmd = (dir.empty() ? "" : "cd '" + dir + "' && ") + "'" + kgate_bin() + "' " + args +
                    " 2>&1 </dev/null";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string fixture(const std::string& rel) {
  return std::string(KGATE_TEST_DATA) + "/config/" + rel;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Cli, HelpAndVersionSucceed) {
  Result help = kgate("--help");
  EXPECT_EQ(help.rc, 0) << help.out;
  EXPECT_TRUE(contains(help.out, "validate")) << help.out;
  EXPECT_EQ(kgate("validate --help").rc, 0);
  Result v = kgate("--version");
  EXPECT_EQ(v.rc, 0) << v.out;
  EXPECT_TRUE(contains(v.out, "kgate")) << v.out;
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(kgate("").rc, 2);  // a subcommand is required
  EXPECT_EQ(kgate("no-such-subcommand").rc, 2);
  EXPECT_EQ(kgate("validate --no-such-option").rc, 2);
  EXPECT_EQ(kgate("run").rc, 2);  // missing the required suite
  EXPECT_EQ(kgate("bench --problem x.yaml").rc, 2);  // missing --candidate
  EXPECT_EQ(kgate("run x.yaml --backend rocm").rc, 2);
  Result neg = kgate("run x.yaml --max-experiments -3");
  EXPECT_EQ(neg.rc, 2);
  EXPECT_NE(neg.out.find("--max-experiments"), std::string::npos) << neg.out;
}

// An unknown command is named (with a suggestion), not "A subcommand is required"; the
// global -q/-v work after the subcommand too.
TEST(Cli, UnknownCommandIsNamedAndGlobalFlagsGoAnywhere) {
  Result r = kgate("frobnicate x");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("unknown command 'frobnicate'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("commands: run, check"), std::string::npos) << r.out;
  Result typo = kgate("rnu suites/demo.yaml");
  EXPECT_NE(typo.out.find("(did you mean 'run'?)"), std::string::npos) << typo.out;
  EXPECT_EQ(kgate("validate " + fixture("good") + " -q").rc, 0);
  EXPECT_EQ(kgate("-q validate " + fixture("good")).rc, 0);
  Result v = kgate("validate " + fixture("good") + " --plan -v");
  EXPECT_EQ(v.rc, 0) << v.out;
}

// Whether a subcommand is built yet or not, pointing it at files that do not exist is a
// usage error; one that is not built says so.
TEST(Cli, UnbuiltOrMissingInputsExitTwo) {
  const char* calls[] = {
      "run /nonexistent-kgate/suites/none.yaml",
      "bench --problem /nonexistent-kgate/p.yaml --candidate /nonexistent-kgate/k.cpp",
      "merge /nonexistent-kgate/shard0 /nonexistent-kgate/shard1",
  };
  for (const char* c : calls) {
    Result r = kgate(c);
    EXPECT_EQ(r.rc, 2) << c << "\n" << r.out;
    if (contains(r.out, "not available yet")) {
      EXPECT_TRUE(contains(r.out, "kgate ")) << r.out;
    }
  }
}

TEST(Cli, ValidateGoodFixturesPasses) {
  Result r = kgate("validate '" + fixture("good") + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "validated 10 files: 0 errors")) << r.out;
}

TEST(Cli, ValidateBadFixturesExitsTwoWithEveryError) {
  Result r = kgate("validate '" + fixture("bad") + "'");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "validated 11 files: ")) << r.out;
  EXPECT_TRUE(contains(r.out, fixture("bad/suites/bad_suite.yaml") +
                                  ":11:24: error: 'fail_on.correctness' cannot be false"))
      << r.out;
  EXPECT_TRUE(contains(r.out, fixture("bad/configs/gpus/syntax.yaml") + ":4:8: error: invalid YAML"))
      << r.out;
  // Diagnostics are one per line, each "file:line:col: error: ...".
  size_t errors = 0;
  for (size_t at = r.out.find(": error: "); at != std::string::npos; at = r.out.find(": error: ", at + 1))
    ++errors;
  EXPECT_GE(errors, 40u) << r.out;
}

// A planning error (a host suite times a problem without host_bench at bench, past this
// machine's memory) is one of the errors the summary counts, printed before it.
TEST(Cli, ValidateCountsPlanningErrorsInItsSummary) {
  const std::filesystem::path d = kgate::config::testing::copy_with_edit(
      fixture("good"), "cli-plan", "native/rms.yaml", "bench: {R: 64, C: 256}", "bench: {R: 4096, C: 4096}");
  const std::string rms = (d / "native" / "rms.yaml").string();
  ::setenv("KGATE_SANDBOX_MEMORY_MB", "300", 1);
  Result r = kgate("validate '" + d.string() + "'");
  ::unsetenv("KGATE_SANDBOX_MEMORY_MB");
  std::filesystem::remove_all(d);
  EXPECT_EQ(r.rc, 2) << r.out;
  const std::size_t diag = r.out.find(rms + ":5:");
  const std::size_t summary = r.out.find("validated 10 files: ");
  ASSERT_NE(diag, std::string::npos) << r.out;
  ASSERT_NE(summary, std::string::npos) << r.out;
  EXPECT_LT(diag, summary) << r.out;
  EXPECT_FALSE(contains(r.out, "0 errors")) << r.out;
  EXPECT_TRUE(contains(r.out, "this problem has no host_bench")) << r.out;
}

// The KernelBench problem files of a plannable suite are parsed (nothing of them runs): a
// syntax error is an error at its line, and so is a file without Model, get_inputs or
// get_init_inputs at its top level.
TEST(Cli, ValidateParsesTheKernelBenchProblemFiles) {
  const std::filesystem::path d = kgate::config::testing::copy_with_edit(
      fixture("good"), "cli-kbparse", "kernelbench/level1/19_ReLU.py", "def forward(self, x):", "def forward(self, x)");
  std::ofstream(d / "kernelbench" / "level1" / "1_Square_matmul.py") << "import torch\n\ndef get_inputs():\n    return []\n";
  Result r = kgate("validate '" + d.string() + "'");
  std::filesystem::remove_all(d);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(contains(r.out, (d / "kernelbench/level1/19_ReLU.py").string() +
                                  ":7:25: error: the problem file does not parse: SyntaxError: expected ':'"))
      << r.out;
  EXPECT_TRUE(contains(r.out, (d / "kernelbench/level1/1_Square_matmul.py").string() +
                                  ":1:1: error: a KernelBench problem file defines class Model, get_init_inputs() at "
                                  "its top level; this one does not"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "validated 10 files: 2 errors")) << r.out;
}

// A level's `solutions` file a search starts from must parse and define ModelNew.
TEST(Cli, ValidateParsesTheStartingCandidatesOfALevelsSolutions) {
  namespace fs = std::filesystem;
  const fs::path d = kgate::config::testing::copy_with_edit(fixture("good"), "cli-kbsol", "suites/minimal.yaml",
                                                            "levels: [nat]", "levels: [nat, kbsol]");
  fs::create_directories(d / "solutions" / "level1");
  std::ofstream(d / "configs" / "levels" / "kbsol.yaml")
      << "version: 1\nid: kbsol\ntitle: with solutions\nkind: kernelbench\nroot: ../../kernelbench/level1\n"
         "select: list\nproblems: [19_ReLU]\nsolutions: ../../solutions/level1\nstarter: solutions\n";
  std::ofstream(d / "solutions" / "level1" / "19_ReLU.py") << "import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n";
  Result r = kgate("validate '" + d.string() + "'");
  fs::remove_all(d);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(contains(r.out, (d / "solutions/level1/19_ReLU.py").string() +
                                  ":1:1: error: a KernelBench starting candidate defines class ModelNew at its top "
                                  "level; this one does not"))
      << r.out;
}

TEST(Cli, ValidateMissingPathExitsTwo) {
  Result r = kgate("validate /nonexistent-kgate-path");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "/nonexistent-kgate-path: error: no such file or directory")) << r.out;
}

TEST(Cli, ValidatePlanPrintsEverySuite) {
  Result r = kgate("validate --plan '" + fixture("good") + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "suite full: Every fixture level")) << r.out;
  EXPECT_TRUE(contains(r.out, "suite minimal")) << r.out;
  EXPECT_TRUE(contains(r.out, "on big-gpu (cuda backend): 4 problems")) << r.out;
  EXPECT_TRUE(contains(r.out, "[skipped: no cuda starter]")) << r.out;
  EXPECT_TRUE(contains(r.out, "3 experiments and 30 s per problem, 90 s per suite")) << r.out;
}

// The configs and suites the project ships validate, from the repository root and (by
// falling back to the source tree) from anywhere else.
TEST(Cli, ShippedConfigsValidate) {
  std::string src = KGATE_SOURCE_DIR;
  Result r = kgate("validate --plan", src);
  // CUDA starters land separately from the problem specs that name them; until they are in
  // the tree, missing .cu files are the one error this test tolerates (by skipping).
  if (r.rc == 2) {
    bool only_missing_cuda = true;
    size_t start = 0;
    for (size_t nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = r.out.substr(start, nl - start);
      if (contains(line, ": error: ") &&
          !((contains(line, "'starters.cuda'") || contains(line, "'baselines.cuda'")) &&
            contains(line, "does not exist")))
        only_missing_cuda = false;
    }
    if (only_missing_cuda) GTEST_SKIP() << "CUDA starters are not in this tree yet:\n" << r.out;
  }
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, ": 0 errors")) << r.out;
  EXPECT_TRUE(contains(r.out, "suite demo")) << r.out;
  Result elsewhere = kgate("validate", "/");
  EXPECT_EQ(elsewhere.rc, 0) << elsewhere.out;
}

}  // namespace

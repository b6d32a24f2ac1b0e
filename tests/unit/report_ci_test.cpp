// The CI templates in ci/: the YAML parses, the workflows have the jobs the docs promise,
// and every `kgate <subcommand> --flag` they (and the Jenkinsfile) call exists in the CLI.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>

#include "report/record_io.h"
#include "report/report_writer.h"
#include "report/summary.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

std::string ci(const std::string& f) { return std::string(KGATE_SOURCE_DIR) + "/ci/" + f; }

void collect_runs(const YAML::Node& n, std::vector<std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      if (kv.first.as<std::string>() == "run" && kv.second.IsScalar())
        out.push_back(kv.second.as<std::string>());
      else
        collect_runs(kv.second, out);
    }
  } else if (n.IsSequence()) {
    for (const auto& c : n) collect_runs(c, out);
  }
}

struct Call {
  std::string sub;
  std::set<std::string> flags;
  std::string text;
};

// `kgate <sub> ...` invocations in shell text (line continuations joined).
// `by_path`: only invocations that name the binary by a path (build/kgate): for a whole
// file such as the Jenkinsfile, where prose ("kgate nightly on Jenkins", "kgate exited")
// stands in comments and messages beside the `sh` steps.
std::vector<Call> kgate_calls(std::string text, bool by_path = false) {
  text = std::regex_replace(text, std::regex("\\\\\\n"), " ");
  std::vector<Call> calls;
  static const std::regex any_re(R"((?:^|[\s/"'])kgate\s+([a-z]+)([^\n;|&]*))");
  static const std::regex path_re(R"((?:^|[\s"'])[^\s"']*/kgate\s+([a-z]+)([^\n;|&]*))");
  const std::regex& call_re = by_path ? path_re : any_re;
  static const std::regex flag_re(R"((?:^|\s)(--[a-z][a-z0-9-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), call_re);
       it != std::sregex_iterator(); ++it) {
    Call c{(*it)[1], {}, it->str()};
    std::string args = (*it)[2];
    for (auto f = std::sregex_iterator(args.begin(), args.end(), flag_re);
         f != std::sregex_iterator(); ++f)
      c.flags.insert((*f)[1]);
    calls.push_back(c);
  }
  return calls;
}

void check_calls(const std::vector<Call>& calls, const std::string& where) {
  static std::map<std::string, std::pair<int, std::string>> help;
  for (const auto& c : calls) {
    if (!help.count(c.sub)) help[c.sub] = run_command(kgate_bin() + " " + c.sub + " --help");
    const auto& [rc, text] = help[c.sub];
    EXPECT_EQ(rc, 0) << where << ": `kgate " << c.sub << "` is not a subcommand\n" << text;
    for (const auto& f : c.flags)
      EXPECT_TRUE(std::regex_search(text, std::regex("(^|[\\s,])" + f + "([\\s,=]|$)")))
          << where << ": `kgate " << c.sub << " " << f << "` is not a flag (in: " << c.text
          << ")";
  }
}

TEST(ReportCi, WorkflowsParseAndCallRealFlags) {
  int total = 0;
  for (const char* f : {"nightly.yml", "pr.yml", "weekly.yml"}) {
    YAML::Node doc;
    ASSERT_NO_THROW(doc = YAML::LoadFile(ci(f))) << f;
    ASSERT_TRUE(doc["on"]) << f;
    ASSERT_TRUE(doc["jobs"] && doc["jobs"].IsMap()) << f;
    std::vector<std::string> runs;
    collect_runs(doc, runs);
    std::vector<Call> calls;
    for (const auto& r : runs) {
      auto c = kgate_calls(r);
      calls.insert(calls.end(), c.begin(), c.end());
    }
    EXPECT_FALSE(calls.empty()) << f << " calls no kgate command";
    total += static_cast<int>(calls.size());
    check_calls(calls, f);
  }
  auto jenkins = kgate_calls(read_file(ci("Jenkinsfile")), /*by_path=*/true);
  EXPECT_GE(jenkins.size(), 2u);  // the shards' run, the merge
  check_calls(jenkins, "Jenkinsfile");
  EXPECT_GE(total, 6);
}

TEST(ReportCi, NightlyShardsMergeAndPublish) {
  YAML::Node doc = YAML::LoadFile(ci("nightly.yml"));
  EXPECT_TRUE(doc["on"]["schedule"]);
  auto shard = doc["jobs"]["shard"];
  ASSERT_TRUE(shard);
  EXPECT_TRUE(shard["strategy"]["matrix"]["shard"].IsSequence());
  bool gpu_label = false;
  for (const auto& l : shard["runs-on"]) gpu_label = gpu_label || l.as<std::string>() == "gpu";
  EXPECT_TRUE(gpu_label);
  auto merge = doc["jobs"]["merge"];
  ASSERT_TRUE(merge);
  EXPECT_EQ(merge["needs"].as<std::string>(), "shard");
  std::string text = read_file(ci("nightly.yml"));
  EXPECT_NE(text.find("junit.xml"), std::string::npos);
  EXPECT_NE(text.find("upload-artifact"), std::string::npos);
  // The shard count in the matrix matches the --shard k/N it passes.
  EXPECT_NE(text.find("--shard ${{ matrix.shard }}/" +
                      std::to_string(shard["strategy"]["matrix"]["shard"].size())),
            std::string::npos);
}

// Every step of a job, as maps.
std::vector<YAML::Node> steps_of(const YAML::Node& job) {
  std::vector<YAML::Node> out;
  for (const auto& s : job["steps"]) out.push_back(s);
  return out;
}

std::string str(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

int suite_wall_s(const std::string& suite) {
  return YAML::LoadFile(std::string(KGATE_SOURCE_DIR) + "/" + suite)["budget"]["suite_wall_s"].as<int>();
}

TEST(ReportCi, NightlySurvivesARealRunner) {
  YAML::Node doc = YAML::LoadFile(ci("nightly.yml"));
  // A re-run shard keeps the run id of its first attempt, so merge accepts it.
  std::string run_id = str(doc["env"]["KGATE_RUN_ID"]);
  EXPECT_NE(run_id.find("github.run_id"), std::string::npos) << run_id;
  EXPECT_EQ(run_id.find("run_attempt"), std::string::npos) << run_id;
  auto shard = doc["jobs"]["shard"], merge = doc["jobs"]["merge"];
  // The merge runs after failed shards but not after a cancel.
  EXPECT_EQ(str(merge["if"]), "${{ !cancelled() }}");
  EXPECT_EQ(str(merge["permissions"]["checks"]), "write");
  // A shard may use its whole suite budget and still upload its records.
  EXPECT_GT(shard["timeout-minutes"].as<int>() * 60, suite_wall_s("suites/nightly.yaml"));
  bool hidden = false, overwrite = false;
  for (const auto& s : steps_of(shard))
    if (str(s["uses"]).starts_with("actions/upload-artifact@")) {
      hidden = str(s["with"]["include-hidden-files"]) == "true";
      overwrite = str(s["with"]["overwrite"]) == "true";
      EXPECT_EQ(str(s["if"]), "${{ !cancelled() }}");
    }
  EXPECT_TRUE(hidden) << "workspaces/*/.git (the experiment history) must be uploaded";
  EXPECT_TRUE(overwrite) << "a re-run shard must replace its first attempt's artifact";
}

TEST(ReportCi, NoJobAlwaysRuns) {
  for (const char* f : {"nightly.yml", "pr.yml", "weekly.yml"})
    EXPECT_EQ(read_file(ci(f)).find("always()"), std::string::npos)
        << f << ": always() runs after a cancel too; use !cancelled()";
}

TEST(ReportCi, JobsInstallAPinnedKgateFromACache) {
  for (const char* f : {"nightly.yml", "pr.yml", "weekly.yml"}) {
    YAML::Node doc = YAML::LoadFile(ci(f));
    EXPECT_TRUE(doc["env"]["KGATE_REF"]) << f;
    EXPECT_TRUE(doc["env"]["KGATE_GIT"]) << f;
    for (const auto& kv : doc["jobs"]) {
      std::string job = f + std::string(":") + kv.first.as<std::string>();
      bool cache = false, install = false, builds_checkout = false;
      for (const auto& s : steps_of(kv.second)) {
        if (str(s["uses"]).starts_with("actions/cache@")) {
          cache = true;
          EXPECT_NE(str(s["with"]["key"]).find("env.KGATE_REF"), std::string::npos) << job;
        }
        std::string run = str(s["run"]);
        if (run.find("cmake --install") != std::string::npos) {
          install = true;
          EXPECT_EQ(str(s["if"]), "steps.kgate-cache.outputs.cache-hit != 'true'") << job;
        }
        if (run.find("cmake -S . ") != std::string::npos) builds_checkout = true;
      }
      EXPECT_TRUE(cache) << job << ": no actions/cache for the kgate install";
      EXPECT_TRUE(install) << job << ": does not install kgate";
      EXPECT_FALSE(builds_checkout) << job << ": builds the repository it runs in";
    }
  }
}

// Summary and ::error annotations once per workflow run: a kgate command that writes
// reports does so into $GITHUB_STEP_SUMMARY unless the step empties it.
TEST(ReportCi, OneSummaryPerRun) {
  for (const char* f : {"nightly.yml", "pr.yml"}) {
    std::vector<std::string> runs;
    collect_runs(YAML::LoadFile(ci(f)), runs);
    int writers = 0;
    for (const auto& r : runs)
      for (const auto& c : kgate_calls(r))
        if ((c.sub == "run" || c.sub == "check" || c.sub == "merge" ||
             (c.sub == "report" && c.flags.count("--from"))) &&
            r.find("GITHUB_STEP_SUMMARY=\"\" kgate " + c.sub) == std::string::npos)
          ++writers;
    EXPECT_EQ(writers, 1) << f << ": the step summary and annotations must come from one command";
  }
}

// `kgate merge --db` compares the merged run with the accepted results and records it: the
// one history step of the nightly (no second `kgate report --from merged --db`), on GitHub
// and on Jenkins alike. The PR check passes the history when the runner has it.
TEST(ReportCi, MergeWithTheHistoryIsTheOneHistoryStep) {
  std::vector<std::string> runs;
  collect_runs(YAML::LoadFile(ci("nightly.yml"))["jobs"]["merge"], runs);
  int merges = 0, reports = 0;
  for (const auto& r : runs)
    for (const auto& c : kgate_calls(r)) {
      if (c.sub == "merge") {
        ++merges;
        EXPECT_TRUE(c.flags.count("--db")) << c.text;
      }
      if (c.sub == "report") ++reports;
    }
  EXPECT_EQ(merges, 1);
  EXPECT_EQ(reports, 0) << "kgate merge --db already records the run";
  int jenkins_merges = 0, jenkins_reports = 0;
  for (const auto& c : kgate_calls(read_file(ci("Jenkinsfile")), /*by_path=*/true)) {
    if (c.sub == "merge") {
      ++jenkins_merges;
      EXPECT_TRUE(c.flags.count("--db")) << c.text;
    }
    if (c.sub == "report") ++jenkins_reports;
  }
  EXPECT_EQ(jenkins_merges, 1);
  EXPECT_EQ(jenkins_reports, 0);
  YAML::Node pr = YAML::LoadFile(ci("pr.yml"));
  EXPECT_FALSE(str(pr["env"]["KGATE_HISTORY"]).empty());
  std::vector<std::string> pr_runs;
  collect_runs(pr, pr_runs);
  int checks_with_db = 0;
  for (const auto& r : pr_runs)
    for (const auto& c : kgate_calls(r))
      if (c.sub == "check" && r.find("--db \"$KGATE_HISTORY\"") != std::string::npos) ++checks_with_db;
  EXPECT_EQ(checks_with_db, 1);
}

TEST(ReportCi, PrCheckGuardsTheGpuRunner) {
  YAML::Node doc = YAML::LoadFile(ci("pr.yml"));
  auto check = doc["jobs"]["check"];
  ASSERT_TRUE(check);
  EXPECT_EQ(str(check["if"]), "github.event.pull_request.head.repo.full_name == github.repository")
      << "a fork's pull request must not run on the self-hosted GPU runner";
  EXPECT_EQ(str(check["permissions"]["checks"]), "write");
  EXPECT_EQ(str(check["permissions"]["pull-requests"]), "write");
  EXPECT_GT(check["timeout-minutes"].as<int>() * 60, suite_wall_s("suites/pr.yaml"));
  // The base ref reaches the shell through the environment, not spliced into the script.
  std::vector<std::string> runs;
  collect_runs(doc, runs);
  for (const auto& r : runs) EXPECT_EQ(r.find("github.base_ref"), std::string::npos) << r;
}

TEST(ReportCi, JenkinsMergesAndPublishesWhateverTheShardsExit) {
  std::string j = read_file(ci("Jenkinsfile"));
  // A shard's failure (exit >= 2, a lost agent) is caught: the merge stage still runs.
  EXPECT_NE(j.find("catchError(buildResult: 'FAILURE'"), std::string::npos);
  EXPECT_NE(j.find("returnStatus: true"), std::string::npos);
  EXPECT_NE(j.find("post {"), std::string::npos);
  EXPECT_NE(j.find("always {"), std::string::npos);
  EXPECT_NE(j.find("junit testResults: 'merged/junit.xml'"), std::string::npos);
  // Stale records of a previous build never reach the merge.
  size_t clean = 0;
  for (size_t at = j.find("cleanWs()"); at != std::string::npos; at = j.find("cleanWs()", at + 1)) ++clean;
  EXPECT_GE(clean, 2u) << "cleanWs() before the shards and the merge";
  EXPECT_NE(j.find("useDefaultExcludes: false"), std::string::npos) << "stash drops .git by default";
  EXPECT_EQ(j.find("run_attempt"), std::string::npos);
}

// `kgate check` annotations land on the changed kernel in the diff: file= relative to the
// checkout, line= from a static-gate finding (else 1); a run's annotations name no file.
TEST(ReportCi, CheckAnnotationsNameTheKernelFile) {
  TempDir ws;
  write_file(ws / "kernels/native/starters/softmax.cu", "// kernel\n");
  RunRecords base = load_run_dir(fixture("run_basic"));
  RunRecords run;
  run.info = base.info;
  run.info.kind = RunKind::kCheck;
  ProblemResult r = base.results[0];  // the correctness regression
  r.best_candidate = ws / "kernels/native/starters/softmax.cu";
  run.results.push_back(r);
  ProblemResult outside = r;
  outside.problem = "elsewhere";
  outside.best_candidate = "/no/such/dir/k.cu";
  run.results.push_back(outside);
  setenv("GITHUB_WORKSPACE", ws.str().c_str(), 1);
  auto lines = github_annotations(summarize(run));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("::error file=kernels/native/starters/softmax.cu,line=1,title=", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("::error title=", 0), 0u) << lines[1];

  run.results.resize(1);
  run.results[0].gates[1].reason = "line 12:5: __syncthreads: a barrier in divergent code";
  lines = github_annotations(summarize(run));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("file=kernels/native/starters/softmax.cu,line=12,col=5,title="), std::string::npos)
      << lines[0];

  run.info.kind = RunKind::kRun;
  lines = github_annotations(summarize(run));
  unsetenv("GITHUB_WORKSPACE");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("::error title=", 0), 0u) << lines[0];
}

TEST(ReportCi, CallParserFindsFlags) {
  auto calls = kgate_calls("build/kgate run x.yaml --out o \\\n  --shard 1/2 && kgate merge a b --out m");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].sub, "run");
  EXPECT_EQ(calls[0].flags, (std::set<std::string>{"--out", "--shard"}));
  EXPECT_EQ(calls[1].sub, "merge");
}

TEST(ReportCi, UnknownFlagsAreCaught) {
  // The check must be able to fail: a made-up flag is not in `kgate run --help`.
  auto [rc, text] = run_command(kgate_bin() + " run --help");
  ASSERT_EQ(rc, 0) << text;
  EXPECT_FALSE(std::regex_search(text, std::regex("(^|[\\s,])--no-such-flag([\\s,=]|$)")));
  EXPECT_TRUE(std::regex_search(text, std::regex("(^|[\\s,])--shard([\\s,=]|$)")));
}

}  // namespace
}  // namespace kgate::report

// The CI templates in ci/: the YAML parses, the workflows have the jobs the docs promise,
// and every `kgate <subcommand> --flag` they (and the Jenkinsfile) call exists in the CLI.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>

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
  EXPECT_GE(jenkins.size(), 3u);
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

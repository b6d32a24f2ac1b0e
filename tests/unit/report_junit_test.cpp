// JUnit reporter: golden file, Jenkins XSD validity (xmllint), element per outcome.
#include "report/junit_reporter.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include <tinyxml2.h>

#include "report/html_reporter.h"
#include "report/markdown_reporter.h"
#include "report/record_io.h"
#include "report_test_util.h"

namespace kgate::report {
namespace {

using namespace testing;

TEST(ReportJunit, MatchesGolden) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  expect_golden(junit_xml(summarize(run)), "junit.xml");
}

TEST(ReportJunit, ValidAgainstJenkinsSchema) {
  auto [rc0, which] = run_command("command -v xmllint");
  if (rc0 != 0) GTEST_SKIP() << "xmllint not installed (libxml2-utils)";
  RunRecords run = load_run_dir(fixture("run_basic"));
  // Hostile text must not break the XML: quotes, angle brackets, control characters.
  run.results[0].reason = "bad <tag> & \"quote\" \x01 \x1b[31m";
  run.results[0].problem = "weird <name> & co";
  for (RunKind kind : {RunKind::kRun, RunKind::kCheck}) {
    run.info.kind = kind;
    TempDir d;
    write_file(d / "junit.xml", junit_xml(summarize(run)));
    auto [rc, out] = run_command("xmllint --noout --schema " + fixture("junit-10.xsd") + " " +
                                 (d / "junit.xml"));
    EXPECT_EQ(rc, 0) << out;
  }
}

// A run stopped in its last phase (SIGTERM during the final re-measures) has a record for
// every problem it planned, all passing, and still exits 130: every report says FAIL
// (interrupted), and the JUnit carries the stop as an error of its own, valid for Jenkins.
TEST(ReportJunit, AnInterruptedRunFailsEveryReportEvenWithEveryProblemRecorded) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  std::vector<ProblemResult> passing;
  for (const auto& r : run.results)
    if (r.outcome == Outcome::kImproved || r.outcome == Outcome::kMatched) passing.push_back(r);
  ASSERT_FALSE(passing.empty());
  run.results = passing;
  run.info.planned.clear();
  const Summary ok = summarize(run);
  ASSERT_FALSE(ok.pipeline_failed);
  run.info.interrupted = true;
  const Summary s = summarize(run);
  EXPECT_TRUE(s.pipeline_failed);
  EXPECT_EQ(s.exit_code, ExitCode::kInterrupted);
  EXPECT_NE(markdown_report(s).find("**Result: FAIL** (interrupted: the run was stopped before it finished, exit 130"),
            std::string::npos);
  EXPECT_NE(html_report(s).find("FAIL (interrupted: the run was stopped"), std::string::npos);
  const std::string xml = junit_xml(s);
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(xml.c_str()), tinyxml2::XML_SUCCESS);
  auto* root = doc.FirstChildElement("testsuites");
  EXPECT_EQ(root->IntAttribute("errors"), 1);
  EXPECT_EQ(root->IntAttribute("tests"), static_cast<int>(passing.size()) + 1);
  bool found = false;
  for (auto* st = root->FirstChildElement("testsuite"); st; st = st->NextSiblingElement("testsuite"))
    for (auto* tc = st->FirstChildElement("testcase"); tc; tc = tc->NextSiblingElement("testcase"))
      if (std::string(tc->Attribute("classname")) == "kgate" && std::string(tc->Attribute("name")) == "run")
        found = tc->FirstChildElement("error") && std::string(tc->FirstChildElement("error")->Attribute("type")) == "interrupted";
  EXPECT_TRUE(found) << xml;
  auto [rc0, which] = run_command("command -v xmllint");
  if (rc0 != 0) return;
  TempDir d;
  write_file(d / "junit.xml", xml);
  auto [rc, out] = run_command("xmllint --noout --schema " + fixture("junit-10.xsd") + " " + (d / "junit.xml"));
  EXPECT_EQ(rc, 0) << out;
}

// testcase name -> its <error type> ("" for a testcase without an <error>), over every suite.
std::map<std::string, std::string> error_types(const Summary& s) {
  tinyxml2::XMLDocument doc;
  std::map<std::string, std::string> types;
  if (doc.Parse(junit_xml(s).c_str()) != tinyxml2::XML_SUCCESS) return {{"<junit>", "does not parse"}};
  for (auto* suite = doc.FirstChildElement("testsuites")->FirstChildElement("testsuite"); suite;
       suite = suite->NextSiblingElement("testsuite"))
    for (auto* tc = suite->FirstChildElement("testcase"); tc; tc = tc->NextSiblingElement("testcase")) {
      auto* e = tc->FirstChildElement("error");
      types[tc->Attribute("name")] = e ? e->Attribute("type") : "";
    }
  return types;
}

// An error record of the fixture's run (its first record, no gate table) named `problem`.
ProblemResult error_record(const RunRecords& run, const std::string& problem, const std::string& reason) {
  ProblemResult r = run.results.front();
  r.problem = problem;
  r.outcome = Outcome::kError;
  r.gates.clear();
  r.reason = reason;
  return r;
}

// The JUnit error types of `run` with `rows` as its only records.
std::map<std::string, std::string> error_types_of(RunRecords run, std::vector<ProblemResult> rows) {
  run.results = std::move(rows);
  run.info.planned.clear();
  return error_types(summarize(run));
}

// A problem kgate cannot judge on this machine is an <error> of its own type, whether a gate
// said so or the load did (no gate ran): neither the candidate's fault nor a broken runner.
TEST(ReportJunit, AProblemKgateCannotJudgeIsACannotJudgeError) {
  const RunRecords run = load_run_dir(fixture("run_basic"));
  const ProblemResult unjudged =
      error_record(run, "100_HingeLoss",
                   std::string(gates::kCannotJudgeProblem) +
                       " on this machine: the float64 truth needs ~24.0 GiB and the host has 18.4 GiB available");
  ProblemResult by_gate = error_record(run, "99_Other", "cannot judge: no case could be checked");
  by_gate.gates = {gate_row(gates::Gate::kCorrectness, gates::GateStatus::kError, gates::Fault::kCannotJudge)};
  EXPECT_EQ(error_types_of(run, {unjudged, by_gate}),
            (std::map<std::string, std::string>{{"100_HingeLoss", "CannotJudge"}, {"99_Other", "CannotJudge"}}));
}

// A problem file the worker rejects is the repository's to fix, not the runner's: its
// <error> says ProblemError, where a worker that died says InfrastructureError.
TEST(ReportJunit, AProblemWhoseFileIsRejectedIsAProblemError) {
  const RunRecords run = load_run_dir(fixture("run_basic"));
  ProblemResult rejected =
      error_record(run, "1_Broken", "lv/1_Broken.py:5: error: problem lv/1_Broken rejected by the worker: RuntimeError: x");
  rejected.error_kind = kProblemErrorKind;
  const ProblemResult died = error_record(run, "2_Died", "worker could not load problem 2_Died: the worker exited");
  EXPECT_EQ(error_types_of(run, {rejected, died}),
            (std::map<std::string, std::string>{{"1_Broken", "ProblemError"}, {"2_Died", "InfrastructureError"}}));
}

TEST(ReportJunit, OneSuitePerLevelAndElementPerOutcome) {
  RunRecords run = load_run_dir(fixture("run_basic"));
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(junit_xml(summarize(run)).c_str()), tinyxml2::XML_SUCCESS);
  auto* root = doc.FirstChildElement("testsuites");
  ASSERT_TRUE(root);
  EXPECT_STREQ(root->Attribute("tests"), "8");
  // The performance regression does not gate this suite (fail_on.performance is off), so
  // like the exit code JUnit does not fail it.
  EXPECT_STREQ(root->Attribute("failures"), "1");
  EXPECT_STREQ(root->Attribute("errors"), "1");

  std::map<std::string, std::string> kind_of;  // problem -> child element[type]
  int suites = 0;
  for (auto* s = root->FirstChildElement("testsuite"); s; s = s->NextSiblingElement("testsuite")) {
    ++suites;
    bool has_gpu = false;
    for (auto* p = s->FirstChildElement("properties")->FirstChildElement("property"); p;
         p = p->NextSiblingElement("property"))
      if (std::string(p->Attribute("name")) == "gpu")
        has_gpu = std::string(p->Attribute("value")) == "NVIDIA H200";
    EXPECT_TRUE(has_gpu);
    for (auto* tc = s->FirstChildElement("testcase"); tc; tc = tc->NextSiblingElement("testcase")) {
      EXPECT_STREQ(tc->Attribute("classname"), s->Attribute("name"));
      std::string k = "pass";
      if (auto* f = tc->FirstChildElement("failure")) k = std::string("failure:") + f->Attribute("type");
      if (tc->FirstChildElement("error")) k = "error";
      if (tc->FirstChildElement("skipped")) k = "skipped";
      EXPECT_TRUE(tc->FirstChildElement("system-out"));
      kind_of[tc->Attribute("name")] = k;
    }
  }
  EXPECT_EQ(suites, 3);
  EXPECT_EQ(kind_of["12_Matmul"], "failure:CorrectnessRegression");
  EXPECT_EQ(kind_of["12_Gemm_Multiply_LeakyReLU"], "pass");
  const std::string xml = junit_xml(summarize(run));
  EXPECT_NE(xml.find("performance regression, not failing (the suite's fail_on.performance is off)"),
            std::string::npos);
  // A suite that gates on performance: the same regression is a <failure>.
  run.info.fail_on_performance = true;
  tinyxml2::XMLDocument gated;
  ASSERT_EQ(gated.Parse(junit_xml(summarize(run)).c_str()), tinyxml2::XML_SUCCESS);
  EXPECT_STREQ(gated.FirstChildElement("testsuites")->Attribute("failures"), "2");
  bool perf_failure = false;
  for (auto* s = gated.FirstChildElement("testsuites")->FirstChildElement("testsuite"); s;
       s = s->NextSiblingElement("testsuite"))
    for (auto* tc = s->FirstChildElement("testcase"); tc; tc = tc->NextSiblingElement("testcase"))
      if (std::string(tc->Attribute("name")) == "12_Gemm_Multiply_LeakyReLU")
        perf_failure = tc->FirstChildElement("failure") != nullptr &&
                       std::string(tc->FirstChildElement("failure")->Attribute("type")) == "PerformanceRegression";
  EXPECT_TRUE(perf_failure);
  EXPECT_EQ(kind_of["1_Conv2D_ReLU_BiasAdd"], "error");
  EXPECT_EQ(kind_of["44_MiniGPTBlock"], "skipped");
  EXPECT_EQ(kind_of["23_Softmax"], "pass");
  EXPECT_EQ(kind_of["36_RMSNorm"], "pass");

  run.info.kind = RunKind::kCheck;
  std::string check = junit_xml(summarize(run));
  EXPECT_NE(check.find("type=\"GateFailure\""), std::string::npos);
}

}  // namespace
}  // namespace kgate::report

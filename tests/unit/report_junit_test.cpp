// JUnit reporter: golden file, Jenkins XSD validity (xmllint), element per outcome.
#include "report/junit_reporter.h"

#include <gtest/gtest.h>

#include <tinyxml2.h>

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

// The keep/revert loop end to end with a fake gate evaluator (deterministic latencies
// from the candidate's tunables), real git, real journal, real agents.
#include "search/suite_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "gates/performance_gate.h"
#include "report/record_io.h"
#include "search/agent.h"
#include "search/experiment_record.h"
#include "search/experiment_repo.h"
#include "search/journal.h"
#include "search/suite_run_phases.h"
#include "search/template_agent.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kgate::search {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Latency = 10 us per REPEAT, +1 us unless BLOCK is 32. "BROKEN" fails correctness.
struct FakeEvaluator : CandidateEvaluator {
  std::vector<std::string>* evaluated;
  std::string tag;  // the problem
  int* live = nullptr;  // evaluators alive now (each holds a worker process in real runs)
  // Evaluations left before the disk is "full" (-1: never): then every one fails the
  // static gate the way a compile on a full disk does.
  int* disk_left = nullptr;
  // The baseline's compile fails on a full disk: what the evaluator throws for a baseline
  // that does not compile, the linker's words in its log.
  bool* baseline_disk_full = nullptr;
  FakeEvaluator(std::vector<std::string>* log, std::string t, int* alive = nullptr)
      : evaluated(log), tag(std::move(t)), live(alive) {
    if (live != nullptr) ++*live;
  }
  ~FakeEvaluator() override {
    if (live != nullptr) --*live;
  }

  static double cost(const std::string& path, const Point& defines) {
    std::string src = slurp(path);
    Point p = parse_tune_space(src, path).default_point();
    for (const auto& [k, v] : defines) p[k] = v;
    return 10.0 * std::stod(p.count("REPEAT") ? p["REPEAT"] : "1") +
           (p.count("BLOCK") && p["BLOCK"] == "32" ? 0 : 1);
  }
  gates::Timing timing(const std::string& c, const Point& d, const std::string& b) {
    gates::Timing t;
    t.candidate_us = cost(c, d);
    t.baseline_us = cost(b, {});
    t.speedup = t.baseline_us / t.candidate_us;
    t.speedup_lo = t.speedup * 0.995;
    t.speedup_hi = t.speedup * 1.005;
    t.roofline_floor_us = 2;
    t.pct_roofline = t.roofline_floor_us / t.candidate_us;
    // "AA_ALARM": a runner whose timing tells two copies of one file apart.
    if (c != b && slurp(c).find("AA_ALARM") != std::string::npos) {
      t.candidate_us *= 0.95;
      t.speedup = t.baseline_us / t.candidate_us;
      t.speedup_lo = t.speedup * 0.995;
      t.speedup_hi = t.speedup * 1.005;
    }
    return t;
  }
  static gates::GateResult gate(gates::Gate g, gates::GateStatus st) {
    gates::GateResult r;
    r.gate = g;
    r.status = st;
    return r;
  }
  // Logged as "problem|anchor|starter-hash": a resumed search anchors its oracle.
  void anchor_oracle(const std::string& starter) override {
    evaluated->push_back(tag + "|anchor|" + std::to_string(std::hash<std::string>{}(slurp(starter))));
  }
  gates::CandidateVerdict evaluate(const std::string& c, const Point& d, const std::string& b) override {
    gates::CandidateVerdict v;
    std::string src = slurp(c);
    evaluated->push_back(tag + "|" + format_point(d) + "|" + std::to_string(std::hash<std::string>{}(src)));
    // What the evaluator throws when the worker rejects a problem (a KernelBench file
    // that fails to load, a device out of memory).
    if (src.find("REJECTED") != std::string::npos)
      throw kgate::UsageError("p.py:1:1: error: problem " + tag + " rejected by the worker: out of memory");
    if (baseline_disk_full != nullptr && *baseline_disk_full && !b.empty())
      throw kgate::UsageError(b + ": error: the baseline does not compile:\n"
                              "ld.lld: error: failed to write output '" + b + ".so': No space left on device");
    if (disk_left != nullptr && *disk_left >= 0 && (*disk_left)-- == 0) {
      ++*disk_left;  // stays full
      gates::GateResult g = gate(gates::Gate::kStatic, gates::GateStatus::kFail);
      g.reason = "does not compile: /usr/bin/ld: final link failed: No space left on device\ncollect2: error";
      v.gates.push_back(g);
      v.failed_gate = gates::Gate::kStatic;
      return v;
    }
    v.gates.push_back(gate(gates::Gate::kStatic, gates::GateStatus::kPass));
    if (src.find("BROKEN") != std::string::npos) {
      gates::GateResult g = gate(gates::Gate::kCorrectness, gates::GateStatus::kFail);
      g.reason = "max_abs_err 0.5 > atol 1e-3";
      g.failed_case = "seed=1 R=1023 f32";
      gates::CaseRow bad;
      bad.case_id = "seed=1 R=1023 f32";
      bad.pass = false;
      bad.detail = "max_abs_err 0.5";
      gates::CaseRow good;
      good.case_id = "seed=1 R=64 f32";
      g.rows = {bad, good};
      v.gates.push_back(g);
      v.failed_gate = gates::Gate::kCorrectness;
      return v;
    }
    v.gates.push_back(gate(gates::Gate::kCorrectness, gates::GateStatus::kPass));
    // "UNTIMED": the timing crashed (a worker killed mid-sample): no samples, 0 us.
    if (src.find("UNTIMED") != std::string::npos) {
      gates::GateResult g = gate(gates::Gate::kPerformance, gates::GateStatus::kError);
      g.reason = "crash: the worker died (signal 9) while timing";
      v.gates.push_back(g);
      v.failed_gate = gates::Gate::kPerformance;
      v.timing = gates::Timing{};
      return v;
    }
    v.passed = true;
    v.timing = timing(c, d, b);
    return v;
  }
  std::atomic<bool>* stop_at_remeasure = nullptr;  // set during the final re-measure
  gates::Timing remeasure(const std::string& c, const Point& d, const std::string& b) override {
    evaluated->push_back("remeasure");
    if (stop_at_remeasure != nullptr) *stop_at_remeasure = true;
    return timing(c, d, b);
  }
  std::string device_name() const override { return "fake-cpu"; }
  // The reference model runs at half (eager) and two thirds (compile) of the candidate's speed.
  std::map<std::string, gates::Timing> reference_timings(const std::string& c, const Point& d) override {
    evaluated->push_back("reference " + tag);
    gates::Timing eager = timing(c, d, c), compiled = eager;
    eager.speedup = 2.0;
    compiled.speedup = 1.5;
    return {{"eager", eager}, {"compile", compiled}};
  }
};

struct SearchSuiteRun : ::testing::Test {
  fs::path dir, out;
  std::vector<std::string> evaluated;
  std::map<std::string, int> made;  // evaluators created per problem
  int live = 0, max_live = 0, disk_left = -1;
  bool baseline_disk_full = false;
  config::Suite suite;
  std::atomic<bool> stop{false};
  bool stop_in_final = false;  // the stop arrives during a final re-measure

  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kgate-run-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    out = dir / "out";
    fs::copy_file(fs::path(KGATE_TEST_DATA) / "search" / "repeat_starter.cpp", dir / "starter.cpp");
    std::ofstream(dir / "p.yaml") << "id: p\nop: softmax\n";
    suite.id = "unit";
    suite.budget.max_experiments = 12;
    suite.budget.suite_wall_s = 600;
    suite.budget.problem_floor_s = 10;
    suite.budget.target_speedup = 100;
    suite.budget.roofline_stop = 0.99;
  }
  void TearDown() override { fs::remove_all(dir); }

  RunItem item(const std::string& id, const std::string& starter = "") {
    RunItem it;
    it.level = "unit-level";
    it.problem_id = id;
    it.problem.id = id;
    it.problem.op = "softmax";
    it.starter = starter.empty() ? (dir / "starter.cpp").string() : starter;
    it.problem_file = (dir / "p.yaml").string();
    return it;
  }

  SuiteRunOptions options(bool resume, std::optional<int> max) {
    SuiteRunOptions o;
    o.out = out.string();
    o.suite = suite;
    o.suite_path = "unit.yaml";
    o.resume = resume;
    o.seed = 42;
    o.max_experiments = max;
    o.interrupted = &stop;
    return o;
  }

  RunSummary run(std::vector<RunItem> items, bool resume = false, std::optional<int> max = {}) {
    SuiteRun r(options(resume, max), std::move(items), [this](const RunItem& it, const std::string&, uint64_t) {
      ++made[it.problem_id];
      auto e = std::make_unique<FakeEvaluator>(&evaluated, it.problem_id, &live);
      e->disk_left = &disk_left;
      e->baseline_disk_full = &baseline_disk_full;
      if (stop_in_final) e->stop_at_remeasure = &stop;
      max_live = std::max(max_live, live);
      return e;
    });
    return r.run();
  }

  std::vector<json> experiments(const std::string& problem = "") {
    std::vector<json> v;
    for (auto& e : Journal::read((out / "journal.jsonl").string(), false).events)
      if (e["event"] == "experiment" && (problem.empty() || e["problem"] == problem)) v.push_back(e);
    return v;
  }

  // Journal, results.tsv and git agree: one row and one commit per journaled experiment.
  void expect_consistent(const std::string& run_id) {
    auto ex = experiments();
    std::vector<std::string> rows;
    std::stringstream tsv(slurp(out / "results.tsv"));
    std::string line;
    std::getline(tsv, line);
    EXPECT_EQ(line, "# kgate-results v1");
    std::getline(tsv, line);
    while (std::getline(tsv, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), ex.size());
    std::map<std::string, std::set<int>> numbers;
    for (size_t i = 0; i < ex.size(); ++i) {
      auto r = ex[i].get<ExperimentRecord>();
      EXPECT_EQ(rows[i], results_tsv_row(r).substr(0, rows[i].size()));
      EXPECT_TRUE(numbers[r.problem].insert(r.n).second) << "experiment run twice: " << r.n;
      ExperimentRepo repo((out / "workspaces" / r.problem).string());
      char ref[128];
      std::snprintf(ref, sizeof ref, "refs/kgate/%s/%s/%04d", run_id.c_str(), r.problem.c_str(), r.n);
      EXPECT_EQ(repo.resolve(ref), r.commit);
      auto info = repo.read(r.commit);
      EXPECT_EQ(info.trailers.at("Kgate-Experiment"), std::to_string(r.n));
      EXPECT_EQ(info.trailers.at("Kgate-Verdict"), to_string(r.verdict));
    }
    for (auto& [p, ns] : numbers) {
      EXPECT_EQ(*ns.rbegin() + 1, static_cast<int>(ns.size())) << p << ": an experiment was lost";
      ExperimentRepo repo((out / "workspaces" / p).string());
      EXPECT_EQ(repo.refs("refs/kgate/" + run_id + "/" + p + "/").size(), ns.size());
      // The branch holds the baseline and the kept experiments, newest first.
      auto log = repo.log(repo.resolve("refs/heads/kgate/unit/" + run_id + "/" + p));
      for (const auto& c : log) {
        std::string v = c.trailers.at("Kgate-Verdict");
        EXPECT_TRUE(v == "keep" || v == "baseline") << v;
      }
      EXPECT_EQ(repo.resolve("refs/tags/kgate/" + run_id + "/" + p + "/best"), log.front().id);
    }
  }
};

TEST_F(SearchSuiteRun, TunerImprovesKeepsRevertsAndRecordsEverything) {
  RunSummary s = run({item("alpha"), item("beta")});
  EXPECT_EQ(s.code, ExitCode::kPass);
  ASSERT_EQ(s.results.size(), 2u);
  for (const auto& r : s.results) {
    EXPECT_EQ(r.outcome, report::Outcome::kImproved) << r.reason;
    EXPECT_NEAR(r.speedup, 81.0 / 10.0, 1e-9);  // REPEAT 8->1, BLOCK 16->32
    EXPECT_EQ(r.baseline_us, 81);
    EXPECT_EQ(r.best_us, 10);
    EXPECT_GT(r.kept, 0);
    EXPECT_EQ(r.env.gpu, "fake-cpu");
    EXPECT_EQ(r.level, "unit-level");
    EXPECT_TRUE(fs::exists(result_record_path(out.string(), "unit-level", r.problem)));
    auto rec = json::parse(slurp(result_record_path(out.string(), "unit-level", r.problem)));
    EXPECT_EQ(rec["version"], 1);
    EXPECT_EQ(rec["outcome"], "improved");
  }
  // No point measured twice (per problem; the final re-measure is separate).
  std::set<std::string> seen;
  for (const auto& e : evaluated) {
    if (e != "remeasure") {
      EXPECT_TRUE(seen.insert(e).second) << e;
    }
  }
  // The committed best alone reproduces the measured kernel.
  ExperimentRepo repo((out / "workspaces" / "alpha").string());
  std::string best = slurp(out / "workspaces" / "alpha" / "starter.cpp");
  EXPECT_NE(best.find("#define REPEAT 1\n"), std::string::npos) << best;
  EXPECT_NE(best.find("#define BLOCK 32\n"), std::string::npos) << best;
  expect_consistent(s.run_id);
  auto ex = experiments("alpha");
  EXPECT_EQ(ex.front()["verdict"], "baseline");
  // The tuner writes its values into the file, so candidates compile without -D (a kept
  // candidate and its copy as the next baseline share one compile) while the journal
  // still records each point.
  for (const auto& e : evaluated)
    if (e.find('|') != std::string::npos) {
      EXPECT_NE(e.find("||"), std::string::npos) << e;
    }
  EXPECT_FALSE(experiments("alpha").at(1)["point"].empty());
  int keeps = 0;
  for (const auto& e : experiments())
    if (e["verdict"] == "keep") ++keeps;
  EXPECT_GT(keeps, 0);
}

TEST_F(SearchSuiteRun, OneWorkerAtATimeAndASingleProblemKeepsItsOwn) {
  // A PR check's one problem: its baseline's worker (and the check cases it cached) goes
  // on into the search instead of being replaced by a fresh one.
  RunSummary s = run({item("solo")});
  EXPECT_EQ(s.code, ExitCode::kPass);
  EXPECT_EQ(made["solo"], 1);
  // Several problems: never more than one worker alive, and only the problem searched
  // first can skip its restart.
  made.clear();
  fs::remove_all(out);
  s = run({item("alpha"), item("beta"), item("gamma")});
  EXPECT_EQ(s.code, ExitCode::kPass);
  EXPECT_EQ(max_live, 1);
  EXPECT_EQ(live, 0);
  int restarts = 0;
  for (const auto& [p, n] : made) restarts += n - 1;
  EXPECT_GE(restarts, 2);
  EXPECT_LE(restarts, 3);
}

TEST_F(SearchSuiteRun, TheBaselinesTimeComesOutOfTheSuiteWall) {
  // suite_wall_s is the whole run's: baselines that take all of it leave the searches
  // nothing, so each moves on before its first experiment and the run ends with every
  // problem's result (the starter's) instead of running past the wall a CI job gave it.
  suite.budget.suite_wall_s = 1e-3;
  RunSummary s = run({item("alpha"), item("beta")});
  EXPECT_FALSE(s.interrupted);
  ASSERT_EQ(s.results.size(), 2u);
  for (const auto& r : s.results) {
    EXPECT_EQ(r.experiments, 0) << r.problem;
    EXPECT_EQ(r.best_us, r.baseline_us) << r.problem;
    EXPECT_EQ(r.reason, "no candidate was tried (moved on: wall-time budget spent (0 s)); the starter is kept") << r.problem;
  }
  EXPECT_EQ(experiments().size(), 2u);  // the two baselines
  for (const auto& e : experiments()) EXPECT_EQ(e["verdict"], "baseline");
}

TEST_F(SearchSuiteRun, BrokenCandidateIsRevertedAndTheStarterKept) {
  suite.agent.kind = "command";
  suite.agent.command = "echo 'kgate-description: break it'; echo '// BROKEN' >> \"$KGATE_CANDIDATE\"";
  suite.budget.max_consecutive_reverts = 3;
  RunSummary s = run({item("p")});
  EXPECT_EQ(s.code, ExitCode::kPass);  // a candidate failing is data, not a pipeline failure
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, report::Outcome::kFallback);
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 4u);
  for (size_t i = 1; i < ex.size(); ++i) {
    EXPECT_EQ(ex[i]["verdict"], "revert");
    EXPECT_EQ(ex[i]["failed_gate"], "correctness");
    EXPECT_EQ(ex[i]["failed_case"], "seed=1 R=1023 f32");
    EXPECT_EQ(ex[i]["description"], "break it");
    EXPECT_EQ(ex[i]["gates"][1]["rows"].size(), 1u);  // failing rows only,
    EXPECT_EQ(ex[i]["gates"][1]["judged"], 2);         // of the two cases judged
  }
  EXPECT_EQ(slurp(out / "workspaces" / "p" / "starter.cpp"), slurp(dir / "starter.cpp"));
  auto fb = json::parse(slurp(out / "workspaces" / "p" / "feedback.json"));
  EXPECT_EQ(fb["failed_gate"], "correctness");
  EXPECT_NE(slurp(out / "workspaces" / "p" / "task.md").find("Playbook"), std::string::npos);
  expect_consistent(s.run_id);
}

TEST_F(SearchSuiteRun, StarterFailingTheGatesFailsThePipeline) {
  std::ofstream(dir / "broken.cpp") << "// kgate:tune REPEAT=[1,2]\n#define REPEAT 2\n// BROKEN\n";
  RunSummary s = run({item("bad", (dir / "broken.cpp").string()), item("good")});
  EXPECT_EQ(s.code, ExitCode::kGateFailure);
  ASSERT_EQ(s.results.size(), 2u);
  for (const auto& r : s.results) {
    if (r.problem == "bad") {
      EXPECT_EQ(r.outcome, report::Outcome::kError);
      EXPECT_NE(r.reason.find("correctness"), std::string::npos) << r.reason;
    } else {
      EXPECT_EQ(r.outcome, report::Outcome::kImproved);
    }
  }
}

// A starter whose timing crashed is no A/A noise and no 0 us baseline: the problem is an
// error that says so, and nothing is searched from it.
TEST_F(SearchSuiteRun, AStarterThatCouldNotBeTimedIsNoBaseline) {
  std::ofstream(dir / "untimed.cpp") << "// kgate:tune REPEAT=[1,2]\n#define REPEAT 2\n// UNTIMED\n";
  RunSummary s = run({item("untimed", (dir / "untimed.cpp").string())});
  EXPECT_NE(s.code, ExitCode::kPass);
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, report::Outcome::kError);
  EXPECT_NE(s.results[0].reason.find("the starter could not be timed: "), std::string::npos) << s.results[0].reason;
  auto ex = experiments("untimed");
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_FALSE(ex[0]["passed"].get<bool>());
  EXPECT_EQ(ex[0]["reason"].get<std::string>().find("A/A timing noise"), std::string::npos) << ex[0]["reason"];
}

// A problem its worker rejects is that problem's error, of its own inputs (exit 2, as a
// bad config is: no rerun on another runner fixes it); the run goes on with the rest.
TEST_F(SearchSuiteRun, RejectedProblemIsAnErrorAndTheRunContinues) {
  std::ofstream(dir / "rejected.cpp") << "// kgate:tune REPEAT=[1,2]\n#define REPEAT 2\n// REJECTED\n";
  RunSummary s = run({item("rejected", (dir / "rejected.cpp").string()), item("good")});
  EXPECT_EQ(s.code, ExitCode::kUsage);
  ASSERT_EQ(s.results.size(), 2u);
  for (const auto& r : s.results) {
    if (r.problem == "rejected") {
      EXPECT_EQ(r.outcome, report::Outcome::kError);
      EXPECT_EQ(r.error_kind, report::kProblemErrorKind);
      EXPECT_NE(r.reason.find("rejected by the worker"), std::string::npos) << r.reason;
    } else {
      EXPECT_EQ(r.outcome, report::Outcome::kImproved);
    }
  }
}

// A KernelBench problem that moves on at once (its starter is at the roofline stop) has
// no search and no live evaluator, yet still gets its vs-eager / vs-compile numbers.
TEST_F(SearchSuiteRun, ProblemWithoutSearchStillGetsReferenceTimings) {
  suite.budget.roofline_stop = 0.01;
  RunItem it = item("kb");
  it.problem.kind = "kernelbench";
  RunSummary s = run({it});
  ASSERT_EQ(s.results.size(), 1u);
  const auto& r = s.results[0];
  EXPECT_EQ(r.experiments, 0);
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_DOUBLE_EQ(r.eager_us, 2.0 * r.best_us);
  EXPECT_DOUBLE_EQ(r.compile_us, 1.5 * r.best_us);
  EXPECT_EQ(r.env.gpu, "fake-cpu");
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference kb"), 1);
  // Native problems have no reference model: nothing is asked.
  evaluated.clear();
  fs::remove_all(out);
  RunSummary n = run({item("native")});
  EXPECT_EQ(n.results[0].eager_us, 0);
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference native"), 0);
  // A suite that gives torch_references empty asks for no reference columns of a
  // KernelBench problem either.
  evaluated.clear();
  fs::remove_all(out);
  suite.torch_references.emplace();
  RunSummary none = run({it});
  EXPECT_EQ(none.results[0].eager_us, 0);
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference kb"), 0);
}

// A stop that arrives during a KernelBench problem's final re-measure is obeyed before the
// re-measures against the reference model (each one a model compile and timing on a GPU):
// no record without those columns, and --resume finishes the problem with no experiment
// run twice.
TEST_F(SearchSuiteRun, AStopDuringTheFinalReMeasureLeavesTheProblemToResume) {
  suite.budget.max_experiments = 2;
  RunItem it = item("kb");
  it.problem.kind = "kernelbench";
  stop_in_final = true;
  RunSummary s = run({it});
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.code, ExitCode::kInterrupted);
  EXPECT_TRUE(s.results.empty());
  EXPECT_FALSE(fs::exists(out / "results" / "unit-level__kb.json"));
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "remeasure"), 1);
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference kb"), 0);
  const std::size_t searched = experiments("kb").size();
  ASSERT_EQ(searched, 3u);  // the baseline and two experiments, journaled

  stop_in_final = false;
  stop = false;
  evaluated.clear();
  RunSummary r = run({it}, /*resume=*/true);
  EXPECT_FALSE(r.interrupted);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].experiments, 2);
  EXPECT_GT(r.results[0].eager_us, 0);
  EXPECT_GT(r.results[0].compile_us, 0);
  EXPECT_EQ(experiments("kb").size(), searched);  // nothing measured twice
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference kb"), 1);
  expect_consistent(r.run_id);
}

TEST_F(SearchSuiteRun, ForbiddenEditIsCaughtUndoneAndRecorded) {
  suite.agent.kind = "command";
  suite.agent.command =
      "chmod u+w problem.yaml; echo 'tolerance: 1e9' >> problem.yaml; echo x > scratch.txt; "
      "sed -i 's/define REPEAT 8/define REPEAT 1/' \"$KGATE_CANDIDATE\"";
  suite.budget.max_experiments = 1;
  RunSummary s = run({item("p")});
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1]["verdict"], "violation");
  EXPECT_EQ(ex[1]["violations"].size(), 2u);
  EXPECT_EQ(ex[1]["violations"][0], "modified problem.yaml");
  EXPECT_EQ(ex[1]["violations"][1], "created scratch.txt");
  EXPECT_EQ(evaluated.size(), 1u);  // only the baseline: a violating candidate is never run
  fs::path ws = out / "workspaces" / "p";
  EXPECT_EQ(slurp(ws / "problem.yaml"), slurp(dir / "p.yaml"));
  EXPECT_FALSE(fs::exists(ws / "scratch.txt"));
  EXPECT_EQ(slurp(ws / "starter.cpp"), slurp(dir / "starter.cpp"));
  EXPECT_EQ(s.results.at(0).outcome, report::Outcome::kFallback);
  expect_consistent(s.run_id);
}

TEST_F(SearchSuiteRun, HangingAgentIsKilledAtItsTimeout) {
  suite.agent.kind = "command";
  suite.agent.command = "sleep 60 & sleep 60";
  suite.agent.timeout_s = 1;
  suite.budget.max_experiments = 1;
  auto t0 = std::chrono::steady_clock::now();
  RunSummary s = run({item("p")});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 20);
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1]["verdict"], "timeout");
  EXPECT_NE(ex[1]["reason"].get<std::string>().find("timeout"), std::string::npos);
}

TEST_F(SearchSuiteRun, ResumeReconcilesAndContinuesWithoutLossOrDuplicates) {
  suite.budget.max_consecutive_reverts = 100;
  RunSummary first = run({item("p")}, false, 3);
  // Simulate a crash after a later commit but before its journal line, plus a torn tail:
  // delete the problem_done/run_done events, add an unjournaled commit and a torn line.
  std::string jp = (out / "journal.jsonl").string();
  auto c = Journal::read(jp, false);
  {
    std::ofstream j(jp, std::ios::trunc);
    json h = c.header;
    j << h.dump() << "\n";
    for (auto& e : c.events)
      if (e["event"] == "experiment") j << e.dump() << "\n";
    j << R"({"event":"experiment","problem":"p","n":4,"comm)";
  }
  fs::path ws = out / "workspaces" / "p";
  {
    ExperimentRepo repo(ws.string());
    std::ofstream(ws / "starter.cpp") << "// half-done edit\n";
    std::string stray = repo.commit("experiment 4: never journaled\n");
    repo.set_ref("refs/kgate/" + first.run_id + "/p/0004", stray);
    std::ofstream(ws / "junk.o") << "x";
  }
  ASSERT_GT(first.results.at(0).kept, 0) << "nothing kept before the resume: the anchor is not exercised";
  evaluated.clear();
  RunSummary second = run({item("p")}, true, 8);
  EXPECT_EQ(second.run_id, first.run_id);
  EXPECT_EQ(second.code, ExitCode::kPass);
  // Its best is a kept candidate: the oracle is anchored at the starter before anything runs.
  ASSERT_FALSE(evaluated.empty());
  EXPECT_EQ(evaluated.front(), "p|anchor|" + std::to_string(std::hash<std::string>{}(slurp(
                                                  (out / "state" / "p" / "starter" / "starter.cpp").string()))));
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 9u);  // baseline + 8, numbered 0..8 once each
  for (size_t i = 0; i < ex.size(); ++i) EXPECT_EQ(ex[i]["n"], static_cast<int>(i));
  EXPECT_FALSE(fs::exists(ws / "junk.o"));
  // The resumed tuner does not re-measure points the first session measured.
  std::set<std::string> points;
  for (auto& e : ex) EXPECT_TRUE(points.insert(e["point"].dump()).second || e["n"] == 0) << e["point"];
  expect_consistent(second.run_id);
  EXPECT_EQ(second.results.size(), 1u);
}

// Forged or hand-edited lines never make a resume skip a search or exit 0: a problem_done
// with an empty result, or one before any experiment of its problem, is an error naming
// the journal line.
TEST_F(SearchSuiteRun, ResumeRefusesForgedProblemDoneLines) {
  RunSummary first = run({item("p"), item("q")}, false, 2);
  std::string jp = (out / "journal.jsonl").string();
  auto c = Journal::read(jp, false);
  auto rewrite = [&](const std::string& forged) {
    std::ofstream j(jp, std::ios::trunc);
    j << c.header.dump() << "\n" << forged << "\n";
    for (auto& e : c.events)
      if (e["event"] == "experiment" && e["problem"] == "p") j << e.dump() << "\n";
  };
  auto resume_error = [&]() {
    try {
      run({item("p"), item("q")}, true, 2);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  rewrite(R"({"event":"problem_done","problem":"q","result":{}})");
  EXPECT_NE(resume_error().find("journal.jsonl:2: error: problem_done of q has no result outcome"), std::string::npos);
  rewrite(R"({"event":"problem_done","problem":"q","result":{"outcome":"improved"}})");
  EXPECT_NE(resume_error().find("journal.jsonl:2: error: problem_done of q (improved) comes before any experiment of it"),
            std::string::npos);
  rewrite(R"({"event":"experiment","problem":"p","n":"zero"})");
  EXPECT_NE(resume_error().find("journal.jsonl:2: error: experiment event does not parse"), std::string::npos);
  // After the problem's experiments: a result they did not produce (the issue's forged line
  // became results/__.json and reports no one could read).
  auto append = [&](const std::string& forged) {
    std::ofstream j(jp, std::ios::trunc);
    j << c.header.dump() << "\n";
    for (auto& e : c.events)
      if (e["event"] == "experiment" && e["problem"] == "p") j << e.dump() << "\n";
    j << forged << "\n";
  };
  append(R"({"event":"problem_done","problem":"p","result":{"outcome":"improved","experiments":9}})");
  EXPECT_NE(resume_error().find(": error: problem_done of p names problem '/'"), std::string::npos) << resume_error();
  append(R"({"event":"problem_done","problem":"p","result":{"outcome":"improved","level":"unit-level","problem":"p","experiments":9}})");
  EXPECT_NE(resume_error().find("problem_done of p claims 9 experiments, 0 kept; the journal has"), std::string::npos)
      << resume_error();
  (void)first;
}

// A full disk is no verdict: a failed gate whose reason is the disk's ("No space left on
// device") is not journaled against the candidate (nor the starter); the problem is an
// infrastructure error with a clean worktree, and a resume after space came back goes on
// from the last journaled experiment to the same end as a run that never hit it.
TEST_F(SearchSuiteRun, ADiskFullMidSearchIsNoVerdictAndAResumeGoesOn) {
  suite.budget.max_consecutive_reverts = 100;
  disk_left = 3;  // the baseline and two experiments, then full
  RunSummary first = run({item("p")}, false, 6);
  EXPECT_EQ(first.code, ExitCode::kInfra);
  ASSERT_EQ(first.results.size(), 1u);
  EXPECT_EQ(first.results[0].outcome, report::Outcome::kError);
  EXPECT_NE(first.results[0].reason.find("the disk is full (No space left on device)"), std::string::npos)
      << first.results[0].reason;
  EXPECT_NE(first.results[0].reason.find("is not charged to the candidate"), std::string::npos);
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 3u);
  for (auto& e : ex) EXPECT_EQ(e["reason"].get<std::string>().find("No space"), std::string::npos) << e.dump();
  // The worktree is back at the journaled best.
  ExperimentRepo repo((out / "workspaces" / "p").string());
  EXPECT_EQ(slurp(out / "workspaces" / "p" / "starter.cpp"),
            repo.file_at(ex.back()["best_commit"].get<std::string>(), "starter.cpp"));

  disk_left = -1;  // space freed
  RunSummary second = run({item("p")}, true, 6);
  EXPECT_EQ(second.code, ExitCode::kPass);
  ASSERT_EQ(second.results.size(), 1u);
  EXPECT_EQ(second.results[0].outcome, report::Outcome::kImproved) << second.results[0].reason;
  ex = experiments();
  ASSERT_EQ(ex.size(), 7u);  // baseline + 6, each once
  for (size_t i = 0; i < ex.size(); ++i) EXPECT_EQ(ex[i]["n"], static_cast<int>(i));
  expect_consistent(second.run_id);
  auto rec = json::parse(slurp(result_record_path(out.string(), "unit-level", "p")));
  EXPECT_EQ(rec["outcome"], "improved");

  // The same search without the full disk ends in the same place.
  const report::ProblemResult resumed = second.results[0];
  fs::remove_all(out);
  RunSummary clean = run({item("p")}, false, 6);
  ASSERT_EQ(clean.results.size(), 1u);
  EXPECT_EQ(clean.results[0].outcome, resumed.outcome);
  EXPECT_EQ(clean.results[0].best_us, resumed.best_us);
  EXPECT_EQ(clean.results[0].experiments, resumed.experiments);
  EXPECT_EQ(clean.results[0].kept, resumed.kept);
}

TEST_F(SearchSuiteRun, ADiskFullAtTheBaselineIsNoFailingStarter) {
  disk_left = 0;
  RunSummary first = run({item("p")}, false, 3);
  EXPECT_EQ(first.code, ExitCode::kInfra);
  ASSERT_EQ(first.results.size(), 1u);
  EXPECT_NE(first.results[0].reason.find("is not charged to the starter"), std::string::npos) << first.results[0].reason;
  EXPECT_TRUE(experiments().empty());  // no baseline journaled, failing or not
  disk_left = -1;
  RunSummary second = run({item("p")}, true, 3);
  EXPECT_EQ(second.code, ExitCode::kPass);
  ASSERT_EQ(second.results.size(), 1u);
  EXPECT_EQ(second.results[0].outcome, report::Outcome::kImproved);
  EXPECT_EQ(experiments().size(), 4u);
  expect_consistent(second.run_id);
}

// The starter's copy compiled as the baseline fails on a full disk: the evaluator's "the
// baseline does not compile" is the disk's failure (exit 3 naming it), not the starter's,
// and a resume after space came back searches the problem.
TEST_F(SearchSuiteRun, ABaselineCompileOnAFullDiskIsNoFailingStarter) {
  baseline_disk_full = true;
  RunSummary first = run({item("p")}, false, 3);
  EXPECT_EQ(first.code, ExitCode::kInfra);
  ASSERT_EQ(first.results.size(), 1u);
  EXPECT_EQ(first.results[0].outcome, report::Outcome::kError);
  const std::string& why = first.results[0].reason;
  EXPECT_EQ(why.rfind("p: the disk is full (No space left on device); '", 0), 0u) << why;
  EXPECT_NE(why.find("is not charged to the starter: free space and run again with --resume"), std::string::npos) << why;
  EXPECT_TRUE(experiments().empty());  // no baseline journaled, failing or not
  baseline_disk_full = false;
  RunSummary second = run({item("p")}, true, 3);
  EXPECT_EQ(second.code, ExitCode::kPass);
  ASSERT_EQ(second.results.size(), 1u);
  EXPECT_EQ(second.results[0].outcome, report::Outcome::kImproved) << second.results[0].reason;
  EXPECT_EQ(experiments().size(), 4u);
  expect_consistent(second.run_id);
}

// A finished problem's git evidence is checked on resume: a deleted experiment ref, best
// tag or branch is put back at the journaled commit; a commit that is gone is an error
// naming it, not a silent pass.
TEST_F(SearchSuiteRun, AResumeRestoresTheRefsOfAFinishedProblem) {
  RunSummary first = run({item("p"), item("q")}, false, 3);
  ASSERT_EQ(first.code, ExitCode::kPass);
  const std::string run_id = first.run_id;
  {
    ExperimentRepo repo((out / "workspaces" / "p").string());
    repo.delete_ref("refs/kgate/" + run_id + "/p/0001");
    repo.delete_ref("refs/tags/kgate/" + run_id + "/p/best");
  }
  // ... and its worktree, the result's best candidate, edited and littered.
  const fs::path cand = out / "workspaces" / "p" / "starter.cpp";
  const std::string best_text = slurp(cand);
  std::ofstream(cand, std::ios::app) << "// edited after the run\n";
  std::ofstream(out / "workspaces" / "p" / "junk.o") << "x";
  evaluated.clear();
  RunSummary second = run({item("p"), item("q")}, true, 3);
  EXPECT_EQ(second.code, ExitCode::kPass);
  EXPECT_TRUE(evaluated.empty());  // nothing evaluated again
  expect_consistent(run_id);
  EXPECT_EQ(slurp(cand), best_text);
  EXPECT_FALSE(fs::exists(out / "workspaces" / "p" / "junk.o"));

  // A journaled commit that is not in the repository at all.
  const std::string jp = (out / "journal.jsonl").string();
  auto c = Journal::read(jp, false);
  {
    std::ofstream j(jp, std::ios::trunc);
    j << c.header.dump() << "\n";
    for (auto e : c.events) {
      if (e["event"] == "experiment" && e["problem"] == "q" && e["n"] == 1)
        e["commit"] = "0123456789abcdef0123456789abcdef01234567";
      j << e.dump() << "\n";
    }
  }
  RunSummary third = run({item("p"), item("q")}, true, 3);
  EXPECT_EQ(third.code, ExitCode::kInfra);
  for (const auto& r : third.results) {
    if (r.problem != "q") continue;
    EXPECT_EQ(r.outcome, report::Outcome::kError);
    EXPECT_NE(r.reason.find("the journaled commit 0123456789abcdef0123456789abcdef01234567 of q is not in the repository"),
              std::string::npos)
        << r.reason;
  }
}

// Temp files of a writer that is gone (a kill -9 between write and rename) do not outlive
// the next start in that OUT.
TEST_F(SearchSuiteRun, AStartRemovesTempFilesOfAKilledRun) {
  RunSummary first = run({item("p")}, false, 1);
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  int st = 0;
  ::waitpid(dead, &st, 0);
  const fs::path tmp = out / "results" / ("unit-level__p.json.tmp." + std::to_string(dead) + ".0");
  const fs::path cache_tmp = out / "cache" / "host" / ("k.cpp.tmp-" + std::to_string(dead) + "-0");
  fs::create_directories(cache_tmp.parent_path());
  std::ofstream(tmp) << "";
  std::ofstream(cache_tmp) << "half";
  RunSummary second = run({item("p")}, true, 1);
  EXPECT_EQ(second.code, ExitCode::kPass);
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_FALSE(fs::exists(cache_tmp));
  (void)first;
}

TEST_F(SearchSuiteRun, NewRunArchivesThePreviousOneAndUsesANewBranch) {
  suite.budget.max_experiments = 2;
  RunSummary a = run({item("p")});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a distinct run id
  RunSummary b = run({item("p")});
  ASSERT_NE(a.run_id, b.run_id);
  EXPECT_TRUE(fs::exists(out / "archive" / a.run_id / "journal.jsonl"));
  EXPECT_TRUE(fs::exists(out / "archive" / a.run_id / "results.tsv"));
  ExperimentRepo repo((out / "workspaces" / "p").string());
  EXPECT_FALSE(repo.resolve("refs/heads/kgate/unit/" + a.run_id + "/p").empty());
  EXPECT_FALSE(repo.resolve("refs/heads/kgate/unit/" + b.run_id + "/p").empty());
  expect_consistent(b.run_id);
}

TEST_F(SearchSuiteRun, InterruptStopsCleanlyWith130) {
  suite.agent.kind = "command";
  suite.agent.command = "sleep 30";
  suite.agent.timeout_s = 60;
  std::thread stopper([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    stop = true;
  });
  RunSummary s = run({item("p")});
  stopper.join();
  EXPECT_EQ(s.code, ExitCode::kInterrupted);
  EXPECT_TRUE(s.interrupted);
  auto ex = experiments();
  EXPECT_EQ(ex.size(), 1u);  // the baseline; the abandoned experiment is not recorded
  ExperimentRepo repo((out / "workspaces" / "p").string());
  EXPECT_EQ(repo.head(), ex[0]["commit"].get<std::string>());
}

// ---- http agent against a local chat-completions server ----------------------------------
struct Server {
  pid_t pid = -1;
  int port = 0;
  Server(const fs::path& reply, const fs::path& log) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      std::string script = std::string(KGATE_TEST_DATA) + "/search/chat_server.py";
      execlp("python3", "python3", script.c_str(), "--reply", reply.c_str(), "--log", log.c_str(),
             static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') line += c;  // the whole line
    close(fds[0]);
    if (!line.empty()) port = std::atoi(line.c_str());
  }
  ~Server() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

TEST_F(SearchSuiteRun, HttpAgentTakesTheReplysCodeBlock) {
  std::string fast = slurp(dir / "starter.cpp");
  fast.replace(fast.find("#define REPEAT 8"), 16, "#define REPEAT 2");
  std::ofstream(dir / "reply.md") << "Cut the redundant repeats to 2.\n\n```cpp\n" << fast << "```\nDone.\n";
  Server srv(dir / "reply.md", dir / "requests.jsonl");
  ASSERT_GT(srv.port, 0) << "python3 chat server did not start";
  suite.agent.kind = "http";
  suite.agent.url = "http://127.0.0.1:" + std::to_string(srv.port) + "/v1/";
  suite.agent.model = "test-model";
  suite.agent.api_key_env = "KGATE_TEST_CHAT_KEY";
  suite.agent.timeout_s = 20;
  suite.budget.max_experiments = 2;
  setenv("KGATE_TEST_CHAT_KEY", "sk-secret-123", 1);
  RunSummary s = run({item("p")});
  unsetenv("KGATE_TEST_CHAT_KEY");
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[1]["verdict"], "keep") << ex[1].dump();
  EXPECT_EQ(ex[1]["description"], "Cut the redundant repeats to 2.");
  EXPECT_EQ(ex[2]["verdict"], "revert");  // the same reply again: unchanged
  auto req = json::parse(slurp(dir / "requests.jsonl").substr(0, slurp(dir / "requests.jsonl").find('\n')));
  EXPECT_EQ(req["path"], "/v1/chat/completions");
  EXPECT_EQ(req["authorization"], "Bearer sk-secret-123");
  EXPECT_EQ(req["body"]["model"], "test-model");
  EXPECT_EQ(req["body"]["messages"][1]["role"], "user");
  EXPECT_NE(req["body"]["messages"][1]["content"].get<std::string>().find("#define REPEAT 8"),
            std::string::npos);
  EXPECT_EQ(slurp(out / "journal.jsonl").find("sk-secret"), std::string::npos);
  EXPECT_EQ(s.results.at(0).outcome, report::Outcome::kImproved);
}

TEST_F(SearchSuiteRun, HttpAgentWithoutItsKeyFailsCleanly) {
  suite.agent.kind = "http";
  suite.agent.url = "http://127.0.0.1:9";
  suite.agent.api_key_env = "KGATE_TEST_UNSET_KEY";
  suite.budget.max_experiments = 1;
  unsetenv("KGATE_TEST_UNSET_KEY");
  run({item("p")});
  auto ex = experiments();
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1]["verdict"], "agent_error");
  EXPECT_NE(ex[1]["reason"].get<std::string>().find("KGATE_TEST_UNSET_KEY"), std::string::npos);
}

// ---- A/A mode (agent: reference) ------------------------------------------------------------

// The reference as its own ModelNew through every gate: one result per problem, `matched`
// when it passes and the timing sees no difference; a rejection of the reference itself
// (a false reject) and a timing difference (a false alarm) are errors of the run.
TEST_F(SearchSuiteRun, AAModeJudgesTheReferenceAgainstItself) {
  suite.agent.kind = "reference";
  auto kb = [&](const std::string& id, const std::string& body) {
    std::ofstream(dir / (id + ".py")) << "class Model:\n    pass\n" << body;
    RunItem it = item(id, (dir / (id + ".py")).string());
    it.problem.kind = "kernelbench";
    it.problem.kernelbench_mode = "reference";
    it.problem.path = it.starter;
    it.problem_file = it.starter;
    return it;
  };
  RunSummary s = run({kb("ok", ""), kb("rejected", "# BROKEN\n"), kb("alarm", "# AA_ALARM\n")});
  EXPECT_EQ(s.code, ExitCode::kInfra);
  auto res = [&](const std::string& id) {
    return json::parse(slurp(out / "results" / report::record_file_name("unit-level", id))).get<report::ProblemResult>();
  };
  report::ProblemResult ok = res("ok");
  EXPECT_EQ(ok.outcome, report::Outcome::kMatched) << ok.reason;
  EXPECT_EQ(ok.reason.rfind("A/A: the reference passed every gate against itself, 1.000x", 0), 0u) << ok.reason;
  EXPECT_EQ(ok.experiments, 0);
  const std::string cand = slurp(out / "workspaces" / "ok" / "ok.py");
  EXPECT_NE(cand.find("class Model:"), std::string::npos);
  EXPECT_NE(cand.find("\nModelNew = Model\n"), std::string::npos) << cand;
  report::ProblemResult rej = res("rejected");
  EXPECT_EQ(rej.outcome, report::Outcome::kError);
  EXPECT_EQ(rej.reason.rfind("A/A false reject: the reference itself fails the correctness gate", 0), 0u) << rej.reason;
  report::ProblemResult alarm = res("alarm");
  EXPECT_EQ(alarm.outcome, report::Outcome::kError);
  EXPECT_EQ(alarm.reason.rfind("A/A false alarm: the reference timed against itself reads 1.053x", 0), 0u)
      << alarm.reason;
  // no search, no reference re-measures
  for (const auto& e : evaluated) EXPECT_NE(e.rfind("reference ", 0), 0u) << e;
}

// ---- compiled mode (dispatch-aware KernelBench) -------------------------------------------

// torch.compile's model as a fake: `inventory` writes one kernel file per kernel (tunable
// LAUNCH_XBLOCK, Inductor's choice 1024); a kernel's time is base + |log2(XBLOCK/best)|, the
// model's the sum over the workspace's kernel files, with the candidate's own file (or a
// best copy standing for its kernel) in place of the workspace's.
struct FakeCompiled : CandidateEvaluator {
  struct K { std::string name; double base; int best_block; double bound; double share = 0; };
  static constexpr double kExtern = 5;  // us in extern calls, never searched
  std::vector<K> kernels;
  std::string ws, problem_path;
  std::vector<std::string>* log;
  bool swaps_nothing = false;  // a worker that loads the problem without its kernel directory
  // Kernels with a template (a file under templates/NAME/row-x.py, tunable LAUNCH_XBLOCK,
  // default 512) whose cost is base * template_factor + the block's distance.
  std::set<std::string> templated;
  double template_factor = 0.5;
  bool slow_fails_gate = false;  // a slower candidate fails the performance gate (as on a GPU)
  double model_device_us = 100;   // the model's GPU time as the profiler read it
  double octave_us = 1;           // a kernel's cost per octave of XBLOCK from its best
  double bandwidth_fraction = 0;  // each kernel's, when > 0 (of copy bandwidth, profiled)
  double pct_roofline = 0;        // every timing's fraction of the roofline
  double screen_slack = 0;        // > 0: kernel edits are screened as kgate run's evaluator does
  // Pair partners the inventory names: consumer -> producer. A producer file with a line
  // "NOOP = 1" costs nothing; a consumer with "FUSED = 1" costs its base plus a fifth of its
  // producer's (the producer's work folded in).
  std::map<std::string, std::string> pairs;
  std::map<std::string, std::vector<gates::PartnerFile>> partners;  // set_partners, by candidate
  FakeCompiled(std::vector<K> ks, std::string w, std::string pp, std::vector<std::string>* l)
      : kernels(std::move(ks)), ws(std::move(w)), problem_path(std::move(pp)), log(l) {}

  json inventory(const std::string& dir) override {
    json inv = {{"inventory_version", 1}, {"kernels", json::array()}, {"externs", json::array()},
                {"triton_share", 0.5}, {"model_device_us", model_device_us}};
    if (kernels.empty()) inv["no_triton_reason"] = "torch.compile generated no Triton kernels (1 C++ kernel on the CPU)";
    for (const auto& k : kernels) {
      std::ofstream(fs::path(dir) / (k.name + ".py"))
          << "# kgate:kernel " << k.name << "\n# kgate:tune LAUNCH_XBLOCK=[64,128,256,512,1024,2048]\n"
          << "# kgate:tune-local\nLAUNCH_XBLOCK = 1024\n\n@triton.jit\ndef " << k.name << "(x): pass\n";
      inv["kernels"].push_back({{"name", k.name}, {"amdahl_bound", k.bound},
                                {"device_us", k.share > 0 ? k.share * model_device_us : 10.0}, {"share", k.share}});
      if (bandwidth_fraction > 0) inv["kernels"].back()["bandwidth_fraction"] = bandwidth_fraction;
      if (auto pr = pairs.find(k.name); pr != pairs.end())
        inv["kernels"].back()["partners"] =
            json::array({{{"kernel", pr->second}, {"buffers", {"buf1"}}, {"bytes", 64}}});
      if (templated.count(k.name)) {
        const std::string rel = "templates/" + k.name + "/row-x.py";
        fs::create_directories(fs::path(dir).parent_path() / "templates" / k.name);
        std::ofstream(fs::path(dir).parent_path() / rel)
            << "# kgate:kernel " << k.name << "\n# kgate:tune LAUNCH_XBLOCK=[64,128,256,512,1024,2048]\n"
            << "# kgate:tune-local\nKGATE_TEMPLATE = \"row-x\"\nLAUNCH_XBLOCK = 512\n";
        inv["kernels"].back()["templates"] = json::array({{{"template", "row-x"}, {"why", "rows"}, {"file", rel}}});
      }
    }
    return inv;
  }
  static std::string kernel_of(const std::string& path) {
    std::string src = slurp(path);
    auto at = src.find("# kgate:kernel ");
    if (at == std::string::npos) return "";
    return src.substr(at + 15, src.find('\n', at) - at - 15);
  }
  double kernel_cost(const K& k, const std::string& path, const Point& d) const {
    const std::string src = slurp(path);
    Point p = parse_tune_space(src, path).default_point();
    for (const auto& [n, v] : d) p[n] = v;
    if (src.find("NOOP = 1") != std::string::npos) return 0;
    double base = src.find("KGATE_TEMPLATE") != std::string::npos ? k.base * template_factor : k.base;
    if (src.find("FUSED = 1") != std::string::npos)
      for (const auto& o : kernels)
        if (pairs.count(k.name) && pairs.at(k.name) == o.name) base += o.base / 5;
    return base + octave_us * std::abs(std::log2(std::stod(p.at("LAUNCH_XBLOCK")) / k.best_block));
  }
  // The model's time with `path` (a kernel file, or the problem file: no file of its own),
  // the other kernels from the workspace, or from `pinned` (kernel -> file) where given.
  double model(const std::string& path, const Point& d, const std::map<std::string, std::string>& pinned = {}) const {
    const std::string own = path == problem_path ? "" : kernel_of(path);
    double t = kExtern;
    for (const auto& k : kernels) {
      const auto pin = pinned.find(k.name);
      t += k.name == own          ? kernel_cost(k, path, d)
           : pin != pinned.end() ? kernel_cost(k, pin->second, {})
                                 : kernel_cost(k, ws + "/kernels/" + k.name + ".py", {});
    }
    return t;
  }
  void set_partners(const std::string& c, std::vector<gates::PartnerFile> ps) override {
    std::string names;
    for (const auto& pf : ps) names += " " + fs::path(pf.workspace_path).filename().string();
    log->push_back("partners " + kernel_of(c) + ":" + names);
    partners[c] = std::move(ps);
  }
  double original() const {
    double t = kExtern;
    for (const auto& k : kernels) t += k.base + octave_us * std::abs(std::log2(1024.0 / k.best_block));
    return t;
  }
  gates::Timing timing(const std::string& c, const Point& d, const std::string& b) {
    gates::Timing t;
    t.candidate_us = model(c, d);
    // The baseline slot runs the partners as kept (the evaluator pins their best copies).
    std::map<std::string, std::string> pinned;
    if (auto it = partners.find(c); it != partners.end())
      for (const auto& pf : it->second) pinned[kernel_of(pf.best_path)] = pf.best_path;
    t.baseline_us = b.empty() ? original() : model(b, {}, pinned);
    t.speedup = t.baseline_us / t.candidate_us;
    t.speedup_lo = t.speedup * 0.995;
    t.speedup_hi = t.speedup * 1.005;
    t.pct_roofline = pct_roofline;
    // The problem file: the workspace's changed kernel files are swapped in, as the worker
    // reports them (or none, for a worker without the kernel directory: then it timed
    // torch.compile's own model).
    if (c == problem_path)
      for (const auto& k : kernels)
        if (!swaps_nothing && slurp(ws + "/kernels/" + k.name + ".py").find("LAUNCH_XBLOCK = 1024") == std::string::npos)
          t.swapped.push_back(k.name);
    if (c == problem_path && swaps_nothing) t.candidate_us = t.baseline_us = original();
    return t;
  }
  gates::CandidateVerdict evaluate(const std::string& c, const Point& d, const std::string& b) override {
    log->push_back("evaluate " + kernel_of(c) + " " + format_point(d) + " vs " + (b.empty() ? "compiled" : kernel_of(b)));
    gates::CandidateVerdict v;
    for (auto g : {gates::Gate::kStatic, gates::Gate::kCorrectness, gates::Gate::kOracle}) {
      gates::GateResult r;
      r.gate = g;
      r.status = gates::GateStatus::kPass;
      v.gates.push_back(r);
    }
    v.passed = true;
    // The kernel-level screen: the edited kernel against the baseline's copy of it (x10:
    // the fake's kernels are microseconds, the screen's floor 20 us); a template file is
    // not screened.
    const std::string own = c == problem_path ? "" : kernel_of(c);
    for (const auto& k : kernels) {
      if (screen_slack <= 0 || k.name != own || slurp(c).find("KGATE_TEMPLATE") != std::string::npos) continue;
      const std::string best = b.empty() ? "" : ws + "/kernels/" + k.name + ".py";
      const double best_us = best.empty() || kernel_of(b) != k.name
                                 ? k.base + octave_us * std::abs(std::log2(1024.0 / k.best_block))
                                 : kernel_cost(k, b, {});
      auto g = gates::judge_screen({k.name, "inductor", 10 * best_us, 10 * kernel_cost(k, c, d), 10}, screen_slack);
      if (!g) continue;
      v.gates = {v.gates.front(), *g};
      for (auto skipped : {gates::Gate::kCorrectness, gates::Gate::kOracle}) {
        gates::GateResult r;
        r.gate = skipped;
        r.status = gates::GateStatus::kSkipped;
        v.gates.push_back(r);
      }
      v.passed = false;
      v.failed_gate = gates::Gate::kPerformance;
      return v;
    }
    v.timing = timing(c, d, b);
    if (slow_fails_gate && v.timing->speedup < 0.97) {
      // as the worker would time it: the performance gate's own judgement of a slowdown
      protocol::TimeResult tr;
      for (int i = 0; i < 40; ++i) {
        tr.samples_us["candidate"].push_back(v.timing->candidate_us * (1 + 0.001 * (i % 5)));
        tr.samples_us["baseline"].push_back(v.timing->baseline_us * (1 + 0.001 * (i % 7)));
      }
      gates::GateResult perf = gates::judge_performance(tr, "c", config::GateThresholds{}, 0, 30).gate;
      v.passed = perf.status == gates::GateStatus::kPass;
      v.failed_gate = gates::Gate::kPerformance;
      v.gates.push_back(perf);
    }
    return v;
  }
  gates::Timing remeasure(const std::string& c, const Point& d, const std::string& b) override {
    log->push_back("remeasure " + std::string(c == problem_path ? "problem" : c) + " vs " + (b.empty() ? "compiled" : b));
    return timing(c, d, b);
  }
  std::string device_name() const override { return "fake-gpu"; }
  std::map<std::string, gates::Timing> reference_timings(const std::string& c, const Point& d) override {
    log->push_back("reference " + std::string(c == problem_path ? "problem" : c));
    gates::Timing eager = timing(c, d, "");
    eager.speedup = 3.0;
    gates::Timing compiled = timing(c, d, "");
    // As kgate run's evaluator: torch.compile's default model is the baseline of these
    // problems, timed by the final re-measure, not again here.
    return {{"eager", eager}, {"compile-max-autotune", compiled}};
  }
};

struct CompiledRun : SearchSuiteRun {
  std::vector<FakeCompiled::K> kernels;
  bool swaps_nothing = false;
  std::set<std::string> templated;
  double template_factor = 0.5;
  bool slow_fails_gate = false;
  double model_device_us = 100;
  double bandwidth_fraction = 0;
  double octave_us = 1;
  double pct_roofline = 0;
  double screen_slack = 0;
  std::map<std::string, std::string> pairs;
  // A compiled-mode KernelBench problem `id` of level kb (its file written under dir).
  RunItem compiled_item(const std::string& id) {
    std::ofstream(dir / (id + ".py")) << "class Model: pass\n";
    RunItem it;
    it.level = "kb";
    it.problem_id = it.problem.id = id;
    it.problem.kind = "kernelbench";
    it.problem.kernelbench_mode = "compiled";
    it.problem.kernelbench_baseline = "compile";
    it.problem.path = it.starter = it.problem_file = (dir / (id + ".py")).string();
    return it;
  }
  RunSummary run_compiled(bool resume = false, std::optional<int> max = {}) {
    RunItem it = compiled_item("p");
    std::string pp = it.problem.path;
    SuiteRun r(options(resume, max), {it}, [this, pp](const RunItem&, const std::string& ws, uint64_t) {
      auto f = std::make_unique<FakeCompiled>(kernels, ws, pp, &evaluated);
      f->swaps_nothing = swaps_nothing;
      f->templated = templated;
      f->template_factor = template_factor;
      f->slow_fails_gate = slow_fails_gate;
      f->model_device_us = model_device_us;
      f->bandwidth_fraction = bandwidth_fraction;
      f->octave_us = octave_us;
      f->pct_roofline = pct_roofline;
      f->screen_slack = screen_slack;
      f->pairs = pairs;
      return f;
    });
    return r.run();
  }
  report::ProblemResult result() {
    return json::parse(slurp(out / "results" / report::record_file_name("kb", "p"))).get<report::ProblemResult>();
  }
  // Makes the finished run resumable again: no result record, no problem_done/run_done.
  void reopen_for_resume() {
    fs::remove(out / "results" / report::record_file_name("kb", "p"));
    std::string j = slurp(out / "journal.jsonl"), kept;
    std::stringstream in(j);
    for (std::string l; std::getline(in, l);)
      if (l.find("\"problem_done\"") == std::string::npos && l.find("\"run_done\"") == std::string::npos) kept += l + "\n";
    std::ofstream(out / "journal.jsonl", std::ios::trunc) << kept;
  }
  static void expect_no_point_measured_twice(const std::vector<json>& ex) {
    std::set<std::string> points;
    for (size_t i = 1; i < ex.size(); ++i)
      EXPECT_TRUE(points.insert(ex[i]["kernel"].get<std::string>() + " " + ex[i]["point"].dump()).second)
          << "measured twice: " << ex[i]["kernel"] << " " << ex[i]["point"];
  }
};

TEST_F(CompiledRun, KernelsSearchedByAttainableGainAndKeptAsASet) {
  suite.budget.max_consecutive_reverts = 2;
  // b has the larger Amdahl bound: searched first; c cannot clear the keep threshold.
  kernels = {{"triton_poi_a", 10, 256, 1.2}, {"triton_red_b", 20, 64, 1.5}, {"triton_poi_c", 5, 1024, 1.001}};
  RunSummary s = run_compiled();
  EXPECT_EQ(s.code, ExitCode::kPass);
  auto ex = experiments("p");
  ASSERT_GE(ex.size(), 4u);
  EXPECT_EQ(ex[0]["verdict"], "baseline");
  EXPECT_NE(ex[0]["description"].get<std::string>().find("3 Triton kernels"), std::string::npos) << ex[0]["description"];
  std::vector<std::string> order;
  for (size_t i = 1; i < ex.size(); ++i) {
    std::string k = ex[i]["kernel"];
    EXPECT_NE(k, "triton_poi_c") << "a kernel whose Amdahl bound is under the keep threshold was searched";
    if (order.empty() || order.back() != k) order.push_back(k);
    EXPECT_EQ(ex[i]["description"].get<std::string>().rfind(k + ": tune", 0), 0u) << ex[i]["description"];
  }
  EXPECT_EQ(order, (std::vector<std::string>{"triton_red_b", "triton_poi_a"}));
  // Both kernels reached their best block; the workspace holds the set.
  fs::path ws = out / "workspaces" / "p";
  EXPECT_NE(slurp(ws / "kernels" / "triton_red_b.py").find("LAUNCH_XBLOCK = 64"), std::string::npos);
  EXPECT_NE(slurp(ws / "kernels" / "triton_poi_a.py").find("LAUNCH_XBLOCK = 256"), std::string::npos);
  EXPECT_NE(slurp(ws / "kernels" / "triton_poi_c.py").find("LAUNCH_XBLOCK = 1024"), std::string::npos);
  EXPECT_TRUE(fs::exists(ws / "inventory.json"));
  // a's experiments were measured against b's kept file (the workspace's), never the original
  std::vector<std::string> of_a;
  for (const auto& e : evaluated)
    if (e.rfind("evaluate triton_poi_a", 0) == 0) of_a.push_back(e);
  ASSERT_GE(of_a.size(), 3u);
  EXPECT_NE(of_a[0].find("vs compiled"), std::string::npos) << of_a[0];  // experiment 0: A/A
  for (size_t i = 1; i < of_a.size(); ++i) EXPECT_NE(of_a[i].find("vs triton_poi_a"), std::string::npos) << of_a[i];
  // The final number: the workspace's kernel set (the problem file) against torch.compile's model.
  EXPECT_NE(std::find(evaluated.begin(), evaluated.end(), "remeasure problem vs compiled"), evaluated.end());
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kImproved) << r.reason;
  EXPECT_EQ(r.mode, "compiled");
  EXPECT_EQ(r.triton_kernels, 3);
  EXPECT_EQ(r.kernels_searched, 2);
  EXPECT_EQ(r.kernels_kept, 2);
  EXPECT_NEAR(r.speedup, (5 + 10 + 2 + 20 + 4 + 5) / 40.0, 1e-9);
  EXPECT_GT(r.compile_max_autotune_us, 0);
  // vs torch.compile: the final re-measure's own baseline, the same ratio as the speedup
  EXPECT_DOUBLE_EQ(r.compile_us, r.baseline_us);
  EXPECT_NEAR(r.compile_us / r.best_us, r.speedup, 1e-9);
  EXPECT_EQ(r.best_candidate, (ws / "kernels").string());
}

// A final re-measure that did not swap in the kept kernels timed torch.compile's own model:
// its number says nothing about the result, so the problem is an error, never `matched`.
TEST_F(CompiledRun, AFinalReMeasureWithoutTheKeptKernelsIsAnError) {
  suite.budget.max_consecutive_reverts = 2;
  kernels = {{"triton_red_b", 20, 64, 1.5}};
  swaps_nothing = true;
  RunSummary s = run_compiled();
  EXPECT_EQ(s.code, ExitCode::kInfra);
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kError);
  EXPECT_NE(r.reason.find("the final re-measure did not swap in the kept kernel triton_red_b"), std::string::npos)
      << r.reason;
}

TEST_F(CompiledRun, NoTritonKernelsIsAFallbackToTheCompiledModel) {
  kernels = {};
  RunSummary s = run_compiled();
  EXPECT_EQ(s.code, ExitCode::kPass);
  auto ex = experiments("p");
  ASSERT_EQ(ex.size(), 1u);  // the baseline: torch.compile's model through every gate
  EXPECT_EQ(ex[0]["kernel"], "");
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_EQ(r.fallback_kind, "no-triton");
  EXPECT_NE(r.reason.find("no Triton kernels"), std::string::npos) << r.reason;
  EXPECT_EQ(r.speedup, 1);
  EXPECT_GT(r.eager_us, 0);
  EXPECT_DOUBLE_EQ(r.compile_us, r.best_us);  // the result is torch.compile's model
  EXPECT_NE(std::find(evaluated.begin(), evaluated.end(), "reference problem"), evaluated.end());
}

// A problem with nothing to search gets its result right after its baseline, before the
// next problem's: a run stopped later (a CI job's timeout, a shard's device budget) keeps
// it. Before, every result waited for the search phase, and such a cut left none.
// A problem with nothing to search is recorded right after its baseline, so a run cut
// later keeps it; its re-measures against the reference model (a max-autotune compile of
// a GEMM takes most of a minute on the H200) wait until every search is done, so a run
// short of time spends it searching. A cut run leaves them pending in the journal, and
// --resume measures them.
TEST_F(CompiledRun, NothingToSearchIsFinishedRightAfterItsBaselineItsReferencesLast) {
  bool fired = false;
  struct StopAtInventory : FakeCompiled {
    using FakeCompiled::FakeCompiled;
    std::atomic<bool>* stop = nullptr;
    bool* fired = nullptr;
    json inventory(const std::string& d) override {
      if (!*fired) *stop = true;  // the stop arrives during this problem's first baseline
      *fired = true;
      return FakeCompiled::inventory(d);
    }
  };
  auto make = [&](const std::string& id) { return compiled_item(id); };
  auto factory = [&](const RunItem& it, const std::string& ws, uint64_t) -> std::unique_ptr<CandidateEvaluator> {
    if (it.problem_id == "p")
      return std::make_unique<FakeCompiled>(std::vector<FakeCompiled::K>{}, ws, it.problem.path, &evaluated);
    auto q = std::make_unique<StopAtInventory>(std::vector<FakeCompiled::K>{{"triton_red_b", 20, 64, 1.5}}, ws,
                                               it.problem.path, &evaluated);
    q->stop = &stop;
    q->fired = &fired;
    return q;
  };
  {
    SuiteRun r(options(false, {}), {make("p"), make("q")}, factory);
    RunSummary s = r.run();
    EXPECT_TRUE(s.interrupted);
    ASSERT_EQ(s.results.size(), 1u);
    EXPECT_EQ(s.results[0].problem, "p");
    EXPECT_EQ(s.results[0].outcome, report::Outcome::kFallback);
    EXPECT_EQ(s.results[0].fallback_kind, "no-triton");
    EXPECT_EQ(s.results[0].eager_us, 0);  // not yet: after the searches
    EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference problem"), 0);
    EXPECT_TRUE(fs::exists(out / "results" / report::record_file_name("kb", "p")));
    EXPECT_FALSE(fs::exists(out / "results" / report::record_file_name("kb", "q")));
    EXPECT_NE(slurp(out / "journal.jsonl").find("\"references_pending\":true"), std::string::npos);
    // the empty reference columns say why, in the summary and in the record on disk
    const std::string why = "the run was interrupted before its re-measures against the reference model";
    EXPECT_EQ(s.results[0].references_missing.at("references").rfind(why, 0), 0u);
    const report::ProblemResult p_disk =
        report::load_result((out / "results" / report::record_file_name("kb", "p")).string());
    EXPECT_EQ(p_disk.references_missing.at("references").rfind(why, 0), 0u);
  }
  stop = false;
  evaluated.clear();
  SuiteRun r(options(true, {}), {make("p"), make("q")}, factory);
  RunSummary s = r.run();
  EXPECT_FALSE(s.interrupted);
  ASSERT_EQ(s.results.size(), 2u);
  const auto& rp = s.results[0].problem == "p" ? s.results[0] : s.results[1];
  EXPECT_EQ(rp.outcome, report::Outcome::kFallback);
  EXPECT_GT(rp.eager_us, 0);  // measured by the resume, after q's search
  EXPECT_GT(rp.compile_max_autotune_us, 0);
  // q's experiments and its own final re-measures first, p's reference re-measure last.
  ASSERT_FALSE(evaluated.empty());
  EXPECT_EQ(evaluated.back(), "reference problem");
  EXPECT_EQ(std::count(evaluated.begin(), evaluated.end(), "reference problem"), 2);
  EXPECT_TRUE(std::any_of(evaluated.begin(), evaluated.end(), [](const std::string& e) { return e.rfind("evaluate", 0) == 0; }));
  const report::ProblemResult on_disk = report::load_result((out / "results" / report::record_file_name("kb", "p")).string());
  EXPECT_GT(on_disk.eager_us, 0);
  EXPECT_TRUE(on_disk.references_missing.empty());  // the interruption's note is gone
}

// The re-measures against the reference model fail on the machine (a worker that would not
// start): the result stands without their columns, still journaled as waiting for them, and
// a resume takes them; a problem whose resume ends in an error gets none taken on the error.
TEST_F(CompiledRun, ReferencesThatCouldNotRunAreTakenAgainOnResume) {
  struct NoReferences : FakeCompiled {
    using FakeCompiled::FakeCompiled;
    std::map<std::string, gates::Timing> reference_timings(const std::string&, const Point&) override {
      throw InfraError("cannot start the reference worker: out of file descriptors");
    }
  };
  bool broken = true;
  RunItem it = compiled_item("p");
  auto factory = [&](const RunItem& i, const std::string& ws, uint64_t) -> std::unique_ptr<CandidateEvaluator> {
    if (broken) return std::make_unique<NoReferences>(std::vector<FakeCompiled::K>{}, ws, i.problem.path, &evaluated);
    return std::make_unique<FakeCompiled>(std::vector<FakeCompiled::K>{}, ws, i.problem.path, &evaluated);
  };
  {
    SuiteRun r(options(false, {}), {it}, factory);
    RunSummary s = r.run();
    ASSERT_EQ(s.results.size(), 1u);
    EXPECT_EQ(s.results[0].outcome, report::Outcome::kFallback);
    EXPECT_EQ(s.results[0].eager_us, 0);
    const std::string journal = slurp(out / "journal.jsonl");
    const auto last = journal.rfind("\"problem_done\"");
    ASSERT_NE(last, std::string::npos);
    EXPECT_NE(journal.find("\"references_pending\":true", last), std::string::npos) << journal.substr(last);
  }
  broken = false;
  SuiteRun r(options(true, {}), {it}, factory);
  RunSummary s = r.run();
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, report::Outcome::kFallback);
  EXPECT_GT(s.results[0].eager_us, 0);
  EXPECT_GT(s.results[0].compile_max_autotune_us, 0);
}

// A re-measure against the reference model that gave no time leaves its column empty, and
// the record says why; the modes that did measure fill theirs.
TEST_F(CompiledRun, AReferenceModeThatGaveNoTimeIsRecordedWithItsReason) {
  struct NoEager : FakeCompiled {
    using FakeCompiled::FakeCompiled;
    std::map<std::string, gates::Timing> reference_timings(const std::string& c, const Point& d) override {
      auto t = FakeCompiled::reference_timings(c, d);
      t["eager"] = gates::Timing{};
      t["eager"].note = "eager: CUDA out of memory";
      return t;
    }
  };
  RunItem it = compiled_item("p");
  auto factory = [&](const RunItem& i, const std::string& ws, uint64_t) -> std::unique_ptr<CandidateEvaluator> {
    return std::make_unique<NoEager>(std::vector<FakeCompiled::K>{}, ws, i.problem.path, &evaluated);
  };
  SuiteRun r(options(false, {}), {it}, factory);
  RunSummary s = r.run();
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].eager_us, 0);
  EXPECT_GT(s.results[0].compile_max_autotune_us, 0);
  EXPECT_EQ(s.results[0].references_missing.size(), 1u);
  const report::ProblemResult on_disk = result();
  ASSERT_EQ(on_disk.references_missing.size(), 1u) << slurp(out / "results" / report::record_file_name("kb", "p"));
  EXPECT_EQ(on_disk.references_missing.at("eager"), "eager: CUDA out of memory");
}

// The baseline's log line says where the inventory's wall time went, from the parts the
// worker reports.
TEST(CompiledInventory, CostNamesTheWorkersParts) {
  EXPECT_EQ(suite::inventory_cost(json{{"seed_compile_s", 5.14}, {"compile_s", 4.2}, {"profile_s", 3.0}}, 12.5),
            " (inventory 12.5 s with the worker's start and the problem's load: seeding 5.1 s, compile 4.2 s, "
            "profile 3.0 s)");
  EXPECT_EQ(suite::inventory_cost(json{{"profile_s", 0.25}}, 1.0),
            " (inventory 1.0 s with the worker's start and the problem's load: profile 0.2 s)");
  EXPECT_EQ(suite::inventory_cost(json::object(), 2.0), " (inventory 2.0 s with the worker's start and the problem's load)");
}

TEST_F(CompiledRun, ExternDominatedAndNotFasterFallbacks) {
  kernels = {{"triton_poi_a", 10, 1024, 1.004}};
  run_compiled();
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_EQ(r.fallback_kind, "extern-dominated");
  EXPECT_NE(r.reason.find("Triton kernels are 50.0% of the compiled model's GPU time"), std::string::npos) << r.reason;
  EXPECT_EQ(r.experiments, 0);

  // A kernel that is most of the model but already near copy bandwidth: not searched either,
  // and the reason says which of the two it is.
  fs::remove_all(out);
  evaluated.clear();
  kernels = {{"triton_poi_a", 10, 1024, 1.004, 0.9}};
  run_compiled();
  r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_EQ(r.fallback_kind, "at-roofline");
  EXPECT_NE(r.reason.find("already near copy bandwidth"), std::string::npos) << r.reason;
  EXPECT_EQ(r.experiments, 0);

  fs::remove_all(out);
  evaluated.clear();
  suite.budget.max_consecutive_reverts = 2;
  kernels = {{"triton_poi_a", 10, 1024, 1.3}};  // Inductor's choice is already the best
  run_compiled();
  r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_EQ(r.fallback_kind, "not-faster") << r.reason;
  EXPECT_EQ(r.kernels_searched, 1);
  EXPECT_EQ(r.kernels_kept, 0);
  EXPECT_GE(r.experiments, 2);
}

// A kernel the profiler reads at copy bandwidth, in a GPU-bound model that times slower
// than its profiled GPU time past the host's share of a call (the official activations on
// the H200: 9 %, and 8 % behind eager's kernels), is searched: its Amdahl bound is taken on
// the model as timed. The same kernel stays an at-roofline fallback when the excess is the
// host's share, or when the model may be waiting on the host.
TEST_F(CompiledRun, BoundsAreOnTheModelAsTimedWhenItIsSlowerThanProfiled) {
  suite.budget.max_consecutive_reverts = 2;
  // The model times 2305 us; XBLOCK 128 takes it to 2005 us. The host's share of a call:
  // 60 us and 20 a launch, 80 us here.
  kernels = {{"triton_poi_a", 2000, 128, 1.004, 0.9}};
  octave_us = 100;
  bandwidth_fraction = 0.99;
  auto fallback_at = [&](double profiled_us) {
    fs::remove_all(out);
    evaluated.clear();
    model_device_us = profiled_us;
    run_compiled();
    report::ProblemResult r = result();
    EXPECT_EQ(r.outcome, report::Outcome::kFallback) << profiled_us;
    EXPECT_EQ(r.fallback_kind, "at-roofline") << profiled_us << ": " << r.reason;
    EXPECT_EQ(r.experiments, 0) << profiled_us;
  };
  fallback_at(2250);  // timed 55 us above the profile: within the host's share
  fallback_at(500);   // under 10x the host's share: the model may be waiting on the host

  fs::remove_all(out);
  evaluated.clear();
  model_device_us = 2000;  // timed 2305 us: 225 us past the host's share, 11 % above
  // The model reads past roofline_stop (as the official activations do, at 92-95 %): the
  // plan has judged it worth searching, and the move-on rule waits for a kept kernel.
  suite.budget.roofline_stop = 0.9;
  pct_roofline = 0.93;
  run_compiled();
  report::ProblemResult r = result();
  EXPECT_EQ(r.kernels_searched, 1) << r.reason;
  EXPECT_EQ(r.outcome, report::Outcome::kImproved) << r.reason;
  EXPECT_GT(r.experiments, 0);
  EXPECT_NE(r.reason.find("93.0% of roofline"), std::string::npos) << r.reason;  // after its keep

  // Resumed, the plan is made again from the journaled baseline's time: the same kernels.
  const int done = r.experiments;
  reopen_for_resume();
  evaluated.clear();
  run_compiled(/*resume=*/true);
  r = result();
  EXPECT_EQ(r.kernels_searched, 1) << r.reason;
  EXPECT_EQ(r.outcome, report::Outcome::kImproved) << r.reason;
  EXPECT_EQ(r.experiments, done);
}

TEST_F(CompiledRun, ResumeGoesOnWithTheSameKernel) {
  suite.budget.max_consecutive_reverts = 2;
  kernels = {{"triton_poi_a", 10, 256, 1.2}, {"triton_red_b", 20, 64, 1.5}};
  run_compiled(false, 3);
  auto first = experiments("p");
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[3]["kernel"], "triton_red_b");
  // the same run, resumed with the budget back: nothing repeated, b finished, a searched
  reopen_for_resume();
  run_compiled(true, 12);
  auto ex = experiments("p");
  ASSERT_GT(ex.size(), first.size());
  expect_no_point_measured_twice(ex);
  EXPECT_EQ(ex[4]["kernel"], "triton_red_b");
  EXPECT_EQ(ex.back()["kernel"], "triton_poi_a");
  EXPECT_EQ(result().kernels_kept, 2);
}

// A pair experiment: the command agent folds the statistics kernel (the inventory's pair
// partner of the apply kernel) into the apply kernel and makes it do nothing. The
// experiment may change both files; the evaluator is told the partner, the baseline runs
// the partner as kept (not the experiment's edit, which is in the workspace already), the
// experiment is kept and the partner's kept copy follows it.
TEST_F(CompiledRun, APairExperimentChangesTheKernelAndItsPartner) {
  suite.agent.kind = "command";
  suite.agent.command =
      "printf 'FUSED = 1\\n' >> \"$KGATE_CANDIDATE\"; "
      "grep -q 'NOOP = 1' kernels/triton_per_stats_0.py || printf 'NOOP = 1\\n' >> kernels/triton_per_stats_0.py; "
      "echo 'kgate-description: fold the statistics in'";
  kernels = {{"triton_poi_apply_1", 20, 1024, 1.5}, {"triton_per_stats_0", 20, 1024, 1.2}};
  pairs = {{"triton_poi_apply_1", "triton_per_stats_0"}};
  run_compiled(false, 1);
  auto ex = experiments("p");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1]["kernel"], "triton_poi_apply_1");
  EXPECT_EQ(ex[1]["verdict"], "keep") << ex[1]["reason"];
  EXPECT_NE(ex[1]["description"].get<std::string>().find("(with its pair partner)"), std::string::npos)
      << ex[1]["description"];
  // 20 + 20 + 5 us against 20 + 4 + 0 + 5: the baseline ran the partner as kept; with the
  // experiment's partner edit leaking into it, it would have read 25 us
  EXPECT_NEAR(ex[1]["speedup"].get<double>(), 45.0 / 29.0, 1e-9);
  EXPECT_NE(std::find(evaluated.begin(), evaluated.end(), "partners triton_poi_apply_1: triton_per_stats_0.py"),
            evaluated.end());
  const fs::path best = out / "state" / "p" / "best" / "kernels";
  EXPECT_NE(slurp(best / "triton_per_stats_0.py").find("NOOP = 1"), std::string::npos);
  EXPECT_NE(slurp(best / "triton_poi_apply_1.py").find("FUSED = 1"), std::string::npos);
}

// Without a pair, the same edit of the other kernel's file is a violation, undone.
TEST_F(CompiledRun, EditingAKernelThatIsNotAPartnerIsAViolation) {
  suite.agent.kind = "command";
  suite.agent.command =
      "printf 'FUSED = 1\\n' >> \"$KGATE_CANDIDATE\"; printf 'NOOP = 1\\n' >> kernels/triton_per_stats_0.py";
  kernels = {{"triton_poi_apply_1", 20, 1024, 1.5}, {"triton_per_stats_0", 20, 1024, 1.2}};
  run_compiled(false, 1);
  auto ex = experiments("p");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1]["verdict"], "violation");
  EXPECT_NE(ex[1]["reason"].get<std::string>().find("only kernels/triton_poi_apply_1.py may change; undone: "),
            std::string::npos)
      << ex[1]["reason"];
  EXPECT_EQ(slurp(out / "workspaces" / "p" / "kernels" / "triton_per_stats_0.py").find("NOOP"), std::string::npos);
}

// The template agent: the kernel's template first (a whole-file experiment), then the
// tuner over the template's own space once it is kept; resumed, it draws the same points.
TEST_F(CompiledRun, TemplateAgentTriesTheTemplateThenTunesIt) {
  suite.agent.kind = "template";
  suite.budget.max_consecutive_reverts = 2;
  kernels = {{"triton_red_b", 20, 64, 1.5}, {"triton_poi_a", 10, 256, 1.2}};
  templated = {"triton_red_b"};
  RunSummary s = run_compiled(false, 4);
  EXPECT_EQ(s.code, ExitCode::kPass);
  auto first = experiments("p");
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(first[1]["kernel"], "triton_red_b");
  EXPECT_EQ(first[1]["description"], "triton_red_b: template row-x: rows");
  EXPECT_EQ(first[1]["verdict"], "keep");
  EXPECT_EQ(first[1]["point"], json({{"@template", "row-x"}}));
  for (size_t i = 2; i < first.size(); ++i)
    EXPECT_EQ(first[i]["description"].get<std::string>().rfind("triton_red_b: row-x tune LAUNCH_XBLOCK ", 0), 0u)
        << first[i]["description"];
  fs::path ws = out / "workspaces" / "p";
  EXPECT_NE(slurp(ws / "kernels" / "triton_red_b.py").find("KGATE_TEMPLATE"), std::string::npos);
  // no -D for a template experiment: the worker gets the file alone
  for (const auto& e : evaluated) EXPECT_EQ(e.find("@template"), std::string::npos) << e;

  // resumed with a larger budget: the tuner goes on from the template, nothing measured twice
  reopen_for_resume();
  run_compiled(true, 14);
  auto ex = experiments("p");
  ASSERT_GT(ex.size(), first.size());
  expect_no_point_measured_twice(ex);
  EXPECT_NE(slurp(ws / "kernels" / "triton_red_b.py").find("LAUNCH_XBLOCK = 64"), std::string::npos);
  // a has no template: the tuner over Inductor's file, as with agent kind tuner
  bool a_tuned = false;
  for (const auto& e : ex)
    if (e["kernel"] == "triton_poi_a" && e["n"].get<int>() > 0) {
      a_tuned = true;
      EXPECT_EQ(e["description"].get<std::string>().rfind("triton_poi_a: tune", 0), 0u) << e["description"];
    }
  EXPECT_TRUE(a_tuned);
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kImproved) << r.reason;
  EXPECT_EQ(r.kernels_kept, 2);
  EXPECT_EQ(r.templates_kept, 1);  // b's template; a's kept file is Inductor's, tuned
}

// A template slower than Inductor's kernel is reverted, and the tuner then walks Inductor's
// own launch-config space for that kernel.
TEST_F(CompiledRun, ASlowerTemplateFallsThroughToTheTuner) {
  suite.agent.kind = "template";
  suite.budget.max_consecutive_reverts = 4;
  kernels = {{"triton_red_b", 20, 64, 1.5}};
  templated = {"triton_red_b"};
  template_factor = 2.0;
  run_compiled();
  auto ex = experiments("p");
  ASSERT_GE(ex.size(), 3u);
  EXPECT_EQ(ex[1]["description"], "triton_red_b: template row-x: rows");
  EXPECT_EQ(ex[1]["verdict"], "revert");
  EXPECT_EQ(ex[2]["description"].get<std::string>().rfind("triton_red_b: tune LAUNCH_XBLOCK 1024->", 0), 0u)
      << ex[2]["description"];
  fs::path ws = out / "workspaces" / "p";
  EXPECT_EQ(slurp(ws / "kernels" / "triton_red_b.py").find("KGATE_TEMPLATE"), std::string::npos);
  EXPECT_NE(slurp(ws / "kernels" / "triton_red_b.py").find("LAUNCH_XBLOCK = 64"), std::string::npos);
  EXPECT_EQ(result().outcome, report::Outcome::kImproved);
}

// A template that loses at its first point but comes close (within kCloseLoser) has its own
// space tuned before it is dropped; its tuned points carry the template's name, are written
// into the template's file whole, and one that beats the kernel is kept. Resumed, the same
// points are drawn.
TEST_F(CompiledRun, ACloseLosingTemplateIsTunedBeforeItIsDropped) {
  suite.agent.kind = "template";
  suite.budget.max_consecutive_reverts = 3;
  kernels = {{"triton_red_b", 20, 64, 1.5}};  // Inductor's file: 20 + 4 (+5 extern) = 29 us
  templated = {"triton_red_b"};
  template_factor = 1.1;  // its first point (block 512): 22 + 3 + 5 = 30 us; at block 64: 27 us
  slow_fails_gate = true;  // 0.967x: its first point fails the performance gate, as slower
  run_compiled(false, 3);
  auto first = experiments("p");
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[1]["verdict"], "revert");
  EXPECT_EQ(first[1]["failed_gate"], "performance");
  EXPECT_EQ(first[1]["point"], json({{"@template", "row-x"}}));
  for (size_t i = 2; i < first.size(); ++i) {
    EXPECT_EQ(first[i]["description"].get<std::string>().rfind("triton_red_b: row-x (close at its first point) tune LAUNCH_XBLOCK ", 0), 0u)
        << first[i]["description"];
    EXPECT_EQ(first[i]["point"]["@template"], "row-x");
  }
  reopen_for_resume();
  run_compiled(true, 20);
  auto ex = experiments("p");
  ASSERT_GT(ex.size(), first.size());
  expect_no_point_measured_twice(ex);
  bool kept_tuned = false;
  for (const auto& e : ex)
    if (e["verdict"] == "keep") {
      EXPECT_EQ(e["point"]["@template"], "row-x") << e["description"];
      kept_tuned = true;
    }
  EXPECT_TRUE(kept_tuned);
  fs::path ws = out / "workspaces" / "p";
  const std::string kept = slurp(ws / "kernels" / "triton_red_b.py");
  EXPECT_NE(kept.find("KGATE_TEMPLATE"), std::string::npos);
  EXPECT_NE(kept.find("LAUNCH_XBLOCK = 64"), std::string::npos) << kept;
  // the template's space walked, Inductor's never touched after a keep
  for (const auto& e : ex) {
    if (e["n"].get<int>() > 1) {
      EXPECT_EQ(e["point"]["@template"], "row-x") << e["description"];
    }
  }
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kImproved) << r.reason;
  EXPECT_EQ(r.templates_kept, 1);
  EXPECT_NEAR(r.speedup, 29.0 / 27.0, 1e-9);
}

// A close loser's tuned points are not counted by the kernel's move-on rule: while they
// gain on it (>= 1 % each) the walk goes on; one that never beats the kernel is dropped
// once its space is walked, and the tuner then walks Inductor's own launch config, as for a
// far loser.
TEST_F(CompiledRun, ACloseLosersGainingTuningIsNotCutByTheRevertRule) {
  suite.agent.kind = "template";
  suite.budget.max_consecutive_reverts = 3;
  kernels = {{"triton_red_b", 20, 64, 1.5}};  // 29 us
  templated = {"triton_red_b"};
  template_factor = 1.25;  // 33 us at its first point, 30 us at its best: never faster
  run_compiled(false, 30);
  auto ex = experiments("p");
  expect_no_point_measured_twice(ex);
  bool reached_best = false, inductor_tuned = false;
  int tuned = 0;
  for (const auto& e : ex) {
    if (e["point"].contains("@template") && e["point"].size() > 1) {
      EXPECT_NE(e["verdict"], "keep") << e["description"];
      EXPECT_FALSE(inductor_tuned) << "the template was tuned after Inductor's config: " << e["description"];
      ++tuned;
      if (e["point"].value("LAUNCH_XBLOCK", "") == "64") reached_best = true;
    } else if (e["description"].get<std::string>().rfind("triton_red_b: tune LAUNCH_XBLOCK", 0) == 0) {
      inductor_tuned = true;
    }
  }
  EXPECT_GE(tuned, 4);  // without the gain rule, 2: the template's first point is a revert too
  EXPECT_TRUE(reached_best);
  EXPECT_TRUE(inductor_tuned);
  fs::path ws = out / "workspaces" / "p";
  EXPECT_EQ(slurp(ws / "kernels" / "triton_red_b.py").find("KGATE_TEMPLATE"), std::string::npos);
  EXPECT_EQ(result().templates_kept, 0);
}

// A close loser whose tuned points stop gaining is dropped after kLoserPatience of them,
// before the kernel's move-on rule, so Inductor's own launch-config tuner gets its turn.
TEST_F(CompiledRun, ADroppedCloseLoserLeavesInductorsTunerItsTurn) {
  suite.agent.kind = "template";
  suite.budget.max_consecutive_reverts = 3;
  kernels = {{"triton_red_b", 20, 512, 1.5}};  // Inductor's file (block 1024): 21 + 5 = 26 us
  templated = {"triton_red_b"};
  template_factor = 1.1;  // 27 us at its first point (block 512, its best): no tuned point gains
  run_compiled(false, 20);
  auto ex = experiments("p");
  expect_no_point_measured_twice(ex);
  int tuned = 0;
  bool inductor_kept = false;
  for (const auto& e : ex) {
    if (e["point"].contains("@template") && e["point"].size() > 1) {
      ++tuned;
      EXPECT_FALSE(inductor_kept) << e["description"];
    } else if (e["verdict"] == "keep") {
      EXPECT_EQ(e["description"].get<std::string>().rfind("triton_red_b: tune LAUNCH_XBLOCK", 0), 0u)
          << e["description"];
      inductor_kept = true;
    }
  }
  EXPECT_EQ(tuned, kLoserPatience);  // 3
  EXPECT_TRUE(inductor_kept);
  fs::path ws = out / "workspaces" / "p";
  EXPECT_NE(slurp(ws / "kernels" / "triton_red_b.py").find("LAUNCH_XBLOCK = 512"), std::string::npos);
  EXPECT_EQ(result().outcome, report::Outcome::kImproved);
  EXPECT_EQ(result().templates_kept, 0);
}

// Kernel edits that were correct but measured slower (they failed the performance gate on
// the slowdown alone) leave the problem `not-faster`, not `gate-failed`: nothing was wrong
// with them but their speed.
TEST_F(CompiledRun, SlowerCandidatesAreNotFasterNotAGateFailure) {
  suite.agent.kind = "template";
  suite.budget.max_consecutive_reverts = 1;
  kernels = {{"triton_red_b", 20, 1024, 1.5}};  // Inductor's config is already its best
  templated = {"triton_red_b"};
  template_factor = 2.0;
  slow_fails_gate = true;
  run_compiled();
  auto ex = experiments("p");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1]["failed_gate"], "performance");
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_EQ(r.fallback_kind, "not-faster") << r.reason;
  EXPECT_EQ(r.reason, "not faster: 0 of 1 kernel edits passed every gate, 1 measured slower (the performance "
                      "gate), none beat torch.compile's kernels");
}

// Edits the kernel-level screen reverts are slowdowns: the problem ends `not-faster`, and
// its record counts them (experiments_screened) beside every experiment's wall time.
TEST_F(CompiledRun, ScreenedEditsAreNotFasterAndCounted) {
  suite.budget.max_consecutive_reverts = 3;
  kernels = {{"triton_red_b", 20, 1024, 1.5}};  // Inductor's config is already its best
  octave_us = 2;                                 // an octave away: 1.1x its time
  screen_slack = 0.05;
  run_compiled();
  auto ex = experiments("p");
  ASSERT_EQ(ex.size(), 4u);  // the baseline, then 3 screened reverts
  for (size_t i = 1; i < ex.size(); ++i) {
    EXPECT_EQ(ex[i]["verdict"], "revert");
    EXPECT_EQ(ex[i]["failed_case"], "screen triton_red_b") << ex[i];
  }
  report::ProblemResult r = result();
  EXPECT_EQ(r.outcome, report::Outcome::kFallback);
  EXPECT_EQ(r.fallback_kind, "not-faster") << r.reason;
  EXPECT_EQ(r.reason, "not faster: 0 of 3 kernel edits passed every gate, 3 measured slower (the performance "
                      "gate), none beat torch.compile's kernels");
  EXPECT_EQ(r.experiments_screened, 3);
  EXPECT_EQ(r.experiment_wall_s.size(), 3u);
}

TEST(TaskMarkdown, CompiledModeExplainsTheKernelContract) {
  AgentContext c;
  c.problem = "23_Softmax";
  c.backend = "cuda";
  c.candidate = "kernels/triton_red_fused__softmax_0.py";
  c.problem_file = "problem.yaml";
  std::string native = task_markdown(c);
  EXPECT_NE(native.find("kgate_run"), std::string::npos);
  c.kernel = "triton_red_fused__softmax_0";
  std::string compiled = task_markdown(c);
  EXPECT_EQ(compiled.find("kgate_run"), std::string::npos);
  EXPECT_NE(compiled.find("is Inductor's Triton kernel `triton_red_fused__softmax_0`"), std::string::npos) << compiled;
  EXPECT_NE(compiled.find("call-site contract"), std::string::npos);
  EXPECT_NE(compiled.find("LAUNCH_*"), std::string::npos);
  EXPECT_EQ(compiled.find("templates/"), std::string::npos);
  c.templates = {"templates/triton_red_fused__softmax_0/row-softmax.py"};
  compiled = task_markdown(c);
  EXPECT_NE(compiled.find("- `templates/triton_red_fused__softmax_0/row-softmax.py`: one of kgate's templates "
                          "instantiated for this kernel"),
            std::string::npos)
      << compiled;
  EXPECT_NE(compiled.find("1. Edit only `kernels/triton_red_fused__softmax_0.py`. Every other"), std::string::npos);
  c.partners = {"kernels/triton_per_stats_0.py"};
  compiled = task_markdown(c);
  EXPECT_NE(compiled.find("1. Edit only `kernels/triton_red_fused__softmax_0.py` and, in the same experiment, its "
                          "pair partners `kernels/triton_per_stats_0.py` (kernels whose every output only this "
                          "kernel reads"),
            std::string::npos)
      << compiled;
}

}  // namespace
}  // namespace kgate::search

// End to end through the real kgate-native (host backend): the fixture candidates under
// tests/fixtures/candidates/softmax each fail the right gate with the right reason, and
// a hang or crash never affects the next candidate in the same Evaluator.
#include "gates/evaluator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "gates/correctness_gate.h"
#include "gates/performance_gate.h"
#include "../verdict_expect.h"

namespace kgate::gates {
namespace {

namespace fs = std::filesystem;
using test::expect_fails;
using test::gate;
using test::reason;

const std::string kDir = std::string(KGATE_TEST_DATA) + "/candidates/softmax/";

// The same problem as tests/fixtures/candidates/softmax/problem.yaml, built in code so
// this test depends on the gates only, not on the YAML loader.
config::NativeProblem problem() {
  config::NativeProblem p;
  p.id = "softmax_gates";
  p.op = "softmax";
  p.bench = {{"R", 256}, {"C", 1024}};
  p.host_bench = p.bench;
  p.sweep = {{{"R", 4}, {"C", 32}}, {{"R", 7}, {"C", 33}}, {{"R", 16}, {"C", 100}}};
  p.dtypes = {DType::kF32, DType::kF16};
  p.bench_dtype = DType::kF32;
  p.starters["host"] = kDir + "baseline.cpp";
  return p;
}

EvalOptions options() {
  EvalOptions o;
  o.backend = "host";
  o.seed = 20261129;
  o.request_timeout_s = 5;     // a hang costs this much
  o.compile_timeout_s = 180;   // host compiles on a loaded CI machine can be slow
  o.cache_dir = (fs::temp_directory_path() / ("kgate_eval_cache_" + std::to_string(::getpid()))).string();
  o.measurement.min_time_s = 0.2;
  o.measurement.max_time_s = 0.6;
  o.measurement.min_samples = 10;
  // A/A noise on a shared two-core runner must not read as "slower" here: the test is
  // about gates, not about a 3 % effect.
  o.thresholds.regression_threshold = 1.5;
  return o;
}

class EvaluatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ev_ = new Evaluator(problem(), options()); }
  static void TearDownTestSuite() {
    delete ev_;
    ev_ = nullptr;
  }

  static CandidateVerdict eval(const std::string& name) { return ev_->evaluate(kDir + name, {}, ""); }

  static Evaluator* ev_;
};
Evaluator* EvaluatorTest::ev_ = nullptr;

TEST_F(EvaluatorTest, OkPassesEveryGate) {
  CandidateVerdict v = eval("ok.cpp");
  ASSERT_TRUE(v.passed) << reason(v);
  EXPECT_EQ(v.seed, 20261129u);
  EXPECT_EQ(v.gates.size(), 4u);
  for (const auto& g : v.gates) EXPECT_EQ(g.status, GateStatus::kPass) << nlohmann::json(g).dump();
  // Every sweep shape, both dtypes, both distributions, the derived shapes and the
  // adversarial cases were checked.
  const auto& rows = gate(v, Gate::kCorrectness).rows;
  EXPECT_GE(rows.size(), 30u);
  auto has = [&](const std::string& s) {
    for (const auto& r : rows)
      if (r.case_id.find(s) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("R=7,C=33/f16/signed"));
  EXPECT_TRUE(has("R=257,C=1025/"));
  EXPECT_TRUE(has("/large"));
  EXPECT_TRUE(has("/mixed"));
  EXPECT_EQ(gate(v, Gate::kOracle).rows.size(), rows.size());
  ASSERT_TRUE(v.timing.has_value());
  EXPECT_GT(v.timing->candidate_us, 0);
  EXPECT_GT(v.timing->baseline_us, 0);
  EXPECT_GE(v.timing->samples, 10);
  EXPECT_NE(v.timing->verdict, SpeedVerdict::kSlower);
  // The verdict round-trips through its JSON (what --json writes).
  CandidateVerdict back = nlohmann::json(v).get<CandidateVerdict>();
  EXPECT_EQ(back.passed, true);
  EXPECT_EQ(back.gates.size(), 4u);
}

TEST_F(EvaluatorTest, CompileErrorFailsStaticWithCompilerLines) {
  CandidateVerdict v = eval("compile_error.cpp");
  expect_fails(v, Gate::kStatic, "compile error");
  EXPECT_NE(reason(v).find("error"), std::string::npos);
  EXPECT_EQ(gate(v, Gate::kCorrectness).status, GateStatus::kSkipped);
}

TEST_F(EvaluatorTest, ForbiddenThreadFailsLint) {
  CandidateVerdict v = eval("forbidden_thread.cpp");
  // The first finding is the #include <thread> on line 2; std::thread itself is counted.
  expect_fails(v, Gate::kStatic, "forbidden_thread.cpp:line 2:1: <thread>: candidates must not start threads");
  EXPECT_NE(reason(v).find("(+1 more)"), std::string::npos) << reason(v);
  bool names_std_thread = false;
  for (const auto& r : gate(v, Gate::kStatic).rows)
    names_std_thread = names_std_thread || r.detail.find("std::thread") != std::string::npos;
  EXPECT_TRUE(names_std_thread);
}

TEST_F(EvaluatorTest, MissingCandidateFailsStatic) {
  CandidateVerdict v = eval("no_such_candidate.cpp");
  expect_fails(v, Gate::kStatic, "cannot read candidate");
}

TEST_F(EvaluatorTest, WrongMaskFailsOnANonPowerOfTwoWidth) {
  CandidateVerdict v = eval("wrong_mask.cpp");
  expect_fails(v, Gate::kCorrectness, "elements over tolerance");
  const auto& g = gate(v, Gate::kCorrectness);
  EXPECT_NE(g.failed_case.find("R=7,C=33/"), std::string::npos) << g.failed_case;
  // The power-of-two shape passed before it.
  EXPECT_TRUE(g.rows.front().pass);
  EXPECT_NE(g.rows.front().case_id.find("C=32/"), std::string::npos);
}

TEST_F(EvaluatorTest, NanOnAdversarialInputs) {
  CandidateVerdict v = eval("nan_adversarial.cpp");
  expect_fails(v, Gate::kCorrectness, "NaN");
  EXPECT_NE(gate(v, Gate::kCorrectness).failed_case.find("/large"), std::string::npos)
      << gate(v, Gate::kCorrectness).failed_case;
  EXPECT_NE(reason(v).find("where the float64 truth is finite"), std::string::npos);
}

TEST_F(EvaluatorTest, Nondeterministic) {
  expect_fails(eval("nondeterministic.cpp"), Gate::kCorrectness, "not bitwise identical");
}

TEST_F(EvaluatorTest, MutatesInput) {
  expect_fails(eval("mutates_input.cpp"), Gate::kCorrectness, "modified its inputs");
}

TEST_F(EvaluatorTest, Unwritten) {
  expect_fails(eval("unwritten.cpp"), Gate::kCorrectness, "3 of 128 elements never written");
}

TEST_F(EvaluatorTest, TooFastDoesLessWork) {
  // It computes only on poisoned outputs: the timed calls find the timing's cleared
  // outputs "written" and leave them so, which the audit of the timed calls sees in its
  // first round (before it, the roofline floor caught the speed).
  CandidateVerdict v = eval("too_fast.cpp");
  expect_fails(v, Gate::kPerformance, "timed calls: sampling round 1 (input set 0): slot 'candidate'");
  EXPECT_EQ(gate(v, Gate::kCorrectness).status, GateStatus::kPass);
}

TEST_F(EvaluatorTest, InfiniteLoopTimesOutAndTheNextCandidatePasses) {
  CandidateVerdict v = eval("infinite_loop.cpp");
  expect_fails(v, Gate::kCorrectness, "timeout");
  const auto& g = gate(v, Gate::kCorrectness);
  EXPECT_EQ(g.status, GateStatus::kError);
  EXPECT_EQ(g.fault, Fault::kTimeout);
  EXPECT_FALSE(g.failed_case.empty());
  CandidateVerdict next = eval("ok.cpp");
  EXPECT_TRUE(next.passed) << reason(next);
}

TEST_F(EvaluatorTest, SegfaultCrashesAndTheNextCandidatePasses) {
  CandidateVerdict v = eval("segfault.cpp");
  expect_fails(v, Gate::kCorrectness, "SIGSEGV");
  EXPECT_EQ(gate(v, Gate::kCorrectness).fault, Fault::kCrash);
  CandidateVerdict next = eval("ok.cpp");
  EXPECT_TRUE(next.passed) << reason(next);
}

TEST_F(EvaluatorTest, SameSeedSameCases) {
  CandidateVerdict a = eval("wrong_mask.cpp");
  CandidateVerdict b = eval("wrong_mask.cpp");
  EXPECT_EQ(gate(a, Gate::kCorrectness).failed_case, gate(b, Gate::kCorrectness).failed_case);
  EXPECT_EQ(reason(a), reason(b));
}

TEST_F(EvaluatorTest, RemeasureUsesAFreshWorker) {
  Timing t = ev_->remeasure(kDir + "ok.cpp", {}, "");
  EXPECT_GE(t.samples, 10);
  EXPECT_GT(t.candidate_us, 0);
  EXPECT_EQ(t.candidate_samples_us.size(), t.baseline_samples_us.size());
}

// The oracle row's "(baseline X, ..." number, per case.
std::map<std::string, std::string> oracle_baselines(const CandidateVerdict& v) {
  std::map<std::string, std::string> out;
  for (const auto& r : gate(v, Gate::kOracle).rows) {
    const auto at = r.detail.find("(baseline ");
    if (at != std::string::npos) out[r.case_id] = r.detail.substr(at, r.detail.find(',', at) - at);
  }
  return out;
}
std::map<std::string, double> candidate_errors(const CandidateVerdict& v) {
  std::map<std::string, double> out;
  for (const auto& r : gate(v, Gate::kOracle).rows) out[r.case_id] = r.error;
  return out;
}

// The gates without the performance one, and ok.cpp judged against the starter (baseline.cpp).
EvalOptions no_timing() {
  EvalOptions o = options();
  o.run_performance = false;
  return o;
}
CandidateVerdict ok_against_the_starter(Evaluator& ev) { return ev.evaluate(kDir + "ok.cpp", {}, kDir + "baseline.cpp"); }

// A native problem's oracle is anchored by the first baseline the Evaluator checks (the
// search's starter) for its whole lifetime: when the search passes a kept candidate as the
// baseline, the bound stays the starter's, so a chain of keeps, each within rho of the
// last, cannot drift rho-fold per keep. ok.cpp and baseline.cpp round differently.
TEST(EvaluatorAnchor, TheFirstBaselineAnchorsTheOracleForTheEvaluatorsLifetime) {
  fs::path dir = fs::temp_directory_path() / ("kgate_anchor_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kDir + "ok.cpp", dir / "kept_best.cpp", fs::copy_options::overwrite_existing);
  Evaluator ev(problem(), no_timing());
  CandidateVerdict first = ok_against_the_starter(ev);
  ASSERT_TRUE(first.passed) << reason(first);
  const auto ok_errors = candidate_errors(first);
  const auto starter_numbers = oracle_baselines(first);
  ASSERT_EQ(starter_numbers.size(), ok_errors.size());
  int differs = 0;
  for (const auto& [id, err] : ok_errors)
    if (starter_numbers.at(id) != "(baseline " + fmt_num(err)) ++differs;
  EXPECT_GT(differs, 0) << "ok.cpp and baseline.cpp no longer differ: the test shows nothing";
  // ok.cpp kept: its copy is the baseline now; the anchor is still the starter's.
  CandidateVerdict second = ev.evaluate(kDir + "ok.cpp", {}, (dir / "kept_best.cpp").string());
  ASSERT_TRUE(second.passed) << reason(second);
  EXPECT_EQ(oracle_baselines(second), starter_numbers);
  fs::remove_all(dir);
}

// A resumed search: the Evaluator's first baseline is the kept best (ok.cpp), yet
// anchor_oracle(starter) first makes the bound the starter's, as in the run that kept it.
TEST(EvaluatorAnchor, AResumedSearchAnchorsAtTheStarterNotItsBest) {
  const EvalOptions o = no_timing();
  Evaluator fresh(problem(), o);
  CandidateVerdict from_starter = ok_against_the_starter(fresh);
  ASSERT_TRUE(from_starter.passed) << reason(from_starter);
  const auto starter_numbers = oracle_baselines(from_starter);

  Evaluator resumed(problem(), o);
  resumed.anchor_oracle(kDir + "baseline.cpp");
  CandidateVerdict v = resumed.evaluate(kDir + "ok.cpp", {}, kDir + "ok.cpp");
  ASSERT_TRUE(v.passed) << reason(v);
  EXPECT_EQ(oracle_baselines(v), starter_numbers);
  resumed.anchor_oracle(kDir + "ok.cpp");  // once anchored, for good
  EXPECT_EQ(oracle_baselines(resumed.evaluate(kDir + "ok.cpp", {}, kDir + "ok.cpp")), starter_numbers);

  // Without it the best's own numbers would be the anchor.
  Evaluator unanchored(problem(), o);
  EXPECT_NE(oracle_baselines(unanchored.evaluate(kDir + "ok.cpp", {}, kDir + "ok.cpp")), starter_numbers);
}

TEST(EvaluatorSetup, WorkspaceChangesFailStatic) {
  fs::path ws = fs::temp_directory_path() / ("kgate_eval_ws_" + std::to_string(::getpid()));
  fs::remove_all(ws);
  fs::create_directories(ws);
  fs::copy_file(kDir + "compile_error.cpp", ws / "kernel.cpp");
  std::ofstream(ws / "notes.md") << "agent notes\n";
  EvalOptions o = options();
  o.workspace = ws.string();
  o.run_performance = false;
  Evaluator ev(problem(), o);
  CandidateVerdict first = ev.evaluate((ws / "kernel.cpp").string(), {}, "");
  EXPECT_EQ(first.failed_gate, Gate::kStatic);
  EXPECT_NE(nlohmann::json(first).dump().find("compile error"), std::string::npos);
  std::ofstream(ws / "notes.md") << "rewritten by the agent\n";
  CandidateVerdict second = ev.evaluate((ws / "kernel.cpp").string(), {}, "");
  ASSERT_EQ(second.failed_gate, Gate::kStatic);
  EXPECT_NE(second.gates.front().reason.find("notes.md (modified)"), std::string::npos)
      << second.gates.front().reason;
  fs::remove_all(ws);
}

// A compiler that fails because the disk is full: the linker's "No space left on device"
// on a line of its own, then collect2's "error" line (the one first_errors shows). For
// the baseline that is an infrastructure error naming the disk, not "the baseline does
// not compile"; for a candidate the disk's words stay in the static gate's reason.
struct FullDiskCompiler {
  fs::path dir = fs::temp_directory_path() / ("kgate_eval_fulldisk_" + std::to_string(::getpid()));
  std::string old_cxx;
  bool had_cxx = false;
  explicit FullDiskCompiler(bool only_marked = false) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    // Only sources with "full-disk-here" meet the full disk (`only_marked`); others are
    // compiled by the real compiler.
    std::ofstream(dir / "cxx.sh") << "case \"$*\" in *--version*) echo 'fullcc 1.0'; exit 0 ;; esac\n"
                                     "for a; do last=$a; done\n"
                                  << (only_marked ? "grep -q full-disk-here \"$last\" || exec c++ \"$@\"\n" : "")
                                  << "echo '/usr/bin/ld: final link failed: No space left on device' >&2\n"
                                     "echo 'collect2: error: ld returned 1 exit status' >&2\n"
                                     "exit 1\n";
    if (const char* c = std::getenv("CXX")) {
      had_cxx = true;
      old_cxx = c;
    }
    ::setenv("CXX", ("/bin/sh " + (dir / "cxx.sh").string()).c_str(), 1);
  }
  ~FullDiskCompiler() {
    if (had_cxx) ::setenv("CXX", old_cxx.c_str(), 1);
    else ::unsetenv("CXX");
    fs::remove_all(dir);
  }
};

TEST(EvaluatorSetup, ABaselineCompileOnAFullDiskIsAnInfraErrorNamingTheDisk) {
  FullDiskCompiler cc;
  EvalOptions o = options();
  o.cache_dir = (cc.dir / "cache").string();
  o.run_performance = false;
  Evaluator ev(problem(), o);
  try {
    ev.evaluate(kDir + "ok.cpp", {}, "");
    FAIL() << "a baseline compile that failed on a full disk was no error";
  } catch (const InfraError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("the disk is full (No space left on device)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not charged to the baseline"), std::string::npos) << msg;
    EXPECT_NE(msg.find("final link failed: No space left on device"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("does not compile"), std::string::npos) << msg;
  } catch (const UsageError& e) {
    FAIL() << "charged to the baseline: " << e.what();
  }
}

TEST(EvaluatorSetup, ACandidateCompileOnAFullDiskKeepsTheDisksWords) {
  // The baseline compiles; the candidate (marked) meets the full disk.
  FullDiskCompiler cc(/*only_marked=*/true);
  std::ofstream(cc.dir / "cand.cpp") << std::ifstream(kDir + "ok.cpp").rdbuf() << "\n// full-disk-here\n";
  EvalOptions o = options();
  o.cache_dir = (cc.dir / "cache").string();
  o.run_performance = false;
  Evaluator ev(problem(), o);
  CandidateVerdict v = ev.evaluate((cc.dir / "cand.cpp").string(), {}, "");
  ASSERT_EQ(v.failed_gate, Gate::kStatic);
  const std::string why = v.gates.front().reason;
  EXPECT_NE(why.find("collect2: error"), std::string::npos) << why;
  EXPECT_NE(why.find("final link failed: No space left on device"), std::string::npos) << why;
}

TEST(EvaluatorSetup, UnknownOpIsAUsageError) {
  config::NativeProblem p = problem();
  p.op = "no_such_op";
  EXPECT_THROW(Evaluator(p, options()), UsageError);
}

TEST(EvaluatorSetup, MissingRunnerIsAnInfraError) {
  EvalOptions o = options();
  o.native_bin = "/nonexistent/kgate-native";
  EXPECT_THROW(Evaluator(problem(), o), InfraError);
}

// A worker of shell: every request line appended to DIR/requests.log, `hello` answered as
// a CUDA device of 1 GiB named `device`, `shutdown` ends it, the ops in `cases` (shell case
// arms, $line and $id and the directory $d at hand) as they say, any other with an empty
// result. Returns the script's path.
fs::path fake_cuda_worker(const fs::path& dir, const std::string& device, const std::string& cases) {
  const fs::path script = dir / "fake_cuda_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nd=$(dirname \"$0\")\n" << R"SH(while IFS= read -r line; do
  printf '%s\n' "$line" >> "$d/requests.log"
  id=$(printf '%s' "$line" | grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
  op=$(printf '%s' "$line" | grep -o '"op":"[a-z_]*"' | head -1 | cut -d'"' -f4)
  case "$op" in
    hello) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"runner\":\"fake\",\"version\":\"0\",\"protocol\":1,\"backend\":\"cuda\",\"device\":{\"name\":\")SH"
                        << device << R"SH(\",\"cc\":\"9.0\",\"memory_bytes\":1073741824}}}" ;;)SH"
                        << cases << R"SH(
    shutdown) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{}}"; exit 0 ;;
    *) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{}}" ;;
  esac
done
)SH";
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

// A CUDA worker reporting a 1 GiB device: a native bench shape of 3 GiB (inputs and two
// outputs) is refused at bench's line before the problem is loaded, naming the device; a
// shape that fits is loaded. (`kgate bench` has no GPU target file to plan against.)
TEST(EvaluatorSetup, ABenchShapePastTheDevicesMemoryIsRefusedBeforeTheLoad) {
  const fs::path dir = fs::temp_directory_path() / ("kgate_eval_gpu_mem_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A CUDA worker with a 1 GiB device that answers every other request with an empty result.
  const fs::path script = fake_cuda_worker(dir, "Fake GPU 1G", "");
  EvalOptions o = options();
  o.backend = "cuda";
  o.writable = {dir.string()};  // its requests.log
  o.native_bin = script.string();
  config::NativeProblem p = problem();
  p.bench_loc = config::SourceLoc{"problem.yaml", 4, 8};
  p.bench = {{"R", 1 << 16}, {"C", 1 << 12}};  // 2^28 f32: 1 GiB each of x, y and y'
  try {
    Evaluator ev(p, o);
    ADD_FAILURE() << "a 3 GiB bench shape was loaded on a 1 GiB device";
  } catch (const UsageError& e) {
    const std::string why = e.what();
    EXPECT_EQ(why.rfind("problem.yaml:4:8: error: 'bench' needs 3.0 GiB of GPU memory", 0), 0u) << why;
    EXPECT_NE(why.find("more than the 1.0 GiB of this GPU (Fake GPU 1G, as its worker reports it)"),
              std::string::npos) << why;
  }
  p.bench = {{"R", 1 << 10}, {"C", 1 << 12}};  // 48 MiB
  Evaluator fits(p, o);
  EXPECT_EQ(fits.device().name, "Fake GPU 1G");
  fs::remove_all(dir);
}

// KGATE_PYTHON pointed at a fake worker script (no spare started ahead) while it lives.
struct FakePython {
  explicit FakePython(const fs::path& script) {
    if (const char* old = std::getenv("KGATE_PYTHON")) saved = old;
    ::setenv("KGATE_PYTHON", script.c_str(), 1);
    ::setenv("KGATE_WORKER_SPARE", "0", 1);
  }
  ~FakePython() {
    if (saved.empty()) ::unsetenv("KGATE_PYTHON");
    else ::setenv("KGATE_PYTHON", saved.c_str(), 1);
    ::unsetenv("KGATE_WORKER_SPARE");
  }
  FakePython(const FakePython&) = delete;
  FakePython& operator=(const FakePython&) = delete;
  std::string saved;
};

// A KernelBench problem (eager baseline, cuda) served by a fake Python worker answering
// `cases` (fake_cuda_worker): its directory, with problem.py, candidate.py and the
// worker's requests.log, removed at the end.
struct FakeKernelbench {
  FakeKernelbench(const std::string& name, const std::string& cases)
      : dir(make_dir(name)), fake(fake_cuda_worker(dir, "Fake GPU", cases)),
        problem(config::kernelbench_problem("k0", (dir / "problem.py").string(), "eager")) {
    std::ofstream(dir / "problem.py") << "# a problem the fake worker never reads\n";
    std::ofstream(dir / "candidate.py") << "# a candidate the fake worker never reads\n";
    opt.backend = "cuda";
    opt.writable = {dir.string()};
  }
  ~FakeKernelbench() { fs::remove_all(dir); }
  static fs::path make_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("kgate_eval_" + name + "_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }
  std::string candidate() const { return (dir / "candidate.py").string(); }
  // The load_problem requests the worker saw, in order.
  std::vector<std::string> loads() const {
    std::ifstream log(dir / "requests.log");
    std::vector<std::string> out;
    for (std::string line; std::getline(log, line);)
      if (line.find("\"op\":\"load_problem\"") != std::string::npos) out.push_back(line);
    return out;
  }
  fs::path dir;
  FakePython fake;
  config::NativeProblem problem;
  EvalOptions opt = options();
};

// A compiled-mode problem (dir/problem.py, torch.compile's default model) and options for
// a fake CUDA worker writing beneath dir, with the kernel-level screen on.
config::NativeProblem compiled_problem(const fs::path& dir) {
  std::ofstream(dir / "problem.py") << "# a problem the fake worker never reads\n";
  config::NativeProblem p = config::kernelbench_problem("k0", (dir / "problem.py").string(), "compile");
  p.kernelbench_mode = "compiled";
  return p;
}
EvalOptions screened_cuda(const fs::path& dir) {
  EvalOptions o = options();
  o.backend = "cuda";
  o.writable = {dir.string()};
  o.screen_slack = 0.05;
  return o;
}

// Compiled mode's kernel-level screen, through a fake Python worker (KGATE_PYTHON): the
// candidate's compile asks for a screen (the baseline's does not); an edited kernel timed
// over the slack is reverted as a slowdown before any check, the model-level gates listed
// as not run; one within the slack goes on to the checks (which this worker fails).
TEST(EvaluatorSetup, TheKernelScreenRevertsASlowKernelBeforeTheModelLevelGates) {
  const fs::path dir = fs::temp_directory_path() / ("kgate_eval_screen_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A compiled-mode worker: compiles succeed; the candidate's screen answers the time in
  // the file cand_us; checks fail. Each request line is appended to requests.log.
  const fs::path script = fake_cuda_worker(dir, "Fake GPU", R"SH(
    compile)
      if printf '%s' "$line" | grep -q '"screen":true'; then
        echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"compiled\":true,\"screen\":{\"kernel\":\"triton_poi_k_0\",\"against\":\"inductor\",\"best_us\":100.0,\"candidate_us\":$(cat "$d/cand_us"),\"samples\":10}}}"
      else
        echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"compiled\":true}}"
      fi ;;
    check) echo "{\"v\":1,\"id\":$id,\"ok\":false,\"error\":{\"kind\":\"internal\",\"message\":\"fake: no checks here\"}}" ;;)SH");
  std::ofstream(dir / "triton_poi_k_0.py") << "# kgate:kernel triton_poi_k_0\n";
  const FakePython fake(script);
  const config::NativeProblem p = compiled_problem(dir);
  const EvalOptions o = screened_cuda(dir);
  {
    Evaluator ev(p, o);
    std::ofstream(dir / "cand_us") << "112.0";
    CandidateVerdict v = ev.evaluate((dir / "triton_poi_k_0.py").string(), {}, "");
    EXPECT_FALSE(v.passed);
    ASSERT_TRUE(v.failed_gate.has_value());
    EXPECT_EQ(*v.failed_gate, Gate::kPerformance);
    const std::string why = reason(v);
    EXPECT_NE(why.find("screen triton_poi_k_0: slower than the baseline: kernel triton_poi_k_0 112 us vs 100 us "
                       "(Inductor's kernel): 1.12x its time"),
              std::string::npos) << why;
    EXPECT_TRUE(is_slowdown(gate(v, Gate::kPerformance)));
    EXPECT_EQ(gate(v, Gate::kCorrectness).reason, "not run: the performance gate failed");
    ASSERT_EQ(v.gates.size(), 4u);  // in the gates' order
    EXPECT_EQ(v.gates[1].gate, Gate::kCorrectness);
    EXPECT_EQ(v.gates[3].gate, Gate::kPerformance);
    std::ifstream log(dir / "requests.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("\"op\":\"check\""), std::string::npos) << "a screened candidate was checked";
    std::istringstream lines(text);
    int screened = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.find("\"op\":\"compile\"") == std::string::npos) continue;
      const bool asked = line.find("\"screen\":true") != std::string::npos;
      EXPECT_EQ(asked, line.find("\"slot\":\"candidate\"") != std::string::npos) << line;
      screened += asked;
    }
    EXPECT_EQ(screened, 1);

    std::ofstream(dir / "cand_us") << "104.0";  // within the slack: the checks run
    v = ev.evaluate((dir / "triton_poi_k_0.py").string(), {}, "");
    ASSERT_TRUE(v.failed_gate.has_value());
    EXPECT_EQ(*v.failed_gate, Gate::kCorrectness) << reason(v);
  }
  fs::remove_all(dir);
}

// A pair experiment (set_partners): the partner's file may change with the candidate's
// (the workspace rule exempts it), the baseline's compile pins the partner's kept copy,
// and a rewritten partner turns the kernel-level screen off. Without the pair the same
// change of the partner's file fails the static gate.
TEST(EvaluatorSetup, APairPartnerMayChangeAndTheBaselineRunsItAsKept) {
  const fs::path dir = fs::temp_directory_path() / ("kgate_eval_pair_" + std::to_string(::getpid()));
  const fs::path ws = dir / "ws", best = dir / "best";
  fs::create_directories(ws / "kernels");
  fs::create_directories(best);
  const fs::path script = fake_cuda_worker(dir, "Fake GPU", R"SH(
    compile) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"compiled\":true}}" ;;
    check) echo "{\"v\":1,\"id\":$id,\"ok\":false,\"error\":{\"kind\":\"internal\",\"message\":\"fake: no checks here\"}}" ;;)SH");
  const fs::path cand = ws / "kernels" / "triton_poi_apply_1.py", partner = ws / "kernels" / "triton_per_stats_0.py";
  std::ofstream(cand) << "# kgate:kernel triton_poi_apply_1\n";
  std::ofstream(partner) << "# kgate:kernel triton_per_stats_0\n";
  fs::copy_file(cand, best / "triton_poi_apply_1.py");
  fs::copy_file(partner, best / "triton_per_stats_0.py");
  const FakePython fake(script);
  const config::NativeProblem p = compiled_problem(dir);
  EvalOptions o = screened_cuda(dir);
  o.workspace = ws.string();
  auto compiles = [&] {
    std::ifstream log(dir / "requests.log");
    std::vector<std::string> out;
    for (std::string line; std::getline(log, line);)
      if (line.find("\"op\":\"compile\"") != std::string::npos) out.push_back(line);
    return out;
  };
  {
    Evaluator ev(p, o);
    ev.set_partners(cand.string(), {{partner.string(), (best / "triton_per_stats_0.py").string()}});
    std::ofstream(cand, std::ios::app) << "FUSED = 1\n";
    CandidateVerdict v = ev.evaluate(cand.string(), {}, (best / "triton_poi_apply_1.py").string());
    EXPECT_EQ(gate(v, Gate::kStatic).status, GateStatus::kPass) << reason(v);
    std::ofstream(partner, std::ios::app) << "NOOP = 1\n";  // the experiment rewrites its partner
    v = ev.evaluate(cand.string(), {}, (best / "triton_poi_apply_1.py").string());
    EXPECT_EQ(gate(v, Gate::kStatic).status, GateStatus::kPass) << reason(v);
    const auto c = compiles();
    ASSERT_EQ(c.size(), 3u);  // the baseline once, the candidate twice
    EXPECT_NE(c[0].find("\"slot\":\"baseline\""), std::string::npos) << c[0];
    EXPECT_NE(c[0].find("\"pins\":[\"" + (best / "triton_per_stats_0.py").string() + "\"]"), std::string::npos) << c[0];
    EXPECT_NE(c[1].find("\"screen\":true"), std::string::npos) << "the partner as kept: screened: " << c[1];
    EXPECT_NE(c[2].find("\"screen\":false"), std::string::npos) << "the partner rewritten: not screened: " << c[2];
  }
  fs::copy_file(best / "triton_per_stats_0.py", partner, fs::copy_options::overwrite_existing);
  {
    Evaluator ev(p, o);  // no pair
    CandidateVerdict v = ev.evaluate(cand.string(), {}, (best / "triton_poi_apply_1.py").string());
    EXPECT_EQ(gate(v, Gate::kStatic).status, GateStatus::kPass) << reason(v);
    std::ofstream(partner, std::ios::app) << "NOOP = 1\n";
    v = ev.evaluate(cand.string(), {}, (best / "triton_poi_apply_1.py").string());
    EXPECT_EQ(gate(v, Gate::kStatic).status, GateStatus::kFail);
    EXPECT_NE(reason(v).find("files other than the candidate changed in the workspace: kernels/triton_per_stats_0.py "
                             "(modified)"),
              std::string::npos)
        << reason(v);
  }
  fs::remove_all(dir);
}

// A KernelBench problem whose every case the worker cannot judge (a GPU-sized case whose
// float64 truth fits nowhere): the correctness gate is an error of kgate's reach (status
// error, fault cannot_judge), never a failure of the candidate; a run's result with it is
// an infrastructure error (exit 3), not a gate failure (exit 1).
TEST(EvaluatorSetup, ACaseNoneOfWhichCouldBeJudgedIsKgatesErrorNotTheCandidates) {
  const FakeKernelbench kb("unjudged", R"SH(
    compile) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"compiled\":true}}" ;;
    check)
      cases=$(printf '%s' "$line" | grep -o '"case_id":"[^"]*"' | sed 's/^/{/; s/$/,"cannot_judge":"the float64 truth needs ~9.0 GiB and the host has 1.0 GiB available","outputs":[]}/' | paste -sd, -)
      echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"cases\":[$cases]}}" ;;)SH");
  {
    Evaluator ev(kb.problem, kb.opt);
    CandidateVerdict v = ev.evaluate(kb.candidate(), {}, "");
    EXPECT_FALSE(v.passed);
    ASSERT_TRUE(v.failed_gate.has_value());
    EXPECT_EQ(*v.failed_gate, Gate::kCorrectness);
    const GateResult& g = gate(v, Gate::kCorrectness);
    EXPECT_EQ(g.status, GateStatus::kError);
    EXPECT_EQ(g.fault, Fault::kCannotJudge);
    EXPECT_EQ(g.reason.rfind("cannot judge: no case could be checked (", 0), 0u) << g.reason;
    EXPECT_NE(g.reason.find("the float64 truth needs ~9.0 GiB"), std::string::npos) << g.reason;
    EXPECT_TRUE(not_judged(v.gates));
    EXPECT_EQ(gate(v, Gate::kPerformance).status, GateStatus::kSkipped);
  }
}

// An evaluator made for its re-measures alone (the run's references phase): its own worker,
// which has run nothing since its load, serves the first fresh re-measure instead of a
// second worker loading the problem again; a later one gets a new worker.
TEST(EvaluatorSetup, AnUnusedEvaluatorsWorkerServesItsFirstFreshReMeasure) {
  const FakeKernelbench kb("lend", R"SH(
    compile) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"compiled\":true}}" ;;
    time) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"samples_us\":{\"baseline\":[10,10,10,10,10,10,10,10,10,10],\"candidate\":[5,5,5,5,5,5,5,5,5,5]},\"timer\":\"cuda_event\"}}" ;;)SH");
  {
    Evaluator ev(kb.problem, kb.opt);
    EXPECT_EQ(kb.loads().size(), 1u);
    Timing t = ev.remeasure(kb.candidate(), {}, "");
    EXPECT_NEAR(t.speedup, 2.0, 1e-9);
    EXPECT_EQ(kb.loads().size(), 1u) << "the evaluator's unused worker was not the fresh one: the problem loaded twice";
    ev.remeasure(kb.candidate(), {}, "");
    EXPECT_EQ(kb.loads().size(), 2u) << "a second fresh re-measure must get a worker of its own";
    // Only that worker, which only times, defers its float64 truth.
    std::vector<bool> deferred;
    for (const auto& line : kb.loads()) deferred.push_back(line.find("\"defer_truth\":true") != std::string::npos);
    EXPECT_EQ(deferred, (std::vector<bool>{false, true}));
  }
}

}  // namespace
// A problem file the worker cannot load (a syntax error) is refused at the file's own line,
// the worker's words after it; a rejection without a line keeps the problem's location.
TEST(EvaluatorSetup, AProblemFileTheWorkerRejectsIsLocatedAtTheLineItNames) {
  const fs::path dir = FakeKernelbench::make_dir("rejected");
  const std::string path = (dir / "problem.py").string();
  for (const auto& [said, want] : std::vector<std::pair<std::string, std::string>>{
           {path + ":2: SyntaxError: expected ':'",
            path + ":2: error: problem k0 rejected by the worker: SyntaxError: expected ':'"},
           {"no class Model in the file", path + ":1:1: error: problem k0 rejected by the worker: no class Model in the file"}}) {
    const FakeKernelbench kb("rejected", "\n    load_problem) echo \"{\\\"v\\\":1,\\\"id\\\":$id,\\\"ok\\\":false,"
                                         "\\\"error\\\":{\\\"kind\\\":\\\"bad_request\\\",\\\"message\\\":\\\"" +
                                             said + "\\\"}}\" ;;");
    try {
      Evaluator ev(kb.problem, kb.opt);
      ADD_FAILURE() << "a rejected problem was loaded";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), want);
    }
  }
  fs::remove_all(dir);
}

}  // namespace kgate::gates

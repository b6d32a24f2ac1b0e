#include "worker/worker.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <optional>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/subprocess.h"

namespace kgate::worker {
namespace {

namespace fs = std::filesystem;
using gates::Fault;
using protocol::Json;

// A fake worker speaking protocol v1 in bash. Faults are one-shot (a marker file in
// $FAKE_DIR), so the restarted worker behaves: that is what recovery is tested against.
// Every op received is appended to $FAKE_DIR/ops.log, with the worker's pid.
constexpr const char* kFakeWorker = R"SH(#!/bin/bash
once() { [ -e "$FAKE_DIR/done_$1" ] && return 1; : > "$FAKE_DIR/done_$1"; return 0; }
echo "fake worker $$ up" >&2
echo "$$" >> "$FAKE_DIR/starts.log"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  # kgate writes keys sorted, so the envelope's "op" precedes any nested one.
  op=$(printf '%s' "$line" | grep -o '"op":"[a-z_]*"' | head -1 | cut -d'"' -f4)
  slot=$(printf '%s' "$line" | sed -n 's/.*"slot":"\([a-z_]*\)".*/\1/p')
  echo "$$ $op $slot" >> "$FAKE_DIR/ops.log"
  if [ "$op" = "$FAKE_HANG_OP" ] && once hang; then
    sleep 1000 &
    echo $! > "$FAKE_DIR/grandchild.pid"
    wait
  fi
  if [ "$op" = "$FAKE_CRASH_OP" ] && once crash; then
    echo "fake: about to crash in $op" >&2
    kill -SEGV $$
  fi
  if [ "$op" = "$FAKE_KILL_OP" ] && once kill; then
    # What a worker runs in its group (a compiler) when it is killed.
    if [ -n "$FAKE_KILL_CHILD" ]; then sleep 1000 & echo $! > "$FAKE_DIR/child.pid"; fi
    kill -KILL $$
  fi
  if [ "$op" = "$FAKE_KILL_ALWAYS_OP" ]; then
    # The OOM killer's count (the spec's vmstat file) rises as it kills.
    if [ -n "$FAKE_OOM_VMSTAT" ]; then
      n=$(awk '$1 == "oom_kill" {print $2}' "$FAKE_OOM_VMSTAT")
      printf 'pgfault 12\noom_kill %d\n' $((n + 1)) > "$FAKE_OOM_VMSTAT"
    fi
    kill -KILL $$
  fi
  if [ "$op" = "$FAKE_EXIT_OP" ] && once exit; then
    echo "fake: exit 7" >&2
    exit 7
  fi
  if [ "$op" = "$FAKE_GARBAGE_OP" ] && once garbage; then
    echo "this is not json"
    continue
  fi
  if [ "$op" = "$FAKE_WRONGID_OP" ] && once wrongid; then
    echo "{\"v\":1,\"id\":999999,\"ok\":true,\"result\":{}}"
    continue
  fi
  if [ "$op" = "$FAKE_FLOOD_OP" ] && once flood; then
    # 1 MiB of stderr before answering: more than any pipe buffer.
    head -c 1048576 /dev/zero | tr '\0' 'e' >&2
    echo >&2
    echo "flood done" >&2
  fi
  if [ "$op" = "$FAKE_ERROR_OP" ]; then
    echo "{\"v\":1,\"id\":$id,\"ok\":false,\"error\":{\"kind\":\"unsupported\",\"message\":\"no cuda here\"}}"
    continue
  fi
  case "$op" in
    shutdown) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{}}"; exit 0 ;;
    compile) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"compiled\":${FAKE_COMPILED:-true},\"log\":\"\",\"pid\":$$}}" ;;
    *) echo "{\"v\":1,\"id\":$id,\"ok\":true,\"result\":{\"op\":\"$op\",\"pid\":$$}}" ;;
  esac
  if [ "$op" = "$FAKE_EXIT_AFTER_OP" ] && once exit_after; then exit 0; fi
  # Answered, then a slow teardown and exit 3: a runner after a sticky CUDA fault.
  if [ "$op" = "$FAKE_FAULT_EXIT_AFTER_OP" ] && once fault_exit; then sleep 0.3; exit 3; fi
done
)SH";

class WorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kgate_worker_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    script_ = (dir_ / "fake_worker.sh").string();
    std::ofstream(script_) << kFakeWorker;
    fs::permissions(script_, fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  WorkerSpec spec(std::map<std::string, std::string> env = {}) {
    WorkerSpec s;
    s.argv = {script_};
    s.env = std::move(env);
    s.env["FAKE_DIR"] = dir_.string();
    s.shutdown_grace_s = 1;
    return s;
  }
  std::vector<std::string> ops_log() {
    std::ifstream in(dir_ / "ops.log");
    std::vector<std::string> out;
    std::string pid, op, slot, line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      ls >> pid >> op >> slot;
      out.push_back(op + (slot.empty() ? "" : ":" + slot));
      slot.clear();
    }
    return out;
  }

  // The hang's `sleep 1000` (its pid in grandchild.pid) is gone, or a zombie waiting for
  // a reaper that is not us.
  void expect_grandchild_gone(const char* after) {
    std::ifstream gp(dir_ / "grandchild.pid");
    pid_t grandchild = 0;
    gp >> grandchild;
    ASSERT_GT(grandchild, 0);
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
      std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
      std::string s;
      std::getline(stat, s);
      gone = s.empty() || s.find(") Z") != std::string::npos;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived " << after;
  }

  fs::path dir_;
  std::string script_;
};

TEST_F(WorkerTest, AnswersInOrderAndRecordsNothingExtra) {
  Worker w(spec());
  Reply r = w.call("hello", Json{{"backend", "host"}}, 10);
  ASSERT_TRUE(r.good()) << r.describe() << "\n" << r.stderr_tail;
  EXPECT_EQ(r.result["op"], "hello");
  EXPECT_FALSE(r.restarted);
  r = w.call("check", Json{{"slot", "candidate"}}, 10);
  ASSERT_TRUE(r.good()) << r.describe();
  EXPECT_EQ(r.result["op"], "check");
  EXPECT_EQ(w.starts(), 1);
  EXPECT_NE(w.stderr_tail(), "");
}

TEST_F(WorkerTest, ASpareStartedAheadServesTheNextWorkerOfItsSpec) {
  auto starts = [&] {
    std::ifstream in(dir_ / "starts.log");
    std::vector<pid_t> out;
    for (pid_t p; in >> p;) out.push_back(p);
    return out;
  };
  auto alive = [](pid_t p) { return p > 0 && ::kill(p, 0) == 0; };
  WorkerSpec s = spec();
  s.keep_spare = true;
  Worker w1(s);
  Reply r = w1.call("hello", Json::object(), 10);
  ASSERT_TRUE(r.good()) << r.describe();
  for (int i = 0; i < 200 && starts().size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::vector<pid_t> st = starts();
  ASSERT_EQ(st.size(), 2u);  // the worker and, started with it, the spare
  // The two start at once and may log in either order.
  const pid_t first = r.result["pid"].get<pid_t>();
  ASSERT_TRUE(first == st[0] || first == st[1]) << first;
  const pid_t spare = first == st[0] ? st[1] : st[0];

  Worker w2(s);  // the next worker of the spec: the spare, already running
  r = w2.call("hello", Json::object(), 10);
  ASSERT_TRUE(r.good()) << r.describe();
  EXPECT_EQ(r.result["pid"], spare);
  EXPECT_EQ(w2.starts(), 1);

  WorkerSpec other = spec({{"FAKE_OTHER", "1"}});
  other.keep_spare = true;
  for (int i = 0; i < 200 && starts().size() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const pid_t waiting = starts().back();
  Worker w3(other);  // another environment: a fresh process, the old spare killed
  r = w3.call("hello", Json::object(), 10);
  ASSERT_TRUE(r.good()) << r.describe();
  EXPECT_NE(r.result["pid"], waiting);
  EXPECT_FALSE(alive(waiting));

  for (int i = 0; i < 200 && starts().size() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  st = starts();
  ASSERT_EQ(st.size(), 5u);
  // w3's worker and its spare start at once too: the spare is whichever is not w3's.
  const pid_t third = r.result["pid"].get<pid_t>();
  ASSERT_TRUE(third == st[3] || third == st[4]) << third;
  const pid_t last = third == st[3] ? st[4] : st[3];
  EXPECT_TRUE(alive(last));
  drop_spare();
  EXPECT_FALSE(alive(last));
}

TEST_F(WorkerTest, WorkerErrorIsAnAnswerNotAFault) {
  Worker w(spec({{"FAKE_ERROR_OP", "hello"}}));
  Reply r = w.call("hello", Json{{"backend", "cuda"}}, 10);
  EXPECT_EQ(r.fault, Fault::kNone);
  EXPECT_FALSE(r.ok);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, protocol::ErrorKind::kUnsupported);
  EXPECT_NE(r.describe().find("no cuda here"), std::string::npos);
}

TEST_F(WorkerTest, TimeoutKillsTheWholeGroupAndTheNextCallRecovers) {
  Worker w(spec({{"FAKE_HANG_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  ASSERT_TRUE(w.call("load_problem", Json{{"problem", {{"op", "softmax"}}}}, 10).good());
  ASSERT_TRUE(w.call("compile", Json{{"slot", "baseline"}}, 10).good());
  ASSERT_TRUE(w.call("compile", Json{{"slot", "candidate"}}, 10).good());
  pid_t first = w.pid();

  auto t0 = std::chrono::steady_clock::now();
  Reply r = w.call("check", Json{{"slot", "candidate"}}, 0.5);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.fault, Fault::kTimeout) << r.describe();
  EXPECT_NE(r.fault_message.find("within 0.5 s"), std::string::npos) << r.fault_message;
  EXPECT_LT(waited, 20.0);  // bounded by the deadline, not by the hang
  EXPECT_FALSE(w.running());
  EXPECT_NE(::kill(first, 0), 0);  // reaped: no such process

  // The grandchild (`sleep 1000`) was in the worker's process group: killed too.
  expect_grandchild_gone("the group kill");

  // Next call: a fresh worker with the setup replayed in order, then the call itself.
  r = w.call("check", Json{{"slot", "candidate"}}, 10);
  ASSERT_TRUE(r.good()) << r.describe();
  EXPECT_TRUE(r.restarted);
  EXPECT_EQ(w.starts(), 2);
  EXPECT_NE(r.result["pid"].get<int>(), first);
  std::vector<std::string> want = {"hello",   "load_problem", "compile:baseline",
                                   "compile:candidate", "check:candidate",
                                   "hello",   "load_problem", "compile:baseline",
                                   "compile:candidate", "check:candidate"};
  EXPECT_EQ(ops_log(), want);
}

// kgate run's SIGTERM (a CI job's timeout) sets the stop flag: a call in flight (a
// max-autotune compile can take a minute) is abandoned at once -- the worker's group
// killed, Interrupted thrown, no fault charged to anything -- and a later call is refused
// the same way, before a worker starts, and the destructor does not wait on a shutdown.
TEST_F(WorkerTest, AStopAbandonsTheCallInFlightAndKillsTheGroup) {
  std::atomic<bool> stop{false};
  WorkerSpec s = spec({{"FAKE_HANG_OP", "check"}});
  s.interrupted = &stop;
  auto w = std::make_unique<Worker>(s);
  ASSERT_TRUE(w->call("hello", Json::object(), 10).good());
  const pid_t first = w->pid();
  std::thread signal_later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.store(true);
  });
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(w->call("check", Json{{"slot", "candidate"}}, 60), Interrupted);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  signal_later.join();
  EXPECT_LT(waited, 10.0);  // the stop, not the 60 s deadline nor the hang
  EXPECT_FALSE(w->running());
  EXPECT_NE(::kill(first, 0), 0);
  expect_grandchild_gone("the stop");
  EXPECT_THROW(w->call("hello", Json::object(), 10), Interrupted);
  EXPECT_EQ(w->starts(), 1);  // refused before a fresh worker started
  t0 = std::chrono::steady_clock::now();
  w.reset();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

TEST_F(WorkerTest, CrashReportsSignalAndStderrTail) {
  Worker w(spec({{"FAKE_CRASH_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("check", Json{{"slot", "candidate"}}, 10);
  EXPECT_EQ(r.fault, Fault::kCrash) << r.describe();
  EXPECT_NE(r.fault_message.find("signal 11 (SIGSEGV)"), std::string::npos) << r.fault_message;
  EXPECT_NE(r.stderr_tail.find("about to crash in check"), std::string::npos) << r.stderr_tail;
  EXPECT_FALSE(w.running());
  r = w.call("check", Json{{"slot", "candidate"}}, 10);
  EXPECT_TRUE(r.good()) << r.describe();
  EXPECT_TRUE(r.restarted);
}

// SIGKILL from outside (the OOM killer, a kill -9) is no verdict: the request runs once
// more in a fresh worker; only the same death again is the request's.
TEST_F(WorkerTest, AnOutsideSigkillIsRetriedOnceInAFreshWorker) {
  Worker w(spec({{"FAKE_KILL_OP", "time"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  ASSERT_TRUE(w.call("compile", Json{{"slot", "candidate"}}, 10).good());
  Reply r = w.call("time", Json::object(), 10);
  EXPECT_TRUE(r.good()) << r.describe();
  EXPECT_TRUE(r.restarted);
  std::vector<std::string> want = {"hello", "compile:candidate", "time", "hello", "compile:candidate", "time"};
  EXPECT_EQ(ops_log(), want);

  Worker again(spec({{"FAKE_KILL_ALWAYS_OP", "check"}}));
  ASSERT_TRUE(again.call("hello", Json::object(), 10).good());
  r = again.call("check", Json::object(), 10);
  EXPECT_EQ(r.fault, Fault::kCrash) << r.describe();
  EXPECT_NE(r.fault_message.find("SIGKILL"), std::string::npos) << r.fault_message;
  EXPECT_NE(r.fault_message.find("a kill -9, not the OOM killer), again in a fresh worker: charged"),
            std::string::npos)
      << r.fault_message;
}

// A worker the OOM killer ended is said to be out of memory, not "a kill -9 or the OOM
// killer": the OOM killer's count (/proc/vmstat's oom_kill, here a file of the test's)
// rose while the request ran.
TEST_F(WorkerTest, AWorkerTheOomKillerEndedIsReportedOutOfMemory) {
  const fs::path vmstat = dir_ / "vmstat";
  { std::ofstream(vmstat) << "pgfault 11\noom_kill 4\n"; }
  WorkerSpec s = spec({{"FAKE_KILL_ALWAYS_OP", "load_problem"}, {"FAKE_OOM_VMSTAT", vmstat.string()}});
  s.vmstat = vmstat.string();
  Worker w(s);
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("load_problem", Json::object(), 10);
  EXPECT_EQ(r.fault, Fault::kCrash) << r.describe();
  EXPECT_NE(r.fault_message.find("killed by the kernel's OOM killer: this machine ran out of memory"),
            std::string::npos)
      << r.fault_message;
  EXPECT_NE(r.fault_message.find("again in a fresh worker: charged to this request"), std::string::npos)
      << r.fault_message;
  EXPECT_EQ(core::oom_kill_count(vmstat.string()), 6);  // killed twice: the retry too
}

// A worker killed from outside in the middle of `compile` leaves its group's processes
// (a compiler) orphaned to kgate: they die with the worker and are reaped as its own, not
// reported as processes that left the group of the fresh worker the retry runs in.
TEST_F(WorkerTest, AnOutsideSigkillMidCompileChargesItsOrphansToNobody) {
  core::adopt_orphans();
  WorkerSpec s = spec({{"FAKE_KILL_OP", "compile"}, {"FAKE_KILL_CHILD", "1"}});
  s.sandbox.enabled = true;  // turns the stray check on; the fake itself is not confined
  Worker w(s);
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("compile", Json{{"slot", "candidate"}}, 10);
  EXPECT_TRUE(r.good()) << r.describe();
  EXPECT_TRUE(r.restarted);
  pid_t child = 0;
  std::ifstream(dir_ / "child.pid") >> child;
  ASSERT_GT(child, 0);
  EXPECT_NE(::kill(child, 0), 0) << "the killed worker's child " << child << " outlived it";
  EXPECT_TRUE(w.call("check", Json{{"slot", "candidate"}}, 10).good());
}

// The named variables as they were, put back when the test ends (also when it fails).
class EnvRestore {
 public:
  explicit EnvRestore(std::initializer_list<const char*> names) {
    for (const char* n : names) {
      const char* v = std::getenv(n);
      saved_.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  ~EnvRestore() {
    for (const auto& [name, v] : saved_) {
      if (v) ::setenv(name.c_str(), v->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Only the worker itself may initialise CUDA behind the file wall (its own /proc/<pid>):
// Inductor compiles in the worker, not in subprocesses, unless the user said otherwise.
TEST(SandboxWorker, InductorCompilesInTheWorkerBehindTheFileWall) {
  EnvRestore restore{"KGATE_SANDBOX"};
  ::setenv("KGATE_SANDBOX", "on", 1);
  WorkerSpec w;
  sandbox_worker(w, {"/tmp/kgate-sandbox-worker-test"});
  EXPECT_TRUE(w.sandbox.enabled);
  EXPECT_EQ(w.env["TORCHINDUCTOR_COMPILE_THREADS"], "1");
  EXPECT_NE(std::find(w.sandbox.writable.begin(), w.sandbox.writable.end(), "/dev"), w.sandbox.writable.end());
  WorkerSpec mine;
  mine.env["TORCHINDUCTOR_COMPILE_THREADS"] = "8";
  sandbox_worker(mine, {});
  EXPECT_EQ(mine.env["TORCHINDUCTOR_COMPILE_THREADS"], "8");
  ::setenv("KGATE_SANDBOX", "off", 1);
  WorkerSpec off;
  sandbox_worker(off, {});
  EXPECT_FALSE(off.sandbox.enabled);
  EXPECT_EQ(off.env.count("TORCHINDUCTOR_COMPILE_THREADS"), 0u);
}

// kgate-native seals its compile cache at its first load only when kgate asks
// (KGATE_WORKER_SEAL=1): in a sandboxed native worker; the Python worker is asked by
// seal_python_worker (below), never by sandbox_worker; never with the sandbox off.
TEST(SandboxWorker, OnlyASandboxedNativeWorkerIsAskedToSealItsCache) {
  EnvRestore restore{"KGATE_SANDBOX"};
  const std::string bin = KGATE_DEFAULT_NATIVE_BIN;
  ::setenv("KGATE_SANDBOX", "on", 1);
  WorkerSpec native = native_worker_spec("host", {}, bin);
  EXPECT_EQ(native.env["KGATE_WORKER_SEAL"], "1");
  WorkerSpec python;
  sandbox_worker(python, {});
  EXPECT_EQ(python.env.count("KGATE_WORKER_SEAL"), 0u);
  ::setenv("KGATE_SANDBOX", "off", 1);
  EXPECT_EQ(native_worker_spec("host", {}, bin).env.count("KGATE_WORKER_SEAL"), 0u);
}

// KGATE_SANDBOX_GPU_MEMORY_MB: the cap a sandboxed worker is told of (the Python worker
// keeps it), said in the sandbox's line; no cap with the sandbox off; a value that is not a
// number of MiB is a usage error naming the variable.
TEST(SandboxWorker, TheDeviceMemoryCapIsPassedToASandboxedWorker) {
  EnvRestore restore{"KGATE_SANDBOX", "KGATE_SANDBOX_GPU_MEMORY_MB"};
  ::setenv("KGATE_SANDBOX", "on", 1);
  ::setenv("KGATE_SANDBOX_GPU_MEMORY_MB", "20480", 1);
  WorkerSpec capped;
  sandbox_worker(capped, {"/tmp/ws"});
  EXPECT_EQ(capped.env["KGATE_WORKER_GPU_MEMORY_MB"], "20480");
  EXPECT_EQ(capped.sandbox.max_gpu_memory, 20480ull << 20);
  EXPECT_NE(core::describe(capped.sandbox).find(", GPU memory 20480 MiB (Python worker)"), std::string::npos)
      << core::describe(capped.sandbox);
  ::setenv("KGATE_SANDBOX_GPU_MEMORY_MB", "0", 1);
  WorkerSpec none;
  sandbox_worker(none, {"/tmp/ws"});
  EXPECT_EQ(none.env.count("KGATE_WORKER_GPU_MEMORY_MB"), 0u);
  EXPECT_EQ(core::describe(none.sandbox).find("GPU memory"), std::string::npos);
  ::setenv("KGATE_SANDBOX_GPU_MEMORY_MB", "20G", 1);
  try {
    WorkerSpec bad;
    sandbox_worker(bad, {"/tmp/ws"});
    ADD_FAILURE() << "a cap of '20G' was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("KGATE_SANDBOX_GPU_MEMORY_MB=20G: expected a number of MiB"),
              std::string::npos)
        << e.what();
  }
  ::setenv("KGATE_SANDBOX", "off", 1);
  ::setenv("KGATE_SANDBOX_GPU_MEMORY_MB", "20480", 1);
  WorkerSpec off;
  sandbox_worker(off, {"/tmp/ws"});
  EXPECT_EQ(off.env.count("KGATE_WORKER_GPU_MEMORY_MB"), 0u);
}

// A sandboxed Python worker is asked to seal its caches before candidate code runs, keeping
// the folders it still writes (a compiled-mode workspace, the trace's); KGATE_WORKER_SEAL=0
// or no sandbox: not asked.

TEST(SandboxWorker, ASandboxedPythonWorkerIsAskedToSealKeepingItsFolders) {
  EnvRestore restore{"KGATE_SANDBOX", "KGATE_WORKER_SEAL"};
  ::setenv("KGATE_SANDBOX", "on", 1);
  ::unsetenv("KGATE_WORKER_SEAL");
  WorkerSpec python;
  sandbox_worker(python, {"/tmp/ws", "/tmp/cache"});
  seal_python_worker(python, {"/tmp/ws", "/tmp/trace"});
  EXPECT_EQ(python.env["KGATE_WORKER_SEAL"], "1");
  EXPECT_EQ(python.env["KGATE_WORKER_SEAL_KEEP"], "/tmp/ws:/tmp/trace");
  ::setenv("KGATE_WORKER_SEAL", "0", 1);
  WorkerSpec off;
  sandbox_worker(off, {"/tmp/ws"});
  seal_python_worker(off, {"/tmp/ws"});
  EXPECT_EQ(off.env["KGATE_WORKER_SEAL"], "0");
  ::setenv("KGATE_SANDBOX", "off", 1);
  ::unsetenv("KGATE_WORKER_SEAL");
  WorkerSpec bare;
  sandbox_worker(bare, {"/tmp/ws"});
  seal_python_worker(bare, {"/tmp/ws"});
  EXPECT_EQ(bare.env.count("KGATE_WORKER_SEAL"), 0u);
}

TEST_F(WorkerTest, ExitStatusIsReported) {
  Worker w(spec({{"FAKE_EXIT_OP", "time"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("time", Json::object(), 10);
  EXPECT_EQ(r.fault, Fault::kCrash);
  EXPECT_NE(r.fault_message.find("exited with status 7"), std::string::npos) << r.fault_message;
  EXPECT_NE(r.stderr_tail.find("fake: exit 7"), std::string::npos);
}

TEST_F(WorkerTest, GarbageLineIsAWorkerError) {
  Worker w(spec({{"FAKE_GARBAGE_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("check", Json::object(), 10);
  EXPECT_EQ(r.fault, Fault::kWorkerError);
  EXPECT_NE(r.fault_message.find("this is not json"), std::string::npos) << r.fault_message;
  EXPECT_FALSE(w.running());
  EXPECT_TRUE(w.call("check", Json::object(), 10).good());
}

TEST_F(WorkerTest, WrongIdIsAWorkerError) {
  Worker w(spec({{"FAKE_WRONGID_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("check", Json::object(), 10);
  EXPECT_EQ(r.fault, Fault::kWorkerError);
  EXPECT_NE(r.fault_message.find("id 999999"), std::string::npos) << r.fault_message;
  EXPECT_TRUE(w.call("check", Json::object(), 10).good());
}

TEST_F(WorkerTest, StderrFloodDoesNotBlockTheWorker) {
  WorkerSpec s = spec({{"FAKE_FLOOD_OP", "check"}});
  s.stderr_ring_bytes = 4096;
  Worker w(s);
  Reply r = w.call("check", Json::object(), 30);
  ASSERT_TRUE(r.good()) << r.describe();
  std::string tail = w.stderr_tail(1);
  EXPECT_EQ(tail, "flood done");
}

TEST_F(WorkerTest, WorkerThatExitsBetweenCallsIsRestartedSilently) {
  // Like a runner that answers, then exits after a sticky CUDA fault.
  Worker w(spec({{"FAKE_EXIT_AFTER_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  ASSERT_TRUE(w.call("check", Json::object(), 10).good());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Reply r = w.call("check", Json::object(), 10);
  EXPECT_TRUE(r.good()) << r.describe();
  EXPECT_TRUE(r.restarted);
  EXPECT_EQ(w.starts(), 2);
}

TEST_F(WorkerTest, RequestSentWhileTheWorkerExitsAfterADeviceFaultGoesToAFreshOne) {
  // The next request is written while the faulted worker is still tearing down: it is
  // never read, and must not be charged to the next candidate as a crash.
  Worker w(spec({{"FAKE_FAULT_EXIT_AFTER_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  ASSERT_TRUE(w.call("check", Json{{"slot", "candidate"}}, 10).good());
  Reply r = w.call("compile", Json{{"slot", "candidate"}}, 10);
  EXPECT_TRUE(r.good()) << r.describe();
  EXPECT_TRUE(r.restarted);
  EXPECT_EQ(w.starts(), 2);
  std::vector<std::string> want = {"hello", "check:candidate", "hello", "compile:candidate"};
  EXPECT_EQ(ops_log(), want);
}

TEST_F(WorkerTest, CrashOfAFailedCompileLeavesNoSlotAndNoException) {
  Worker w(spec({{"FAKE_CRASH_OP", "compile"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  Reply r = w.call("compile", Json{{"slot", "candidate"}}, 10);
  EXPECT_EQ(r.fault, Fault::kCrash);
  EXPECT_TRUE(w.call("check", Json{{"slot", "candidate"}}, 10).good());
  std::vector<std::string> want = {"hello", "compile:candidate", "hello", "check:candidate"};
  EXPECT_EQ(ops_log(), want);
}

TEST_F(WorkerTest, RecompiledSlotIsNotReplayedAndFailedCompileIsForgotten) {
  Worker w(spec({{"FAKE_CRASH_OP", "check"}}));
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  ASSERT_TRUE(w.call("compile", Json{{"slot", "baseline"}}, 10).good());
  ASSERT_TRUE(w.call("compile", Json{{"slot", "candidate"}}, 10).good());
  EXPECT_EQ(w.call("check", Json{{"slot", "candidate"}}, 10).fault, Fault::kCrash);
  // The new candidate's compile restarts the worker; the crashed candidate is not replayed.
  ASSERT_TRUE(w.call("compile", Json{{"slot", "candidate"}}, 10).good());
  std::vector<std::string> want = {"hello", "compile:baseline", "compile:candidate",
                                   "check:candidate", "hello", "compile:baseline",
                                   "compile:candidate"};
  EXPECT_EQ(ops_log(), want);
}

TEST_F(WorkerTest, StopShutsDownPolitelyAndLaterCallsRestart) {
  Worker w(spec());
  ASSERT_TRUE(w.call("hello", Json::object(), 10).good());
  w.stop();
  EXPECT_FALSE(w.running());
  ASSERT_TRUE(w.call("check", Json::object(), 10).good());
  std::vector<std::string> want = {"hello", "shutdown", "hello", "check"};
  EXPECT_EQ(ops_log(), want);
}

TEST_F(WorkerTest, MissingExecutableIsAnInfraError) {
  WorkerSpec s;
  s.argv = {(dir_ / "no_such_worker").string()};
  Worker w(s);
  EXPECT_THROW(w.call("hello", Json::object(), 5), InfraError);
}

TEST(LocateNativeBin, ExplicitPathMustBeExecutable) {
  EXPECT_THROW(locate_native_bin("/nonexistent/kgate-native"), InfraError);
  EXPECT_EQ(locate_native_bin("/bin/sh"), "/bin/sh");
}

}  // namespace
}  // namespace kgate::worker

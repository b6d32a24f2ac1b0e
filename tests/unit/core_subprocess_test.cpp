// core::spawn / core::run: kgate's one way to start a child (compilers, the command agent,
// the workers).
#include "core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::core {
namespace {

namespace fs = std::filesystem;

SpawnSpec capture(std::vector<std::string> argv) {
  SpawnSpec s;
  s.argv = std::move(argv);
  s.stdin_mode = SpawnSpec::Stdin::kNull;
  s.stdout_mode = SpawnSpec::Output::kPipe;
  s.stderr_mode = SpawnSpec::Output::kPipe;
  s.group = SpawnSpec::Group::kGroup;
  return s;
}

TEST(CoreSubprocess, CapturesStdoutStderrAndStatus) {
  RunResult r = run(capture({"sh", "-c", "echo out; echo err >&2; exit 3"}));
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_TRUE(r.status.exited());
  EXPECT_EQ(r.status.exit_code(), 3);
  EXPECT_EQ(r.status.shell_code(), 3);
  EXPECT_EQ(r.status.describe(), "exited with status 3");
  EXPECT_FALSE(r.timed_out);
}

TEST(CoreSubprocess, MergeEnvAndCwd) {
  const fs::path dir = fs::temp_directory_path() / ("kgate-subproc-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SpawnSpec s = capture({"sh", "-c", "echo \"$KGATE_T_A $KGATE_T_B\"; pwd; echo e >&2"});
  s.stderr_mode = SpawnSpec::Output::kMerge;
  s.env = {{"KGATE_T_A", "one"}, {"KGATE_T_B", "two words"}};
  s.cwd = dir.string();
  RunResult r = run(s);
  EXPECT_EQ(r.out, "one two words\n" + fs::canonical(dir).string() + "\ne\n");
  EXPECT_EQ(r.err, "");
  fs::remove_all(dir);
}

// Stdin::kNull is /dev/null, not kgate's own stdin (nvcc used to inherit the runner's,
// which is the protocol pipe).
TEST(CoreSubprocess, StdinIsDevNullNotKgates) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const int saved = ::dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(p[0], STDIN_FILENO), STDIN_FILENO);
  ASSERT_EQ(::write(p[1], "secret\n", 7), 7);
  ::close(p[1]);
  RunResult r = run(capture({"cat"}));
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  ::close(p[0]);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.status.shell_code(), 0);
}

TEST(CoreSubprocess, CannotStartIsAnError) {
  EXPECT_THROW(run(capture({"/no/such/binary-kgate"})), InfraError);
  EXPECT_THROW(run(capture({"no-such-binary-kgate-xyz"})), InfraError);
  SpawnSpec s = capture({"sh", "-c", "true"});
  s.cwd = "/no/such/dir-kgate";
  try {
    run(s);
    FAIL() << "a missing cwd must not start";
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/dir-kgate"), std::string::npos) << e.what();
  }
}

TEST(CoreSubprocess, DeadlineKillsTheWholeGroup) {
  const fs::path mark = fs::temp_directory_path() / ("kgate-subproc-mark-" + std::to_string(::getpid()));
  fs::remove(mark);
  // A grandchild that would write the mark after the deadline: it must die with the group.
  SpawnSpec s = capture({"sh", "-c", "(sleep 2; echo late > " + mark.string() + ") & sleep 30"});
  RunOptions o;
  o.deadline_s = 0.3;
  o.term_grace_s = 0.2;
  RunResult r = run(s, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.status.signaled());
  EXPECT_LT(r.elapsed_s, 5.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(fs::exists(mark));
  fs::remove(mark);
}

TEST(CoreSubprocess, LeftoversDieWhenTheChildExits) {
  const fs::path mark = fs::temp_directory_path() / ("kgate-subproc-left-" + std::to_string(::getpid()));
  fs::remove(mark);
  SpawnSpec s = capture({"sh", "-c", "(sleep 1; echo late > " + mark.string() + ") >/dev/null 2>&1 & exit 0"});
  RunResult r = run(s);
  EXPECT_EQ(r.status.shell_code(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(fs::exists(mark));
  fs::remove(mark);
}

TEST(CoreSubprocess, InterruptStops) {
  std::atomic<bool> stop{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  RunOptions o;
  o.interrupted = &stop;
  o.term_grace_s = 0.2;
  RunResult r = run(capture({"sleep", "30"}), o);
  t.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status.signal(), SIGTERM);
  EXPECT_EQ(r.status.describe(), "killed by signal 15 (SIGTERM)");
}

// A status waitpid cannot give (SIGCHLD ignored: the kernel reaps the child itself) is an
// error, never exit 0 (native/cuda/subprocess.cpp read it as 0).
TEST(CoreSubprocess, LostStatusIsAnErrorNotExitZero) {
  struct sigaction ign {}, old {};
  ign.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ign, &old), 0);
  bool threw = false;
  int code = -1;
  try {
    code = run(capture({"sh", "-c", "exit 7"})).status.shell_code();
  } catch (const InfraError&) {
    threw = true;
  }
  ::sigaction(SIGCHLD, &old, nullptr);
  EXPECT_TRUE(threw) << "got exit code " << code;
}

TEST(CoreSubprocess, SpawnGivesPipesAndKillAndReap) {
  SpawnSpec s;
  s.argv = {"cat"};
  s.stdin_mode = SpawnSpec::Stdin::kPipe;
  s.stdout_mode = SpawnSpec::Output::kPipe;
  s.stderr_mode = SpawnSpec::Output::kNull;
  s.group = SpawnSpec::Group::kSession;
  Spawned c = spawn(s);
  ASSERT_GT(c.pid, 0);
  EXPECT_EQ(c.err, -1);
  EXPECT_EQ(::getpgid(c.pid), c.pid);  // its own group (session leader)
  ASSERT_EQ(::write(c.in, "ping\n", 5), 5);
  char buf[8] = {};
  ASSERT_EQ(::read(c.out, buf, 5), 5);
  EXPECT_STREQ(buf, "ping\n");
  ExitStatus st;
  EXPECT_FALSE(try_wait(c.pid, &st));
  ASSERT_TRUE(kill_and_reap(c.pid, 5, &st));
  EXPECT_EQ(st.signal(), SIGKILL);
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_THROW(try_wait(c.pid, &st), InfraError);  // already reaped
  close_fd(&c.in);
  close_fd(&c.out);
  EXPECT_EQ(c.in, -1);
}

TEST(CoreSubprocess, RunRefusesAStdinPipe) {
  SpawnSpec s = capture({"cat"});
  s.stdin_mode = SpawnSpec::Stdin::kPipe;
  EXPECT_THROW(run(s), InfraError);
}

}  // namespace
}  // namespace kgate::core

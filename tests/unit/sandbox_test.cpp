// core/sandbox through core::spawn: each wall is shown holding with the sandbox on and
// absent with it off (so none of these can pass by accident), on the machine's kernel;
// a wall this kernel cannot build is skipped with the reason sandbox_support() gives.
#include "core/sandbox.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/subprocess.h"

namespace fs = std::filesystem;
using namespace kgate;
using kgate::core::Sandbox;
using kgate::core::SpawnSpec;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kgate-sbx-test-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

core::RunResult sh(const std::string& script, const Sandbox& sb, std::map<std::string, std::string> env = {}) {
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.env = std::move(env);
  s.stdout_mode = SpawnSpec::Output::kPipe;
  s.stderr_mode = SpawnSpec::Output::kMerge;
  s.sandbox = sb;
  core::RunOptions o;
  o.deadline_s = 30;
  return core::run(s, o);
}

Sandbox on(std::vector<std::string> writable = {}) {
  Sandbox s;
  s.enabled = true;
  s.writable = std::move(writable);
  return s;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

}  // namespace

TEST(Sandbox, WritesOnlyBeneathTheWritableDirectories) {
  if (core::sandbox_support().landlock_abi == 0) GTEST_SKIP() << core::sandbox_support().landlock_note;
  TempDir t;
  fs::create_directories(t.path / "ok");
  fs::create_directories(t.path / "protected");
  { std::ofstream(t.path / "protected" / "problem.yaml") << "original\n"; }
  const std::string p = (t.path / "protected").string(), ok = (t.path / "ok").string();
  const std::string script = "echo changed > " + p + "/problem.yaml; echo new > " + p + "/new; rm -f " + p +
                             "/problem.yaml; echo fine > " + ok + "/out && cat " + ok + "/out";
  core::RunResult r = sh(script, on({ok}));
  EXPECT_NE(r.out.find("fine"), std::string::npos) << r.out;
  std::ifstream in(t.path / "protected" / "problem.yaml");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "original") << "a protected file was rewritten";
  EXPECT_FALSE(fs::exists(t.path / "protected" / "new"));
  // The same script without the sandbox changes the files (the test can fail).
  sh(script, Sandbox{});
  EXPECT_FALSE(fs::exists(t.path / "protected" / "problem.yaml"));
  EXPECT_TRUE(fs::exists(t.path / "protected" / "new"));
}

// The CUDA driver writes beneath the process's own /proc/<pid> at cuInit (304 without
// it, measured on the H200): the worker may, and only there of /proc.
TEST(Sandbox, ItsOwnProcEntryStaysWritable) {
  if (core::sandbox_support().landlock_abi == 0) GTEST_SKIP() << core::sandbox_support().landlock_note;
  TempDir t;
  const std::string parent = std::to_string(::getpid());
  core::RunResult r = sh("echo kgate-own > /proc/self/comm && read c < /proc/self/comm && echo \"$c\"; "
                         "echo 0 > /proc/self/oom_score_adj && echo own-adj; "
                         "echo 0 > /proc/" + parent + "/oom_score_adj || echo parent-denied",
                         on({t.path.string()}));
  EXPECT_NE(r.out.find("kgate-own"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("own-adj"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parent-denied"), std::string::npos) << r.out;
}

// A worker narrows its own writes before it loads candidate code: in a forked child (the
// layer is for good), writes beneath the kept directory and its own /proc entry still
// work, the directory it could write until then (the compile cache) is read-only, and a
// thread started afterwards is bound too. Without the call, the same writes get through.
TEST(Sandbox, AProcessNarrowsItsOwnWritesForGood) {
  if (core::sandbox_support().landlock_abi == 0) GTEST_SKIP() << core::sandbox_support().landlock_note;
  TempDir t;
  const fs::path cache = t.path / "cache", own = t.path / "own";
  fs::create_directories(cache);
  auto attempt = [&](bool narrow) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 0;
      bool every = false;
      if (narrow && !core::narrow_writes_in_process({own.string()}, &every).empty()) ::_exit(90);
      if (narrow && !every) code |= 64;  // single-threaded here: the layer must hold for all
      if (!std::ofstream(own / "kept.o").put('k')) code |= 1;
      if (std::ofstream(cache / "planted.so").put('p')) code |= 2;
      std::thread th([&] { if (std::ofstream(cache / "from-thread.so").put('p')) code |= 4; });
      th.join();
      if (!std::ofstream("/proc/self/comm").write("kgate-own", 9)) code |= 8;
      ::_exit(code);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(attempt(true), 0) << "bits: 1 own dir denied, 2 cache written, 4 cache written by a thread, "
                                 "8 /proc/self denied, 64 not every thread, 90 no layer";
  EXPECT_TRUE(fs::exists(own / "kept.o"));
  EXPECT_FALSE(fs::exists(cache / "planted.so"));
  EXPECT_FALSE(fs::exists(cache / "from-thread.so"));
  EXPECT_EQ(attempt(false), 2 | 4);  // the control: nothing narrowed, both writes land
  EXPECT_TRUE(fs::exists(cache / "planted.so"));
}

TEST(Sandbox, NoNetwork) {
  const auto& sup = core::sandbox_support();
  if (!sup.net_namespace && sup.landlock_abi < 4) GTEST_SKIP() << sup.net_note;
  // A listener on the loopback, reachable from an unsandboxed child.
  int srv = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(srv, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(srv, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(srv, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(srv, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  if (::access("/bin/bash", X_OK) != 0) GTEST_SKIP() << "no /bin/bash for /dev/tcp";
  auto connect_from_child = [&](const Sandbox& sb) {
    SpawnSpec s;
    s.argv = {"/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected"};
    s.stdout_mode = SpawnSpec::Output::kPipe;
    s.stderr_mode = SpawnSpec::Output::kNull;
    s.sandbox = sb;
    core::RunOptions o;
    o.deadline_s = 20;
    return core::run(s, o).out;
  };
  EXPECT_EQ(connect_from_child(on()).find("connected"), std::string::npos) << "the sandbox reached the network";
  EXPECT_NE(connect_from_child(Sandbox{}).find("connected"), std::string::npos);
  ::close(srv);
}

TEST(Sandbox, SecretsLeaveTheEnvironment) {
  core::hide_from_children("KGATE_TEST_AGENT_CREDS");
  std::map<std::string, std::string> env = {{"KGATE_TEST_AGENT_CREDS", "c1"},
                                            {"OPENAI_API_KEY", "c2"},
                                            {"GITHUB_TOKEN", "c3"},
                                            {"AWS_SECRET_ACCESS_KEY", "c4"},
                                            {"KGATE_TEST_PLAIN", "visible"}};
  const std::string script = "env";
  const std::string out = sh(script, on(), env).out;
  for (const char* secret : {"c1", "c2", "c3", "c4"})
    EXPECT_EQ(out.find(std::string("=") + secret + "\n"), std::string::npos) << secret << " leaked:\n" << out;
  EXPECT_NE(out.find("KGATE_TEST_PLAIN=visible"), std::string::npos);
  EXPECT_NE(sh(script, Sandbox{}, env).out.find("OPENAI_API_KEY=c2"), std::string::npos);
}

TEST(Sandbox, SecretNames) {
  for (const char* n : {"OPENAI_API_KEY", "HF_TOKEN", "gh_token", "AWS_ACCESS_KEY_ID", "DB_PASSWORD", "SSH_AUTH_SOCK",
                        "ACTIONS_RUNTIME_URL", "SIGNING_KEY", "MY_SECRET"})
    EXPECT_TRUE(core::secret_like(n)) << n;
  for (const char* n : {"PATH", "HOME", "CUDA_VISIBLE_DEVICES", "TORCHINDUCTOR_CACHE_DIR", "KGATE_SANDBOX", "KEYBOARD"})
    EXPECT_FALSE(core::secret_like(n)) << n;
}

TEST(Sandbox, LimitsApply) {
  const std::string out = sh("ulimit -c; ulimit -n", on()).out;
  EXPECT_EQ(out.substr(0, 2), "0\n") << out;
  EXPECT_LE(std::atol(out.substr(2).c_str()), 4096) << out;
  Sandbox capped = on();
  capped.max_address_space = 64ull << 20;
  EXPECT_EQ(sh("ulimit -v", capped).out, "65536\n");
}

namespace {

// In a sandboxed child: forks 30 children that sleep 2 s, reaps them, and says how many
// forks succeeded ("forked N").
std::string fork_sleepers() {
  int forked = 0;
  for (int i = 0; i < 30; ++i) {
    const pid_t c = ::fork();
    if (c == 0) {
      ::sleep(2);
      ::_exit(0);
    }
    if (c > 0) ++forked;
  }
  while (::wait(nullptr) > 0) {
  }
  return "forked " + std::to_string(forked);
}

// In the test: what the child `pid` wrote to the pipe's read end `fd` (closed), once it
// has exited.
std::string child_says(int fd, pid_t pid) {
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  int st = 0;
  ::waitpid(pid, &st, 0);
  return out;
}

}  // namespace

// The task cap holds where kgate is not root: the worker's own user namespace, where the
// kernel counts its tasks alone. Run as a user with no other processes (nobody) in a
// forked child of the test, the sandbox applied there as core::spawn applies it.
TEST(Sandbox, TasksAreCappedInTheWorkersOwnUserNamespace) {
  const auto& sup = core::sandbox_support();
  if (!sup.tasks_per_namespace) GTEST_SKIP() << "Linux < 5.14";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    auto say = [&](const std::string& text) {
      (void)!::write(fds[1], text.data(), text.size());
      ::_exit(0);
    };
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      say("skip: cannot become nobody");
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);  // as a process started as nobody is: its /proc/self its own
    Sandbox sb = on();
    sb.max_tasks = 12;
    core::SandboxPlan plan;
    try {
      plan = core::prepare_sandbox(sb);
    } catch (const std::exception& e) {
      say(std::string("skip: ") + e.what());
    }
    if (!plan.unshare_user) say("skip: no user namespace here");
    int stage = 0;
    if (const int e = core::apply_in_child(plan, &stage); e != 0)
      say(std::string("skip: ") + core::sandbox_stage_name(stage) + ": " + std::strerror(e));
    say(fork_sleepers());
  }
  ::close(fds[1]);
  const std::string out = child_says(fds[0], pid);
  if (out.rfind("skip: ", 0) == 0) GTEST_SKIP() << out;
  // Itself and 11 children: the 12 tasks the cap allows.
  EXPECT_EQ(out, "forked 11");
  const bool cgroup = !sup.pids_cgroup.empty();
  EXPECT_NE(core::describe(on()).find(::geteuid() != 0 ? ", tasks 4096 (own user namespace)"
                                      : cgroup         ? ", tasks 4096 (pids cgroup)"
                                                       : ", tasks not capped (root; "),
            std::string::npos)
      << core::describe(on());
}

// Root's tasks are not limited by RLIMIT_NPROC: there the cap is a pids cgroup kgate makes
// for the worker (where it may), removed once the worker is gone.
TEST(Sandbox, RootsTasksAreCappedByAPidsCgroupOfTheWorkersOwn) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the cap is a user namespace's";
  const auto& sup = core::sandbox_support();
  if (sup.pids_cgroup.empty()) GTEST_SKIP() << sup.pids_note;
  Sandbox sb = on();
  sb.max_tasks = 12;
  core::SandboxPlan plan = core::prepare_sandbox(sb);
  ASSERT_GE(plan.cgroup_procs_fd, 0);
  ASSERT_TRUE(fs::is_directory(plan.cgroup_dir)) << plan.cgroup_dir;
  EXPECT_EQ(fs::path(plan.cgroup_dir).parent_path(), fs::path(sup.pids_cgroup));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    int stage = 0;
    std::string text;
    if (const int e = core::apply_in_child(plan, &stage); e != 0) {
      text = std::string("apply: ") + core::sandbox_stage_name(stage) + ": " + std::strerror(e);
    } else {
      text = fork_sleepers();
    }
    (void)!::write(fds[1], text.data(), text.size());
    ::_exit(0);
  }
  core::release(plan);
  ::close(fds[1]);
  const std::string out = child_says(fds[0], pid);
  // The worker and 11 children: the 12 tasks pids.max allows.
  EXPECT_EQ(out, "forked 11");
  core::remove_worker_cgroups();
  EXPECT_FALSE(fs::exists(plan.cgroup_dir)) << plan.cgroup_dir;
}

TEST(Sandbox, NoSignalsOutside) {
  if (core::sandbox_support().landlock_abi < 6) GTEST_SKIP() << "Landlock signal scopes need ABI 6";
  const std::string script = "kill -0 " + std::to_string(::getpid()) + " && echo reached";
  EXPECT_EQ(sh(script, on()).out.find("reached"), std::string::npos);
  EXPECT_NE(sh(script, Sandbox{}).out.find("reached"), std::string::npos);
}

TEST(Sandbox, DescribeSaysWhatHolds) {
  EXPECT_EQ(core::describe(Sandbox{}), "off (KGATE_SANDBOX=off)");
  const std::string d = core::describe(on({"/tmp"}));
  EXPECT_NE(d.find("files: "), std::string::npos);
  EXPECT_NE(d.find("network: "), std::string::npos);
  EXPECT_NE(d.find("environment: secrets removed"), std::string::npos);
  if (core::sandbox_support().landlock_abi > 0) {
    EXPECT_NE(d.find("writable only beneath 1 directories"), std::string::npos) << d;
  }
}

TEST(Sandbox, ModeFromTheEnvironment) {
  ::setenv("KGATE_SANDBOX", "off", 1);
  EXPECT_FALSE(core::sandbox_from_env().enabled);
  ::setenv("KGATE_SANDBOX", "strict", 1);
  EXPECT_TRUE(core::sandbox_from_env().strict);
  ::setenv("KGATE_SANDBOX", "maybe", 1);
  EXPECT_THROW(core::sandbox_from_env(), UsageError);
  ::unsetenv("KGATE_SANDBOX");
  EXPECT_TRUE(core::sandbox_from_env().enabled);
}

// A child that moves a process into its own session escapes a group kill; kill_strays
// finds it below the child and kills it.
TEST(Strays, ASetsidChildBelowTheRootIsKilled) {
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", "setsid sleep 60 & echo $!; exec sleep 60"};
  s.stdout_mode = SpawnSpec::Output::kPipe;
  core::Spawned sp = core::spawn(s);
  std::string out;
  char buf[64];
  ssize_t n = ::read(sp.out, buf, sizeof buf);
  if (n > 0) out.assign(buf, static_cast<std::size_t>(n));
  const pid_t escaped = static_cast<pid_t>(std::atol(out.c_str()));
  ASSERT_GT(escaped, 0);
  std::vector<core::StrayProcess> strays;
  for (int i = 0; i < 100 && strays.empty(); ++i) {  // setsid execs in a moment
    strays = core::kill_strays(sp.pid);
    if (strays.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(strays.size(), 1u);
  EXPECT_EQ(strays[0].pid, escaped);
  EXPECT_NE(strays[0].command.find("sleep"), std::string::npos);
  EXPECT_EQ(strays[0].how, "in a session of its own below the worker");
  core::ExitStatus st;
  EXPECT_TRUE(core::kill_and_reap(sp.pid, 10, &st));
  core::close_fd(&sp.out);
  for (int i = 0; i < 100 && alive(escaped); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Killed; its parent (the shell) is gone, so init or a subreaper reaps it.
  std::ifstream stat("/proc/" + std::to_string(escaped) + "/stat");
  std::string line;
  std::getline(stat, line);
  EXPECT_TRUE(line.empty() || line.find(") Z ") != std::string::npos) << line;
}

// An orphan that has already exited when it is looked at left nothing running: it is
// reaped, not reported (a dead worker's group member that died late on a loaded machine
// was charged to the next worker's request).
TEST(Strays, AnOrphanThatHasExitedIsReapedNotReported) {
  core::adopt_orphans();
  core::RunResult r = sh("(sleep 0.2 >/dev/null 2>&1 & echo $!) ; echo started", Sandbox{});
  ASSERT_NE(r.out.find("started"), std::string::npos);
  const pid_t orphan = static_cast<pid_t>(std::atol(r.out.c_str()));
  ASSERT_GT(orphan, 0) << r.out;
  auto zombie = [&] {
    std::ifstream stat("/proc/" + std::to_string(orphan) + "/stat");
    std::string line;
    std::getline(stat, line);
    return line.find(") Z ") != std::string::npos;
  };
  for (int i = 0; i < 300 && !zombie(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(zombie()) << "the orphan should be an unreaped child of this process by now";
  EXPECT_TRUE(core::kill_strays(0).empty());
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(orphan))) << "reaped";
}

// A double fork orphans the grandchild; with adopt_orphans it becomes this process's
// child, one spawn() never started, and kill_strays(0) kills and reaps it.
TEST(Strays, AnOrphanHandedToKgateIsKilled) {
  core::adopt_orphans();
  // The shell waits until the grandchild is in its own session: a shell that exits first
  // has its group killed (the run's leftovers) with the grandchild still in it.
  const std::string mark = (std::filesystem::temp_directory_path() /
                            ("kgate-escaped-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(mark);
  core::RunResult r = sh("(setsid sh -c 'echo $$ > " + mark + "; exec sleep 60' >/dev/null 2>&1 &) ; "
                         "while [ ! -s " + mark + " ]; do sleep 0.01; done; echo started", Sandbox{});
  std::filesystem::remove(mark);
  ASSERT_NE(r.out.find("started"), std::string::npos);
  std::vector<core::StrayProcess> strays;
  for (int i = 0; i < 100 && strays.empty(); ++i) {
    strays = core::kill_strays(0);
    if (strays.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(strays.size(), 1u);
  EXPECT_EQ(strays[0].how, "orphaned to kgate");
  EXPECT_FALSE(alive(strays[0].pid)) << "killed and reaped";
  // A child spawn() started is never taken for an orphan.
  SpawnSpec s;
  s.argv = {"/bin/sleep", "30"};
  core::Spawned mine = core::spawn(s);
  EXPECT_TRUE(core::kill_strays(0).empty());
  core::ExitStatus st;
  EXPECT_TRUE(core::kill_and_reap(mine.pid, 10, &st));
}

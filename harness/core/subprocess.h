#pragma once
// kgate's one way to start a child process: the compilers (native/host_compiler.cpp,
// native/cuda/subprocess.cpp), the command agent (search/command_agent.cpp) and the
// workers (worker/worker.cpp) all go through spawn().
//
// Everything the child needs (argv, the environment, the resolved executable path, the
// descriptors it gets) is prepared before fork; after fork the child only calls
// async-signal-safe functions (setsid/setpgid, sigaction, sigprocmask, dup2, fcntl, chdir,
// execve, write, _exit): kgate has threads, and a lock held by another thread at fork
// time (malloc's, the environment's) would otherwise deadlock the child. An exec that
// fails is reported back through a close-on-exec pipe, so "cannot start" is an error of
// spawn(), never an exit status.
#include <sys/types.h>

#include <atomic>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "core/sandbox.h"

namespace kgate::core {

struct SpawnSpec {
  // argv[0]: a path, or a name looked up on $PATH (before fork) when it has no '/'.
  std::vector<std::string> argv;
  // Added to (and overriding) kgate's own environment.
  std::map<std::string, std::string> env;
  std::string cwd;  // "" = kgate's working directory

  enum class Stdin { kNull, kPipe, kInherit };
  Stdin stdin_mode = Stdin::kNull;

  // kPipe: a pipe per stream (Spawned::out / Spawned::err). kMerge (stderr only): stderr
  // goes where stdout goes. kFd: dup of output_fd. kNull: /dev/null.
  enum class Output { kInherit, kPipe, kMerge, kFd, kNull };
  Output stdout_mode = Output::kInherit;
  Output stderr_mode = Output::kInherit;
  int output_fd = -1;  // for kFd (the caller keeps and closes it)

  // kSession: setsid (own session and process group: a deadline kills everything the
  // child started, and no terminal signal reaches it). kGroup: setpgid(0, 0). kInherit:
  // stay in kgate's group, so whoever kills kgate's group (the worker's deadline, when
  // kgate-native compiles) takes the child down too.
  enum class Group { kInherit, kGroup, kSession };
  Group group = Group::kSession;

  // The walls around the child (core/sandbox.h): its environment scrubbed of secrets,
  // writes confined, no network, limits. Off unless enabled; the workers enable it.
  Sandbox sandbox;
};

// A started child. The descriptors are the parent's ends (-1 when not piped), close-on-
// exec; the caller owns them (close_fd) and the pid (reap it: wait_exit, try_wait,
// kill_and_reap).
struct Spawned {
  pid_t pid = -1;
  int in = -1;   // write end of the child's stdin (Stdin::kPipe)
  int out = -1;  // read end of its stdout (Output::kPipe)
  int err = -1;  // read end of its stderr (Output::kPipe)
};

// Starts the child. Throws InfraError ("cannot start ARGV0: REASON") when a pipe cannot
// be made, fork fails, or the program cannot be executed (not found, not executable,
// cwd missing).
Spawned spawn(const SpawnSpec& spec);

// How a child ended: the raw waitpid status.
struct ExitStatus {
  int raw = 0;
  bool exited() const;
  bool signaled() const;
  int exit_code() const;  // when exited()
  int signal() const;     // when signaled()
  // exit_code(), or 128 + signal() when killed (the shell's convention).
  int shell_code() const;
  // "exited with status 3", "killed by signal 9 (SIGKILL)".
  std::string describe() const;
};

// "SIGSEGV", "SIGKILL", ..., "signal 42".
std::string signal_name(int sig);

// Non-blocking reap: true (and *status) when the child has ended. Throws InfraError when
// waitpid fails (ECHILD: someone else reaped it, or SIGCHLD is ignored): a lost status is
// never an exit 0.
bool try_wait(pid_t pid, ExitStatus* status);
// Blocking reap (EINTR retried); the same errors.
ExitStatus wait_exit(pid_t pid);

// SIGKILL (or `sig`) to the child's whole process group and to the child itself (in case
// it had not reached setsid yet).
void kill_group(pid_t pid, int sig = SIGKILL);

// kill_group(SIGKILL), then reap for at most `give_up_s` (a process stuck in the kernel,
// a wedged driver, is given up on rather than hanging kgate). True and *status when
// reaped; false when it did not exit in time or was already reaped elsewhere.
bool kill_and_reap(pid_t pid, double give_up_s, ExitStatus* status);

void close_fd(int* fd);

// ---- processes that left their worker ------------------------------------------------

// A process kgate found outside the process group it was started in, and killed.
struct StrayProcess {
  pid_t pid = -1;
  std::string command;  // its command line, shortened
  std::string how;      // "in its own session below the worker", "orphaned to kgate"
};

// Makes kgate the reaper of its descendants' orphans (PR_SET_CHILD_SUBREAPER): a process
// that a candidate double-forked away from its worker becomes kgate's child instead of
// init's, so kill_strays() still finds it. kgate's main calls it once.
void adopt_orphans();

// SIGKILLs process group `pgid` (a worker's, whose leader is gone) and, with
// adopt_orphans(), reaps its members as they die and are handed to kgate: what a killed
// worker was running (a compiler, say) is the dead worker's, never a stray for the next.
void end_group(pid_t pgid);

// Kills (SIGKILL) and reaps what escaped a worker's process group: (a) descendants of
// `root` in another session than root's (a candidate's setsid), (b) with adopt_orphans(),
// orphans reparented to kgate that spawn() did not start. `root` <= 0: (b) only.
std::vector<StrayProcess> kill_strays(pid_t root);

// ---- run to completion -------------------------------------------------------------

struct RunOptions {
  double deadline_s = 0;  // 0: none. Past it the group gets SIGTERM, then SIGKILL.
  double term_grace_s = 2.0;  // between SIGTERM and SIGKILL at the deadline
  const std::atomic<bool>* interrupted = nullptr;  // set: stop like at the deadline
  // With Group::kGroup/kSession: SIGKILL what the child left running in its group once
  // it has exited (background jobs of an agent's shell), so nothing outlives the call.
  bool kill_leftovers = true;
};

struct RunResult {
  ExitStatus status;
  bool timed_out = false;    // stopped at the deadline
  bool interrupted = false;  // stopped because *interrupted was set
  std::string out;  // captured stdout (Output::kPipe; with kMerge, stderr too)
  std::string err;  // captured stderr (Output::kPipe)
  double elapsed_s = 0;
};

// spawn(), then collects the piped output while waiting for the child to end (or the
// deadline). Stdin::kPipe is refused (nothing would write it). Throws like spawn() and
// try_wait().
RunResult run(const SpawnSpec& spec, const RunOptions& opt = {});

}  // namespace kgate::core

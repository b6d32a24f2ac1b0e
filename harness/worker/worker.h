#pragma once
// The orchestrator's end of one worker process (docs/protocol.md): spawn, one request in
// flight, a deadline per request, and recovery. kgate never runs candidate code itself;
// everything that can hang or crash runs in the worker, in its own process group, so a
// timeout kills the worker and everything it started.
//
// A fault (timeout, crash, garbage on stdout) is returned as data, never thrown: the
// caller records it against the candidate. The next call transparently starts a fresh
// worker and replays the setup log (hello, load_problem, the compiled slots), so one bad
// candidate never affects the next. Only "cannot start the worker at all" throws
// (kgate::InfraError, exit 3).
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/sandbox.h"
#include "verdict/verdict.h"
#include "protocol/messages.h"
#include "worker/stderr_ring.h"

namespace kgate::worker {

struct WorkerSpec {
  std::vector<std::string> argv;             // argv[0] is the executable path
  std::map<std::string, std::string> env;    // added to (and overriding) kgate's environment
  std::size_t stderr_ring_bytes = 64 * 1024; // stderr tail kept for crash reports
  double shutdown_grace_s = 2.0;             // how long a polite shutdown may take
  // Keep one process of this spec started ahead of need (the Python worker: its torch
  // import then overlaps the problem before): spawn() takes it when one is waiting and
  // starts the next. An idle spare only waits on its stdin, so it does not disturb what
  // the current worker measures; it is killed when kgate exits, and exits on its own at
  // EOF when kgate dies.
  bool keep_spare = false;
  // The walls around the worker and the candidate code it runs (core/sandbox.h); with it
  // enabled, a call that leaves a process outside the worker's group fails naming it.
  core::Sandbox sandbox;
  // Set (kgate run's SIGINT/SIGTERM): a call in flight is abandoned at once -- the
  // worker's group killed, Interrupted thrown -- rather than waited for (a max-autotune
  // compile can take a minute, past a CI job's grace between SIGTERM and SIGKILL).
  const std::atomic<bool>* interrupted = nullptr;
  // Where the OOM killer's count is read (core::oom_kill_count): a worker killed while it
  // rose is reported as out of memory. Tests point it at a file of their own.
  std::string vmstat = "/proc/vmstat";
};

// Kills the waiting spare, if any (also done at exit). For tests.
void drop_spare();

// The answer to one call: either the worker's response or a fault.
struct Reply {
  gates::Fault fault = gates::Fault::kNone;
  std::string fault_message;                 // "no answer within 5 s", "killed by signal 11 (SIGSEGV)"
  bool ok = false;                           // the worker's "ok" (when fault == kNone)
  protocol::Json result;                     // when ok
  std::optional<protocol::WireError> error;  // when !ok and no fault
  std::string stderr_tail;                   // last worker stderr lines (filled on faults)
  double elapsed_s = 0;
  bool restarted = false;                    // a fresh worker was started for this call

  bool good() const { return fault == gates::Fault::kNone && ok; }
  // One line for a person: the fault, or the worker's error kind and message.
  std::string describe() const;
};

class Worker {
 public:
  explicit Worker(WorkerSpec spec);
  ~Worker();  // polite shutdown, then SIGKILL of the process group
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Sends {"op": op, ...params} and waits at most timeout_s for the answer. Starts the
  // worker (and replays the setup log) when it is not running. Setup ops (hello,
  // load_problem, a successful compile) are recorded for replay; a compile replaces the
  // slot's earlier entry, and a slot being recompiled is not replayed first.
  // Throws InfraError only when the executable cannot be started, and Interrupted when
  // spec().interrupted is set before or during the call (the worker is killed then).
  Reply call(const std::string& op, const protocol::Json& params, double timeout_s);

  // Polite shutdown (op shutdown, short grace) then kill; the replay log is kept, so a
  // later call starts a fresh worker with the same setup.
  void stop();
  // Forgets the replay log as well (a different problem follows).
  void reset();
  // Drops one slot's compile from the replay log (its module is no longer wanted).
  void forget_slot(const std::string& slot);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int starts() const { return starts_; }  // how many processes were spawned so far
  std::string stderr_tail(std::size_t max_lines = 20) const { return ring_.tail_lines(max_lines); }
  const WorkerSpec& spec() const { return spec_; }

 private:
  struct SetupEntry {
    std::string op;
    protocol::Json params;
    double timeout_s = 0;
    std::string slot;  // compile only
  };

  void spawn();                       // throws InfraError when exec fails
  Reply exchange(const std::string& op, const protocol::Json& params, double timeout_s);
  Reply replay(const std::string& skip_slot);
  void kill_group();                  // SIGKILL the group, reap, close pipes
  bool reap_if_exited();              // true when the child has exited (and was reaped)
  std::string describe_status(int status) const;
  // The worker process has ended (not yet reaped): peeked at, its status left for reap_if_exited.
  bool worker_has_exited() const;
  bool stop_requested() const { return spec_.interrupted != nullptr && spec_.interrupted->load(); }
  // The call's crash is a SIGKILL kgate did not send (the OOM killer, a kill -9).
  bool killed_from_outside(const Reply& reply) const;
  // What ended a worker killed from outside, told by the OOM killer's count
  // (core::oom_kill_count) read before the request: the OOM killer, or a kill -9.
  std::string outside_kill(std::int64_t oom_kills_before) const;
  void record(const std::string& op, const protocol::Json& params, double timeout_s,
              const Reply& reply);
  void drain_stderr();

  WorkerSpec spec_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string stdout_buf_;
  StderrRing ring_;
  int64_t next_id_ = 1;
  int starts_ = 0;
  int last_status_ = 0;               // waitpid status of the last reaped child
  bool last_status_known_ = false;
  std::vector<SetupEntry> setup_;
};

// The Python worker for KernelBench problems: `python -m kgate_worker` with the package on
// PYTHONPATH. Python: $KGATE_PYTHON, else the source tree's .venv, else python3 on PATH.
// Package: $KGATE_PYTHONPATH, else <prefix>/share/kgate/python, else the source tree's
// harness/python. Throws InfraError when none is found.
std::string locate_python();
std::string locate_python_package();
WorkerSpec python_worker_spec();

// Puts the worker of `w` in the sandbox KGATE_SANDBOX asks for (on by default): writes
// only beneath `writable` (the run's compile cache, a compiled-mode workspace), a scratch
// TMPDIR of this kgate process, /dev and the tools' default caches; no network; secrets
// out of its environment; an address-space cap when max_address_space > 0.
void sandbox_worker(WorkerSpec& w, const std::vector<std::string>& writable, std::uint64_t max_address_space = 0);

// A sandboxed Python worker (after sandbox_worker) asked to seal itself before it first runs
// candidate code: from then on it writes only beneath its own directory and `keep` (a
// compiled-mode workspace, the trace's folder), so the run's shared Inductor and Triton
// caches are read-only to candidate code. No-op without the sandbox's file wall;
// KGATE_WORKER_SEAL=0 in kgate's environment turns it off (logged once).
void seal_python_worker(WorkerSpec& w, const std::vector<std::string>& keep);

// kgate-native (`explicit_bin`, else as locate_native_bin finds it) for `backend` ("host" |
// "cuda") behind the walls a run gives it: the sandbox, writable only beneath `writable`
// and its scratch, and on the host the address-space cap.
WorkerSpec native_worker_spec(const std::string& backend, const std::vector<std::string>& writable = {},
                              const std::string& explicit_bin = "");

// Where kgate-native lives: `explicit_path`, else $KGATE_NATIVE_BIN, else beside the
// running executable (/proc/self/exe). Throws InfraError naming every place tried.
std::string locate_native_bin(const std::string& explicit_path);

}  // namespace kgate::worker

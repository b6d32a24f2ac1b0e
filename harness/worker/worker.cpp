#include "worker/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "kgate/build_info.h"
#include "core/error.h"
#include "core/log.h"
#include "core/number_format.h"
#include "core/sandbox.h"
#include "core/subprocess.h"

namespace kgate::worker {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

using core::close_fd;

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::string shorten(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

bool is_executable(const std::string& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

core::SpawnSpec spawn_spec(const WorkerSpec& w) {
  // Own session and process group, so a deadline kills everything the worker started;
  // stdin, stdout and stderr are pipes (the protocol and the stderr ring). core::spawn
  // prepares everything before fork (kgate may have threads).
  core::SpawnSpec s;
  s.argv = w.argv;
  s.env = w.env;
  s.stdin_mode = core::SpawnSpec::Stdin::kPipe;
  s.stdout_mode = core::SpawnSpec::Output::kPipe;
  s.stderr_mode = core::SpawnSpec::Output::kPipe;
  s.group = core::SpawnSpec::Group::kSession;
  s.sandbox = w.sandbox;
  return s;
}

void discard(core::Spawned& c) {
  if (c.pid > 0) {
    core::ExitStatus st;
    core::kill_and_reap(c.pid, 10, &st);
  }
  close_fd(&c.in);
  close_fd(&c.out);
  close_fd(&c.err);
  c.pid = -1;
}

// The one process started ahead of need (WorkerSpec::keep_spare), for the spec it was
// started with.
class SparePool {
 public:
  ~SparePool() { drop(); }

  // A waiting spare of this exact command line and environment, or nullopt (a spare of
  // another spec is killed).
  std::optional<core::Spawned> take(const WorkerSpec& w) {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<core::Spawned> got;
    if (spare_.pid > 0) {
      core::ExitStatus st;
      bool ended = true;
      try {
        ended = core::try_wait(spare_.pid, &st);
      } catch (const InfraError&) {
        ended = true;  // status lost: not a process to hand out
      }
      if (ended) spare_.pid = -1;  // already reaped: nothing left to kill
      if (!ended && argv_ == w.argv && env_ == w.env && sandbox_ == w.sandbox) {
        got = spare_;
        spare_ = core::Spawned{};
      } else {
        discard(spare_);
      }
    }
    return got;
  }

  // Starts the next spare of the spec (after the worker that needed one has started).
  void refill(const WorkerSpec& w) {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.pid > 0) return;
    try {
      spare_ = core::spawn(spawn_spec(w));
      argv_ = w.argv;
      env_ = w.env;
      sandbox_ = w.sandbox;
    } catch (const InfraError& e) {
      spare_ = core::Spawned{};  // no spare: the next spawn() starts its own and says why
      log::debug(std::string("worker: no spare started: ") + e.what());
    }
  }

  void drop() {
    std::lock_guard<std::mutex> lock(mu_);
    discard(spare_);
  }

 private:
  std::mutex mu_;
  core::Spawned spare_;
  std::vector<std::string> argv_;
  std::map<std::string, std::string> env_;
  core::Sandbox sandbox_;
};

SparePool& spares() {
  static SparePool pool;
  return pool;
}

}  // namespace

void drop_spare() { spares().drop(); }

std::string Reply::describe() const {
  if (fault != gates::Fault::kNone) {
    std::string s = nlohmann::json(fault).get<std::string>() + ": " + fault_message;
    return s;
  }
  if (!ok) {
    if (error) return nlohmann::json(error->kind).get<std::string>() + ": " + error->message;
    return "worker error without a message";
  }
  return "ok";
}

Worker::Worker(WorkerSpec spec) : spec_(std::move(spec)), ring_(spec_.stderr_ring_bytes) {
  // A worker that dies while we write its stdin must surface as EPIPE (a crash we
  // report), not kill kgate.
  ::signal(SIGPIPE, SIG_IGN);
}

Worker::~Worker() { stop(); }

void Worker::spawn() {
  if (spec_.argv.empty()) throw InfraError("worker: empty command line");
  core::Spawned child;
  std::optional<core::Spawned> spare;
  if (spec_.keep_spare) spare = spares().take(spec_);
  if (spare) {
    child = *spare;
  } else {
    try {
      child = core::spawn(spawn_spec(spec_));
    } catch (const InfraError& e) {
      throw InfraError(std::string("worker: ") + e.what());
    }
  }
  if (spec_.keep_spare) spares().refill(spec_);
  pid_ = child.pid;
  stdin_fd_ = child.in;
  stdout_fd_ = child.out;
  stderr_fd_ = child.err;
  set_nonblocking(stdin_fd_);
  set_nonblocking(stdout_fd_);
  set_nonblocking(stderr_fd_);
  stdout_buf_.clear();
  ring_.clear();
  ++starts_;
  log::debug("worker: " + std::string(spare ? "took the spare " : "started ") + spec_.argv[0] +
             " (pid " + std::to_string(pid_) + ")");
}

void Worker::drain_stderr() {
  if (stderr_fd_ < 0) return;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(stderr_fd_, buf, sizeof buf);
    if (n > 0) {
      ring_.append(std::string_view(buf, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) close_fd(&stderr_fd_);
    return;  // EAGAIN or EOF
  }
}

bool Worker::reap_if_exited() {
  if (pid_ <= 0) return true;
  core::ExitStatus st;
  bool ended = false;
  try {
    ended = core::try_wait(pid_, &st);
    if (ended) {
      last_status_ = st.raw;
      last_status_known_ = true;
    }
  } catch (const InfraError& e) {
    // The status is lost (reaped elsewhere): the worker is gone, how is unknown -- never
    // read as a clean exit.
    log::warn("worker: " + std::string(e.what()));
    ended = true;
    last_status_known_ = false;
  }
  if (!ended) return false;
  const pid_t gone = pid_;
  pid_ = -1;
  // The group may still hold children of the dead worker: take them down too.
  core::end_group(gone);
  drain_stderr();
  close_fd(&stdin_fd_);
  close_fd(&stdout_fd_);
  close_fd(&stderr_fd_);
  return true;
}

void Worker::kill_group() {
  if (pid_ > 0) {
    // SIGKILL normally reaps at once; a process stuck in the kernel (a wedged driver) is
    // given up on after a while rather than hanging kgate.
    core::ExitStatus st;
    if (core::kill_and_reap(pid_, 10, &st)) {
      last_status_ = st.raw;
      last_status_known_ = true;
    } else {
      log::warn("worker: pid " + std::to_string(pid_) + " did not exit after SIGKILL");
      last_status_known_ = false;
    }
    pid_ = -1;
  }
  drain_stderr();
  close_fd(&stdin_fd_);
  close_fd(&stdout_fd_);
  close_fd(&stderr_fd_);
  stdout_buf_.clear();
}

std::string Worker::describe_status(int status) const {
  return "worker " + core::ExitStatus{status}.describe();
}

bool Worker::worker_has_exited() const {
  if (pid_ <= 0) return true;
  siginfo_t info{};
  // WNOWAIT: looked at, left to reap_if_exited for its status.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == pid_;
}

bool Worker::killed_from_outside(const Reply& reply) const {
  // A crash whose status is SIGKILL: kgate's own kills are deadlines, reported as
  // timeouts, so this one came from the OOM killer or a kill -9.
  return reply.fault == gates::Fault::kCrash && last_status_known_ &&
         core::ExitStatus{last_status_}.signaled() && core::ExitStatus{last_status_}.signal() == SIGKILL;
}

std::string Worker::outside_kill(std::int64_t oom_kills_before) const {
  const std::int64_t now = core::oom_kill_count(spec_.vmstat);
  if (oom_kills_before < 0 || now < 0)
    return "killed by SIGKILL from outside kgate (the OOM killer, or a kill -9)";
  if (now == oom_kills_before) return "killed by SIGKILL from outside kgate (a kill -9, not the OOM killer)";
  const std::uint64_t total = core::host_memory_total(), limit = core::memory_cgroup_limit();
  if (limit > 0 && (total == 0 || limit < total))
    return "killed by the kernel's OOM killer: out of memory (its memory cgroup's limit, " +
           core::fmt_bytes(static_cast<long double>(limit)) + ")";
  return "killed by the kernel's OOM killer: this machine ran out of memory" +
         (total > 0 ? " (" + core::fmt_bytes(static_cast<long double>(total)) + " in all)" : std::string());
}

Reply Worker::exchange(const std::string& op, const protocol::Json& params, double timeout_s) {
  Reply reply;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(timeout_s));
  const int64_t id = next_id_++;
  const std::string line = protocol::make_request(id, op, params) + "\n";

  auto fault = [&](gates::Fault f, std::string msg) {
    reply.fault = f;
    reply.fault_message = std::move(msg);
    reply.ok = false;
    reply.stderr_tail = ring_.tail_lines(20);
    reply.elapsed_s = seconds_since(t0);
    return reply;
  };
  auto crashed = [&](const std::string& when) {
    // The child is gone (or going): give it a moment to finish dying so the status and
    // its last stderr lines are accurate, then make sure the whole group is down.
    auto t1 = Clock::now();
    while (pid_ > 0 && !reap_if_exited() && seconds_since(t1) < 1.0) {
      drain_stderr();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (pid_ > 0) kill_group();
    std::string msg = last_status_known_ ? describe_status(last_status_) : "worker ended";
    return fault(gates::Fault::kCrash, msg + " " + when);
  };
  auto ms_left = [&]() {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), 1000)));
  };

  // Write the request (non-blocking, so a worker that stopped reading cannot wedge us).
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = ::write(stdin_fd_, line.data() + written, line.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) return crashed("before reading request `" + op + "`");
    if (n < 0 && errno != EAGAIN) return crashed(std::string("(write: ") + std::strerror(errno) + ")");
    if (stop_requested()) {
      kill_group();
      throw Interrupted();
    }
    if (Clock::now() >= deadline) {
      kill_group();
      return fault(gates::Fault::kTimeout,
                   "worker did not read request `" + op + "` within " + format_seconds(timeout_s) + " s");
    }
    pollfd pw[2] = {{stdin_fd_, POLLOUT, 0}, {stderr_fd_, POLLIN, 0}};
    ::poll(pw, stderr_fd_ >= 0 ? 2 : 1, ms_left());
    drain_stderr();
  }

  // Wait for one line on stdout, draining stderr all along.
  char buf[65536];
  for (;;) {
    auto nl = stdout_buf_.find('\n');
    while (nl == 0) {  // blank lines carry nothing; skip them
      stdout_buf_.erase(0, 1);
      nl = stdout_buf_.find('\n');
    }
    if (nl != std::string::npos) {
      std::string resp_line = stdout_buf_.substr(0, nl);
      stdout_buf_.erase(0, nl + 1);
      if (!resp_line.empty() && resp_line.back() == '\r') resp_line.pop_back();
      protocol::Response resp;
      std::string err;
      if (!protocol::parse_response(resp_line, &resp, &err)) {
        kill_group();
        return fault(gates::Fault::kWorkerError,
                     "worker wrote a line that is not a protocol response to `" + op + "` (" + err +
                         "): " + shorten(resp_line, 200));
      }
      if (resp.id != id) {
        kill_group();
        return fault(gates::Fault::kWorkerError, "worker answered id " + std::to_string(resp.id) +
                                                     " to request " + std::to_string(id) + " (`" +
                                                     op + "`)");
      }
      reply.ok = resp.ok;
      reply.result = std::move(resp.result);
      reply.error = resp.error;
      drain_stderr();
      reply.elapsed_s = seconds_since(t0);
      return reply;
    }
    if (stop_requested()) {
      kill_group();
      throw Interrupted();
    }
    if (Clock::now() >= deadline) {
      kill_group();
      return fault(gates::Fault::kTimeout, "no answer to `" + op + "` within " +
                                               format_seconds(timeout_s) + " s; worker killed");
    }
    pollfd pr[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    int rc = ::poll(pr, stderr_fd_ >= 0 ? 2 : 1, ms_left());
    if (rc < 0 && errno != EINTR) return crashed(std::string("(poll: ") + std::strerror(errno) + ")");
    drain_stderr();
    if (rc == 0 && worker_has_exited()) {
      // Dead, but something it started still holds its stdout open (no EOF comes): what
      // it wrote before dying is in the pipe by now; no answer there is a crash.
      ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
      if (n > 0) {
        stdout_buf_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      return crashed("while handling `" + op + "`");
    }
    if (pr[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
      if (n > 0) {
        stdout_buf_.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0) {
        return crashed("while handling `" + op + "`");
      } else if (errno != EAGAIN && errno != EINTR) {
        return crashed(std::string("(read: ") + std::strerror(errno) + ")");
      }
    }
  }
}

Reply Worker::replay(const std::string& skip_slot) {
  Reply last;
  last.ok = true;
  for (const auto& e : setup_) {
    if (e.op == "compile" && e.slot == skip_slot) continue;
    last = exchange(e.op, e.params, e.timeout_s);
    if (!last.good()) {
      last.fault_message = "while restarting the worker (replaying `" + e.op + "`): " +
                           (last.fault != gates::Fault::kNone ? last.fault_message : last.describe());
      if (last.fault == gates::Fault::kNone) last.fault = gates::Fault::kWorkerError;
      return last;
    }
  }
  return last;
}

void Worker::record(const std::string& op, const protocol::Json& params, double timeout_s,
                    const Reply& reply) {
  if (op == "hello" || op == "load_problem") {
    // A new load_problem invalidates compiled slots: the worker starts over.
    if (op == "load_problem") std::erase_if(setup_, [](const SetupEntry& e) { return e.op == "compile"; });
    for (auto& e : setup_) {
      if (e.op == op) {
        e.params = params;
        e.timeout_s = timeout_s;
        return;
      }
    }
    // hello must come first on replay.
    if (op == "hello") setup_.insert(setup_.begin(), {op, params, timeout_s, ""});
    else setup_.push_back({op, params, timeout_s, ""});
    return;
  }
  if (op == "compile") {
    std::string slot = params.value("slot", std::string("candidate"));
    std::erase_if(setup_, [&](const SetupEntry& e) { return e.op == "compile" && e.slot == slot; });
    if (reply.result.is_object() && reply.result.value("compiled", false))
      setup_.push_back({op, params, timeout_s, slot});
  }
}

Reply Worker::call(const std::string& op, const protocol::Json& params, double timeout_s) {
  if (stop_requested()) throw Interrupted();
  std::string skip_slot;
  if (op == "compile") skip_slot = params.value("slot", std::string("candidate"));
  bool restarted = false;
  auto restart_if_needed = [&]() -> std::optional<Reply> {
    if (pid_ > 0 && !reap_if_exited()) return std::nullopt;
    if (starts_ > 0) {
      log::debug("worker: starting a fresh worker (previous one ended: " +
                 (last_status_known_ ? describe_status(last_status_) : std::string("killed")) + ")");
      restarted = true;
    }
    spawn();
    Reply r = replay(skip_slot);
    if (!r.good()) {
      r.restarted = restarted;
      return r;
    }
    return std::nullopt;
  };
  if (auto failed = restart_if_needed()) return *failed;
  std::int64_t ooms = core::oom_kill_count(spec_.vmstat);
  Reply reply = exchange(op, params, timeout_s);
  // A worker that answered its last request and then exited because the device was lost
  // never read this one (it may still have been tearing down when we wrote it): this
  // request belongs to a fresh worker, not to the candidate that faulted.
  if (reply.fault == gates::Fault::kCrash && last_status_known_ && WIFEXITED(last_status_) &&
      WEXITSTATUS(last_status_) == protocol::kExitAfterDeviceFault) {
    log::debug("worker: `" + op + "` reached a worker exiting after a device fault; retrying in a fresh one");
    if (auto failed = restart_if_needed()) return *failed;
    reply = exchange(op, params, timeout_s);
  }
  // SIGKILL that kgate did not send (a deadline is a timeout, not a crash): the OOM killer
  // or someone outside. That is no verdict on the candidate yet: the request runs once more
  // in a fresh worker, and only the same death again is charged to what it ran.
  if (killed_from_outside(reply)) {
    log::warn("worker: " + outside_kill(ooms) + " during `" + op + "`; running it once more in a fresh worker");
    if (auto failed = restart_if_needed()) return *failed;
    ooms = core::oom_kill_count(spec_.vmstat);
    reply = exchange(op, params, timeout_s);
    if (killed_from_outside(reply))
      reply.fault_message += " (" + outside_kill(ooms) + ", again in a fresh worker: charged to this request)";
  }
  // A process the candidate moved out of the worker's group (its own session, or a
  // double fork that orphaned it) would outlive the deadline's group kill: it is killed
  // here, the worker with it, and the request fails naming it.
  if (spec_.sandbox.enabled && op != "hello" && op != "shutdown") {
    const std::vector<core::StrayProcess> strays = core::kill_strays(pid_);
    if (!strays.empty()) {
      std::string list;
      for (const auto& p : strays)
        list += (list.empty() ? "" : "; ") + std::string("pid ") + std::to_string(p.pid) + " `" + p.command +
                "` " + p.how;
      reply = Reply{};
      reply.fault = gates::Fault::kCrash;
      reply.fault_message = "sandbox: a process left the worker's process group during `" + op + "` (" + list +
                            "); killed, with the worker";
      reply.stderr_tail = stderr_tail();
      kill_group();
    }
  }
  reply.restarted = restarted;
  if (reply.good()) record(op, params, timeout_s, reply);
  else if (op == "compile") record(op, params, timeout_s, reply);  // slot now empty
  return reply;
}

void Worker::stop() {
  // Stopping (SIGTERM): no polite shutdown, which would throw Interrupted from here.
  if (pid_ > 0 && !reap_if_exited() && !stop_requested()) {
    try {
      Reply r = exchange("shutdown", protocol::Json::object(), spec_.shutdown_grace_s);
      if (r.fault == gates::Fault::kNone) {
        auto t0 = Clock::now();
        while (!reap_if_exited() && seconds_since(t0) < spec_.shutdown_grace_s) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
    } catch (const Interrupted&) {  // the signal came during the shutdown: killed below
    }
  }
  kill_group();
  // What the worker left behind outside its group, orphaned to kgate (adopt_orphans).
  if (spec_.sandbox.enabled) {
    core::kill_strays(0);
    core::remove_worker_cgroups();
  }
}

void Worker::reset() {
  stop();
  setup_.clear();
}

void Worker::forget_slot(const std::string& slot) {
  std::erase_if(setup_, [&](const SetupEntry& e) { return e.op == "compile" && e.slot == slot; });
}

std::string locate_native_bin(const std::string& explicit_path) {
  std::vector<std::string> tried;
  if (!explicit_path.empty()) {
    if (is_executable(explicit_path)) return explicit_path;
    throw InfraError("kgate-native not found or not executable: " + explicit_path);
  }
  if (const char* env = std::getenv("KGATE_NATIVE_BIN"); env && *env) {
    if (is_executable(env)) return env;
    throw InfraError(std::string("KGATE_NATIVE_BIN=") + env + " is not an executable file");
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string beside = (self.parent_path() / "kgate-native").string();
    if (is_executable(beside)) return beside;
    tried.push_back(beside);
  }
  std::string msg = "cannot find kgate-native (set KGATE_NATIVE_BIN";
  for (const auto& t : tried) msg += "; not at " + t;
  throw InfraError(msg + ")");
}

namespace {

// Once per run, the seal a worker is asked for: "sandbox: WHAT (every thread)", or, before
// Landlock ABI 8, "(the THREAD thread and the threads it starts; Landlock ABI N < 8)".
// Nothing without Landlock: the sandbox line says so.
void say_seal_once(std::once_flag& once, const char* what, const char* thread) {
  std::call_once(once, [&] {
    const int abi = core::sandbox_support().landlock_abi;
    if (abi == 0) return;
    log::info(std::string("sandbox: ") + what + " (" +
              (abi >= 8 ? std::string("every thread")
                        : std::string("the ") + thread + " thread and the threads it starts; Landlock ABI " +
                              std::to_string(abi) + " < 8") +
              ")");
  });
}

}  // namespace

WorkerSpec native_worker_spec(const std::string& backend, const std::vector<std::string>& writable,
                              const std::string& explicit_bin) {
  WorkerSpec spec;
  spec.argv = {locate_native_bin(explicit_bin)};
  sandbox_worker(spec, writable, backend == "host" ? core::host_address_space_cap() : 0);
  if (spec.sandbox.enabled && !spec.sandbox.writable.empty()) {
    // kgate-native narrows its own writes before it first loads a compiled slot, so the
    // compile cache is read-only to candidate code (native/compile_cache.h).
    spec.env["KGATE_WORKER_SEAL"] = "1";
    static std::once_flag said;
    say_seal_once(said, "kgate-native makes the compile cache read-only before it loads a candidate", "loading");
  }
  return spec;
}

namespace {

// The first executable `name` on $PATH, "" when none.
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string all = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string dir = all.substr(start, end - start);
    if (!dir.empty() && is_executable(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

}  // namespace

std::string locate_python() {
  if (const char* env = std::getenv("KGATE_PYTHON"); env && *env) {
    if (is_executable(env)) return env;
    std::string found = on_path(env);
    if (!found.empty()) return found;
    throw InfraError(std::string("KGATE_PYTHON=") + env + " is not an executable file");
  }
  // The virtual environment scripts/install-deps.sh creates, then the system python3.
  std::string venv = (fs::path(build::kSourceDir) / ".venv" / "bin" / "python").string();
  if (is_executable(venv)) return venv;
  std::string sys = on_path("python3");
  if (!sys.empty()) return sys;
  throw InfraError("cannot find a Python for the KernelBench worker (set KGATE_PYTHON; not at " + venv +
                   ", no python3 on PATH)");
}

std::string locate_python_package() {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("KGATE_PYTHONPATH"); env && *env) tried.emplace_back(env);
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back(self.parent_path().parent_path() / "share" / "kgate" / "python");
  tried.push_back(fs::path(build::kSourceDir) / "harness" / "python");
  std::string list;
  for (const auto& d : tried) {
    if (fs::is_regular_file(d / "kgate_worker" / "__main__.py", ec)) return d.string();
    list += (list.empty() ? "" : ", ") + d.string();
  }
  throw InfraError("cannot find the kgate_worker Python package (set KGATE_PYTHONPATH; looked in " + list + ")");
}

void seal_python_worker(WorkerSpec& spec, const std::vector<std::string>& keep) {
  if (!spec.sandbox.enabled || spec.sandbox.writable.empty()) return;
  if (const char* v = std::getenv("KGATE_WORKER_SEAL"); v && std::string(v) == "0") {
    static std::once_flag off;
    std::call_once(off, [] {
      log::warn("sandbox: KGATE_WORKER_SEAL=0: the Inductor and Triton caches stay writable to candidate code");
    });
    spec.env["KGATE_WORKER_SEAL"] = "0";
    return;
  }
  // The worker narrows its own writes before it first runs candidate code, so the shared
  // Inductor and Triton caches are read-only to it (kgate_worker/seal.py).
  spec.env["KGATE_WORKER_SEAL"] = "1";
  std::string joined;
  for (const auto& d : keep) joined += (joined.empty() ? "" : ":") + d;
  spec.env["KGATE_WORKER_SEAL_KEEP"] = joined;
  static std::once_flag said;
  say_seal_once(said, "the Python worker makes the Inductor and Triton caches read-only before it runs candidate code",
                "sealing");
}

WorkerSpec python_worker_spec() {
  WorkerSpec s;
  s.argv = {locate_python(), "-m", "kgate_worker"};
  std::string pkg = locate_python_package();
  const char* old = std::getenv("PYTHONPATH");
  s.env["PYTHONPATH"] = old && *old ? pkg + ":" + old : pkg;
  s.env["PYTHONUNBUFFERED"] = "1";
  s.env["PYTHONDONTWRITEBYTECODE"] = "1";
  // torch imported at start, so a spare started ahead of its problem has done it
  s.env["KGATE_WORKER_PRELOAD"] = "1";
  const char* spare = std::getenv("KGATE_WORKER_SPARE");  // "0": no spare (less memory)
  s.keep_spare = !(spare && std::string(spare) == "0");
  return s;
}

namespace {

// One scratch directory per kgate process, the workers' TMPDIR (the only temporary
// directory they may write), removed when kgate exits.
const std::string& sandbox_scratch() {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/kgate-sandbox-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw InfraError("sandbox: cannot create a scratch directory (" + tmpl + "): " + std::strerror(errno));
    static const std::string keep = tmpl;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(keep, ec);
    });
    return tmpl;
  }();
  return dir;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace


void sandbox_worker(WorkerSpec& w, const std::vector<std::string>& writable, std::uint64_t max_address_space) {
  w.sandbox = core::sandbox_from_env();
  if (!w.sandbox.enabled) {
    static std::once_flag said_off;
    std::call_once(said_off, [] { log::warn("sandbox: off (KGATE_SANDBOX=off): candidates run with kgate's own rights"); });
    return;
  }
  // The device memory cap is kept by the Python worker itself (kgate_worker: torch's
  // allocator capped before candidate code, checked after every call).
  if (w.sandbox.max_gpu_memory > 0)
    w.env["KGATE_WORKER_GPU_MEMORY_MB"] = std::to_string(w.sandbox.max_gpu_memory >> 20);
  const std::string home = env_or("HOME", "");
  const std::string tmp = env_or("TMPDIR", "/tmp");
  std::vector<std::string> dirs = writable;
  dirs.push_back(sandbox_scratch());
  dirs.push_back("/dev");  // /dev/null, /dev/shm, the GPU's device files
  // The caches the worker's tools keep by default: kgate's compile cache, Triton's,
  // the CUDA driver's JIT cache, Inductor's (which defaults to TMPDIR: kept where it was).
  dirs.push_back(env_or("XDG_CACHE_HOME", home.empty() ? "/tmp/kgate-cache" : home + "/.cache"));
  if (!home.empty()) {
    dirs.push_back(home + "/.triton");
    dirs.push_back(home + "/.nv");
  }
  std::string user = env_or("USER", env_or("LOGNAME", ""));
  if (user.empty()) user = std::to_string(::geteuid());
  if (!w.env.count("TORCHINDUCTOR_CACHE_DIR") && !std::getenv("TORCHINDUCTOR_CACHE_DIR")) {
    const std::string inductor = tmp + "/torchinductor_" + user;
    w.env["TORCHINDUCTOR_CACHE_DIR"] = inductor;
    dirs.push_back(inductor);
  }
  // The CUDA driver writes beneath the process's own /proc/<pid> at cuInit, and the file
  // wall allows that to the worker alone (core/sandbox.h): a process the worker starts
  // cannot initialise CUDA. Inductor's parallel compile starts such processes ("Could not
  // find an active GPU backend" in its subprocess, measured on the H200), so it compiles
  // in the worker instead. Set TORCHINDUCTOR_COMPILE_THREADS to choose otherwise.
  if (!w.env.count("TORCHINDUCTOR_COMPILE_THREADS") && !std::getenv("TORCHINDUCTOR_COMPILE_THREADS"))
    w.env["TORCHINDUCTOR_COMPILE_THREADS"] = "1";
  for (const char* var : {"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "CUDA_CACHE_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.emplace_back(v);
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  w.sandbox.writable = dirs;
  w.sandbox.max_address_space = max_address_space;
  w.env["TMPDIR"] = sandbox_scratch();
  // Said once per kind of worker and run, so a log shows what held.
  static std::mutex said_mu;
  static std::set<std::string> said;
  const std::string line = core::describe(w.sandbox);
  std::lock_guard<std::mutex> lock(said_mu);
  if (said.insert(line).second) log::info("sandbox: " + line);
}

}  // namespace kgate::worker

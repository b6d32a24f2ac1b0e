#include "core/subprocess.h"

#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace kgate::core {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string errno_text(int e) { return std::strerror(e); }

bool is_executable_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// argv[0] as execve wants it: itself when it names a path, else the first executable of
// that name on $PATH ("" when none).
std::string resolve_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string all = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string dir = all.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string cand = dir + "/" + name;
    if (is_executable_file(cand)) return cand;
    start = end + 1;
  }
  return "";
}

// A descriptor the child dup2s onto 0, 1 or 2 must not itself be 0, 1 or 2 (it would be
// overwritten by an earlier dup2, or keep its close-on-exec flag): move it to >= 3.
int above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// Closes every descriptor of the list on every way out of spawn().
struct FdList {
  std::vector<int*> fds;
  ~FdList() {
    for (int* f : fds) close_fd(f);
  }
};

// What the child reports when it cannot get to exec.
struct ChildFailure {
  int stage = 0;  // 1: chdir, 2: execve, 10 + n: sandbox stage n
  int error = 0;
};

// The children spawn() started and nobody has reaped yet: kill_strays() leaves them be.
std::mutex g_children_mu;
// Never destroyed: a static destructor (the spare worker's pool) reaps after others ran.
std::set<pid_t>& live_children() {
  static auto* pids = new std::set<pid_t>;
  return *pids;
}
void note_reaped(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_children_mu);
  live_children().erase(pid);
}
bool g_adopting = false;

}  // namespace

void close_fd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

Spawned spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw InfraError("cannot start a process: empty command line");
  const std::string& name = spec.argv[0];
  auto fail = [&](const std::string& why) { return InfraError("cannot start " + name + ": " + why); };

  // ---- everything the child needs, before fork ----
  const std::string exe = resolve_executable(name);
  if (exe.empty()) throw fail("not found on PATH");
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::map<std::string, std::string> env_map;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env_map[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env) env_map[k] = v;
  if (spec.sandbox.enabled) scrub_environment(env_map);
  std::vector<std::string> env_strs;
  for (const auto& [k, v] : env_map) env_strs.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strs) envp.push_back(s.data());
  envp.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  // Parent ends (returned) and child ends (closed here after fork).
  Spawned sp;
  int child_in = -1, child_out = -1, child_err = -1;
  int report[2] = {-1, -1};
  FdList cleanup{{&child_in, &child_out, &child_err, &report[0], &report[1]}};
  FdList parent_ends{{&sp.in, &sp.out, &sp.err}};
  auto make_pipe = [&](int* read_end, int* write_end) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw fail("pipe: " + errno_text(errno));
    *read_end = above_stdio(p[0]);
    *write_end = above_stdio(p[1]);
    if (*read_end < 0 || *write_end < 0) throw fail("pipe: " + errno_text(errno));
  };
  auto open_null = [&](int flags) {
    int fd = above_stdio(::open("/dev/null", flags | O_CLOEXEC));
    if (fd < 0) throw fail("/dev/null: " + errno_text(errno));
    return fd;
  };
  auto output_end = [&](SpawnSpec::Output mode, int* parent_end) {
    switch (mode) {
      case SpawnSpec::Output::kPipe: {
        int w = -1;
        make_pipe(parent_end, &w);
        return w;
      }
      case SpawnSpec::Output::kFd: {
        if (spec.output_fd < 0) throw fail("no descriptor given for the output");
        int fd = ::fcntl(spec.output_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) throw fail("dup: " + errno_text(errno));
        return fd;
      }
      case SpawnSpec::Output::kNull: return open_null(O_WRONLY);
      case SpawnSpec::Output::kInherit:
      case SpawnSpec::Output::kMerge: return -1;
    }
    return -1;
  };
  switch (spec.stdin_mode) {
    case SpawnSpec::Stdin::kNull: child_in = open_null(O_RDONLY); break;
    case SpawnSpec::Stdin::kPipe: make_pipe(&child_in, &sp.in); break;
    case SpawnSpec::Stdin::kInherit: break;
  }
  if (spec.stdout_mode == SpawnSpec::Output::kMerge) throw fail("stdout cannot merge into itself");
  child_out = output_end(spec.stdout_mode, &sp.out);
  const bool merge = spec.stderr_mode == SpawnSpec::Output::kMerge;
  child_err = output_end(spec.stderr_mode, &sp.err);
  make_pipe(&report[0], &report[1]);
  const SpawnSpec::Group group = spec.group;
  SandboxPlan plan = prepare_sandbox(spec.sandbox);
  struct PlanRelease {
    SandboxPlan* p;
    ~PlanRelease() { release(*p); }
  } plan_release{&plan};

  // Held from fork to note_started: kill_strays() in another thread never takes this
  // child, started a moment ago, for an orphan.
  std::unique_lock<std::mutex> registry(g_children_mu);
  const pid_t pid = ::fork();
  if (pid < 0) throw fail("fork: " + errno_text(errno));
  if (pid == 0) {
    // ---- child: async-signal-safe calls only ----
    if (group == SpawnSpec::Group::kSession) ::setsid();
    else if (group == SpawnSpec::Group::kGroup) ::setpgid(0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);  // kgate ignores it; the child must not
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (child_in >= 0) ::dup2(child_in, STDIN_FILENO);
    if (child_out >= 0) ::dup2(child_out, STDOUT_FILENO);
    if (merge) ::dup2(STDOUT_FILENO, STDERR_FILENO);
    else if (child_err >= 0) ::dup2(child_err, STDERR_FILENO);
    ChildFailure f;
    int sandbox_stage = 0;
    if (const int e = apply_in_child(plan, &sandbox_stage); e != 0) {
      f.stage = 10 + sandbox_stage;
      f.error = e;
    } else if (cwd != nullptr && ::chdir(cwd) != 0) {
      f.stage = 1;
      f.error = errno;
    } else {
      ::execve(exe.c_str(), argv.data(), envp.data());
      f.stage = 2;
      f.error = errno;
    }
    ssize_t w = ::write(report[1], &f, sizeof f);
    (void)w;
    ::_exit(127);
  }
  // ---- parent ----
  live_children().insert(pid);
  registry.unlock();
  if (group == SpawnSpec::Group::kGroup) ::setpgid(pid, pid);  // no race with an early kill
  close_fd(&child_in);
  close_fd(&child_out);
  close_fd(&child_err);
  close_fd(&report[1]);
  ChildFailure f;
  ssize_t n;
  do n = ::read(report[0], &f, sizeof f);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof f)) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    note_reaped(pid);
    if (f.stage == 1) throw fail("cannot enter " + spec.cwd + ": " + errno_text(f.error));
    if (f.stage >= 10)
      throw fail(std::string("sandbox: ") + sandbox_stage_name(f.stage - 10) + ": " + errno_text(f.error) +
                 " (KGATE_SANDBOX=off runs without it)");
    throw fail(errno_text(f.error));
  }
  sp.pid = pid;
  parent_ends.fds.clear();  // the caller owns the ends now
  return sp;
}

bool ExitStatus::exited() const { return WIFEXITED(raw); }
bool ExitStatus::signaled() const { return WIFSIGNALED(raw); }
int ExitStatus::exit_code() const { return WEXITSTATUS(raw); }
int ExitStatus::signal() const { return WTERMSIG(raw); }
int ExitStatus::shell_code() const {
  if (exited()) return exit_code();
  if (signaled()) return 128 + signal();
  return -1;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal " + std::to_string(sig);
  }
}

std::string ExitStatus::describe() const {
  if (signaled()) return "killed by signal " + std::to_string(signal()) + " (" + signal_name(signal()) + ")";
  if (exited()) return "exited with status " + std::to_string(exit_code());
  return "ended (status " + std::to_string(raw) + ")";
}

bool try_wait(pid_t pid, ExitStatus* status) {
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      status->raw = st;
      note_reaped(pid);
      return true;
    }
    if (r == 0) return false;
    if (errno == EINTR) continue;
    throw InfraError("waitpid(" + std::to_string(pid) + "): " + errno_text(errno));
  }
}

ExitStatus wait_exit(pid_t pid) {
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) throw InfraError("waitpid(" + std::to_string(pid) + "): " + errno_text(errno));
  }
  note_reaped(pid);
  return ExitStatus{st};
}

void kill_group(pid_t pid, int sig) {
  if (pid <= 0) return;
  ::kill(-pid, sig);
  ::kill(pid, sig);
}

bool kill_and_reap(pid_t pid, double give_up_s, ExitStatus* status) {
  kill_group(pid, SIGKILL);
  const auto t0 = Clock::now();
  while (seconds_since(t0) < give_up_s) {
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      status->raw = st;
      note_reaped(pid);
      end_group(pid);
      return true;
    }
    if (r < 0 && errno != EINTR) return false;  // already reaped elsewhere: status unknown
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

RunResult run(const SpawnSpec& spec, const RunOptions& opt) {
  if (spec.stdin_mode == SpawnSpec::Stdin::kPipe)
    throw InfraError("cannot start " + (spec.argv.empty() ? std::string("a process") : spec.argv[0]) +
                     ": run() gives no stdin pipe (use spawn)");
  RunResult res;
  const auto t0 = Clock::now();
  Spawned sp = spawn(spec);
  FdList ends{{&sp.out, &sp.err}};
  const bool own_group = spec.group != SpawnSpec::Group::kInherit;
  auto signal_child = [&](int sig) {
    if (own_group) kill_group(sp.pid, sig);
    else ::kill(sp.pid, sig);
  };
  bool exited = false;  // the child has ended (not yet reaped: its pid keeps the group id)
  bool stopping = false;
  Clock::time_point kill_at{};
  char buf[65536];
  for (;;) {
    if (!exited) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(sp.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno != EINTR) {
        const int e = errno;
        kill_group(sp.pid, SIGKILL);
        throw InfraError("waitid(" + std::to_string(sp.pid) + "): " + errno_text(e));
      }
      if (info.si_pid == sp.pid) {
        exited = true;
        // Background jobs it left in its group die with it (the zombie still holds the
        // group id, so this cannot reach another group).
        if (own_group && opt.kill_leftovers) ::kill(-sp.pid, SIGKILL);
      }
    }
    if (exited && sp.out < 0 && sp.err < 0) break;
    const double elapsed = seconds_since(t0);
    const bool interrupted = opt.interrupted != nullptr && opt.interrupted->load();
    if (!stopping && ((opt.deadline_s > 0 && elapsed >= opt.deadline_s) || interrupted)) {
      stopping = true;
      res.timed_out = !interrupted;
      res.interrupted = interrupted;
      signal_child(SIGTERM);
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(opt.term_grace_s));
    }
    if (stopping && Clock::now() >= kill_at) kill_group(sp.pid, SIGKILL);
    pollfd pf[2];
    nfds_t n = 0;
    if (sp.out >= 0) pf[n++] = {sp.out, POLLIN, 0};
    if (sp.err >= 0) pf[n++] = {sp.err, POLLIN, 0};
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const int rc = ::poll(pf, n, 20);
    if (rc <= 0) continue;
    for (nfds_t i = 0; i < n; ++i) {
      if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int* fd = pf[i].fd == sp.out ? &sp.out : &sp.err;
      std::string* into = fd == &sp.out ? &res.out : &res.err;
      const ssize_t got = ::read(*fd, buf, sizeof buf);
      if (got > 0) into->append(buf, static_cast<std::size_t>(got));
      else if (got == 0 || (errno != EINTR && errno != EAGAIN)) close_fd(fd);
    }
  }
  res.status = wait_exit(sp.pid);
  res.elapsed_s = seconds_since(t0);
  return res;
}

// ---- processes that left their worker ----------------------------------------------

namespace {

struct ProcInfo {
  pid_t pid = -1;
  pid_t ppid = -1;
  pid_t sid = -1;
  pid_t pgrp = -1;
  char state = 0;  // 'Z': exited, not yet reaped
};

// pid, ppid, session and group of every process (/proc/PID/stat; the command may hold spaces
// and parentheses, so the fields are read after its last ')').
std::vector<ProcInfo> list_processes() {
  std::vector<ProcInfo> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0, sid = 0;
    if (!(rest >> state >> ppid >> pgrp >> sid)) continue;
    out.push_back({static_cast<pid_t>(std::atol(e->d_name)), static_cast<pid_t>(ppid), static_cast<pid_t>(sid),
                   static_cast<pid_t>(pgrp), state});
  }
  ::closedir(d);
  return out;
}

std::string command_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (char& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s.empty() ? "(exited)" : s;
}

// Waits (a while) for an orphan kgate adopted, after SIGKILL, and reaps it.
void reap_orphan(pid_t pid) {
  int st = 0;
  for (int i = 0; i < 200 && ::waitpid(pid, &st, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

}  // namespace

void end_group(pid_t pgid) {
  if (pgid <= 0) return;
  ::kill(-pgid, SIGKILL);
  if (!g_adopting) return;
  // The group's processes die after their leader and are handed to kgate as they do:
  // reaped here until none is left (or a second has passed: one stuck in the kernel).
  const pid_t self = ::getpid();
  const auto t0 = Clock::now();
  for (;;) {
    std::vector<ProcInfo> all;
    std::set<pid_t> live;
    {
      std::lock_guard<std::mutex> lock(g_children_mu);
      all = list_processes();
      live = live_children();
    }
    bool any = false;
    for (const auto& p : all) {
      if (p.pgrp != pgid || live.count(p.pid) != 0) continue;
      any = true;
      if (p.ppid == self) {
        int st = 0;
        ::waitpid(p.pid, &st, WNOHANG);
      }
    }
    if (!any || seconds_since(t0) > 1.0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void adopt_orphans() {
  sandbox_support();  // its probe forks: done before any orphan is looked for
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) g_adopting = true;
}

std::vector<StrayProcess> kill_strays(pid_t root) {
  std::vector<StrayProcess> found;
  const pid_t self = ::getpid();
  std::vector<ProcInfo> all;
  std::set<pid_t> live;
  {
    std::lock_guard<std::mutex> lock(g_children_mu);  // no spawn() between the two reads
    all = list_processes();
    live = live_children();
  }
  // (a) below root, in another session: walk root's descendants.
  pid_t root_sid = -1;
  for (const auto& p : all)
    if (p.pid == root) root_sid = p.sid;
  if (root > 0 && root_sid > 0) {
    std::set<pid_t> below{root};
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& p : all)
        if (below.count(p.ppid) != 0 && below.insert(p.pid).second) grew = true;
    }
    for (const auto& p : all)
      if (p.pid != root && below.count(p.pid) != 0 && p.sid != root_sid)
        found.push_back({p.pid, command_of(p.pid), "in a session of its own below the worker"});
  }
  // (b) orphans handed to kgate: its children that spawn() did not start. One that has
  // already exited left nothing running (a dead worker's group member that died after
  // end_group gave up on it, on a loaded machine): it is reaped, not charged to anyone.
  if (g_adopting)
    for (const auto& p : all) {
      if (p.ppid != self || live.count(p.pid) != 0) continue;
      if (p.state == 'Z') {
        int st = 0;
        ::waitpid(p.pid, &st, WNOHANG);
        continue;
      }
      found.push_back({p.pid, command_of(p.pid), "orphaned to kgate"});
    }
  for (const auto& s : found) {
    ::kill(-s.pid, SIGKILL);  // its group, when it leads one
    ::kill(s.pid, SIGKILL);
  }
  // Reap the ones that are kgate's children (orphans); the rest go to their parents.
  for (const auto& s : found)
    if (s.how == "orphaned to kgate") reap_orphan(s.pid);
  return found;
}

}  // namespace kgate::core

#include "core/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::core {
namespace {

namespace fs = std::filesystem;

// The kernel's Landlock ABI (include/uapi/linux/landlock.h), declared here because the
// system headers may predate the fields kgate uses (network rules: ABI 4, scopes: ABI 6).
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
struct PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

constexpr long kSysCreateRuleset = 444;
constexpr long kSysAddRule = 445;
constexpr long kSysRestrictSelf = 446;
constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr unsigned kRestrictSelfTsync = 1U << 3;  // ABI 8: every thread of the process

// Write-side file rights, by the ABI that introduced them. Reading and executing are
// never restricted (the candidate reads its inputs, Python its modules).
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsAbi1Write = kFsWriteFile | (1ULL << 4) /*remove dir*/ | (1ULL << 5) /*remove file*/ |
                                       (1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (1ULL << 9) | (1ULL << 10) |
                                       (1ULL << 11) | (1ULL << 12) /*make char..sym*/;
constexpr std::uint64_t kFsRefer = 1ULL << 13;     // ABI 2
constexpr std::uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;    // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

std::uint64_t fs_rights(int abi) {
  std::uint64_t r = kFsAbi1Write;
  if (abi >= 2) r |= kFsRefer;
  if (abi >= 3) r |= kFsTruncate;
  return r;
}

// Adds "these rights beneath `dir`" to the ruleset: 0, the rule's errno, or minus the
// errno of opening `dir`. Async-signal-safe (the child calls it after fork).
int allow_beneath(int ruleset_fd, const char* dir, std::uint64_t rights) {
  const int dfd = ::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return -errno;
  PathBeneathAttr rule{};
  rule.allowed_access = rights;
  rule.parent_fd = dfd;
  const long r = ::syscall(kSysAddRule, ruleset_fd, kRulePathBeneath, &rule, 0U);
  const int e = r != 0 ? errno : 0;
  ::close(dfd);
  return e;
}

std::size_t attr_size(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

int probe_landlock(std::string* note) {
  const long abi = ::syscall(kSysCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  if (abi > 0) return static_cast<int>(abi);
  const int e = errno;
  if (e == ENOSYS) *note = "Landlock is not in this kernel (ENOSYS)";
  else if (e == EOPNOTSUPP) *note = "Landlock is disabled at boot (add landlock to lsm=)";
  else *note = std::string("Landlock unavailable: ") + std::strerror(e);
  return 0;
}

// Whether the running kernel's release is at least major.minor.
bool kernel_at_least(int major, int minor) {
  struct utsname u {};
  if (::uname(&u) != 0) return false;
  int a = 0, b = 0;
  if (std::sscanf(u.release, "%d.%d", &a, &b) != 2) return false;
  return a > major || (a == major && b >= minor);
}

bool write_all(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t n = std::strlen(text);
  const bool ok = ::write(fd, text, n) == static_cast<ssize_t>(n);
  ::close(fd);
  return ok;
}

// How the task cap of `s` holds here: RLIMIT_NPROC counted in the worker's own user
// namespace, or a pids cgroup of its own (root); kNone with `why` it cannot.
struct TaskCap {
  enum How { kNone, kUserNamespace, kPidsCgroup } how = kNone;
  std::string why;
  const char* name() const {
    return how == kUserNamespace ? "own user namespace" : how == kPidsCgroup ? "pids cgroup" : "";
  }
};
TaskCap task_cap(const Sandbox& s, const SandboxSupport& sup) {
  if (::geteuid() == 0) {
    if (!sup.pids_cgroup.empty()) return {TaskCap::kPidsCgroup, ""};
    return {TaskCap::kNone, "root; " + sup.pids_note};
  }
  if (!s.isolate_network || !sup.net_namespace) return {TaskCap::kNone, "no user namespace"};
  if (!sup.tasks_per_namespace) return {TaskCap::kNone, "Linux < 5.14 counts every process of the user"};
  return {TaskCap::kUserNamespace, ""};
}

// The pids controller's directory of this process's cgroup, from /proc/self/mountinfo and
// /proc/self/cgroup: a v1 hierarchy with pids among its controllers, else the v2 one with
// pids enabled for its children. "" with *note when none.
std::string find_pids_cgroup(std::string* note) {
  std::ifstream cg("/proc/self/cgroup");
  std::string v1_path, v2_path, line;
  bool have_v2 = false;
  while (std::getline(cg, line)) {
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string ctrls = "," + line.substr(a + 1, b - a - 1) + ",";
    if (ctrls.find(",pids,") != std::string::npos) v1_path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && b == a + 1) {
      have_v2 = true;
      v2_path = line.substr(b + 1);
    }
  }
  std::ifstream mi("/proc/self/mountinfo");
  while (std::getline(mi, line)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::istringstream in(line);
    std::string id, parent, dev, root, point, word;
    in >> id >> parent >> dev >> root >> point;
    while (in >> word && word != "-") {
    }
    std::string fstype, source, super;
    in >> fstype >> source >> super;
    const bool v1 = fstype == "cgroup" && !v1_path.empty() &&
                    ("," + super + ",").find(",pids,") != std::string::npos;
    const bool v2 = fstype == "cgroup2" && have_v2 && v1_path.empty();
    if (!v1 && !v2) continue;
    std::string path = v1 ? v1_path : v2_path;
    // A mount of a sub-tree (a container's): the process's path relative to its root.
    if (root != "/" && path.compare(0, root.size(), root) == 0) path = path.substr(root.size());
    std::string dir = (fs::path(point) / fs::path(path).relative_path()).lexically_normal().string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (v2) {
      if (read_file(dir + "/cgroup.subtree_control").bytes.find("pids") == std::string::npos) {
        *note = "no pids cgroup: the pids controller is not enabled for the children of " + dir;
        return "";
      }
    }
    return dir;
  }
  *note = "no pids cgroup mounted";
  return "";
}

// Makes the cgroup `dir` with pids.max `max`; "" or why not.
std::string make_pids_cgroup(const std::string& dir, std::uint64_t max) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return "cannot make " + dir + ": " + std::strerror(errno);
  if (!write_all((dir + "/pids.max").c_str(), (std::to_string(max) + "\n").c_str())) {
    ::rmdir(dir.c_str());
    return "cannot write " + dir + "/pids.max";
  }
  return "";
}

// The pids cgroup kgate (root) can make per worker: found, then tried once with a cgroup
// of its own that it removes at once.
std::string probe_pids_cgroup(std::string* note) {
  if (::geteuid() != 0) {
    *note = "not root (the task cap is a user namespace's)";
    return "";
  }
  const std::string base = find_pids_cgroup(note);
  if (base.empty()) return "";
  const std::string probe = base + "/kgate-probe-" + std::to_string(::getpid());
  if (std::string why = make_pids_cgroup(probe, 4096); !why.empty()) {
    *note = "no pids cgroup: " + why;
    return "";
  }
  ::rmdir(probe.c_str());
  // Cgroups an earlier kgate left (killed before its exit removed them): kgate-<pid>-<n>
  // of a process that is gone and with no task left in them.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    long pid = 0;
    if (std::sscanf(name.c_str(), "kgate-%ld-", &pid) == 1 && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
        errno == ESRCH)
      ::rmdir(e.path().c_str());
  }
  return base;
}

std::mutex g_cgroups_mu;
std::vector<std::string> g_cgroups;  // the workers' pids cgroups kgate made, not yet removed
std::uint64_t g_cgroup_serial = 0;

// Whether a child can get a network namespace (a forked child tries; nothing else is
// touched).
bool probe_net_namespace(std::string* note) {
  const bool root = ::geteuid() == 0;
  const pid_t pid = ::fork();
  if (pid < 0) {
    *note = std::string("cannot probe: fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    const int flags = root ? CLONE_NEWNET : (CLONE_NEWUSER | CLONE_NEWNET);
    ::_exit(::unshare(flags) == 0 ? 0 : (errno & 0x7f) + 1);
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
  const int e = WIFEXITED(st) ? WEXITSTATUS(st) - 1 : 0;
  *note = std::string("no network namespace: unshare: ") + (e > 0 ? std::strerror(e) : "child died") +
          (root ? "" : " (unprivileged user namespaces may be disabled)");
  return false;
}

std::mutex g_hidden_mu;
std::set<std::string>& hidden_names() {
  static auto* names = new std::set<std::string>;  // never destroyed: spawns at exit read it
  return *names;
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

}  // namespace

const SandboxSupport& sandbox_support() {
  static const SandboxSupport support = [] {
    SandboxSupport s;
    s.landlock_abi = probe_landlock(&s.landlock_note);
    s.net_namespace = probe_net_namespace(&s.net_note);
    s.tasks_per_namespace = kernel_at_least(5, 14);
    s.pids_cgroup = probe_pids_cgroup(&s.pids_note);
    return s;
  }();
  return support;
}

// A number of MiB from the environment, in bytes (unset or empty: 0); UsageError otherwise.
static std::uint64_t mib_from_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || *v == '-')
    throw UsageError(std::string(name) + "=" + v + ": expected a number of MiB (0: no cap)");
  return static_cast<std::uint64_t>(mb) << 20;
}

Sandbox sandbox_from_env() {
  Sandbox s;
  const char* v = std::getenv("KGATE_SANDBOX");
  const std::string mode = v != nullptr ? v : "";
  if (mode == "off" || mode == "0") return s;
  if (!mode.empty() && mode != "on" && mode != "1" && mode != "auto" && mode != "strict")
    throw UsageError("KGATE_SANDBOX=" + mode + ": expected off, on, auto or strict");
  s.enabled = true;
  s.strict = mode == "strict";
  s.max_gpu_memory = mib_from_env("KGATE_SANDBOX_GPU_MEMORY_MB");
  return s;
}

bool secret_like(std::string_view name) {
  const std::string u = upper(name);
  for (const char* part : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY",
                           "ACCESS_KEY", "PRIVATE_KEY"})
    if (u.find(part) != std::string::npos) return true;
  if (u.size() > 4 && u.compare(u.size() - 4, 4, "_KEY") == 0) return true;
  for (const char* prefix : {"AWS_", "ACTIONS_RUNTIME_", "ACTIONS_ID_TOKEN_"})
    if (u.rfind(prefix, 0) == 0) return true;
  return u == "SSH_AUTH_SOCK";
}

void hide_from_children(const std::string& name) {
  if (name.empty()) return;
  std::lock_guard<std::mutex> lock(g_hidden_mu);
  hidden_names().insert(name);
}

std::vector<std::string> scrub_environment(std::map<std::string, std::string>& env) {
  std::set<std::string> hidden;
  {
    std::lock_guard<std::mutex> lock(g_hidden_mu);
    hidden = hidden_names();
  }
  std::vector<std::string> removed;
  for (auto it = env.begin(); it != env.end();) {
    if (secret_like(it->first) || hidden.count(it->first) != 0) {
      removed.push_back(it->first);
      it = env.erase(it);
    } else {
      ++it;
    }
  }
  return removed;
}

std::uint64_t host_address_space_cap() {
  if (const char* v = std::getenv("KGATE_SANDBOX_MEMORY_MB"); v && *v) return mib_from_env("KGATE_SANDBOX_MEMORY_MB");
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
}

namespace {

// The number after `key` on the first line of `path` that starts with it; -1 when none.
long long proc_field(const std::string& path, const char* key) {
  std::ifstream in(path);
  std::string line;
  const std::size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) != 0) continue;
    unsigned long long v = 0;
    if (std::sscanf(line.c_str() + n, " %llu", &v) == 1) return static_cast<long long>(v);
  }
  return -1;
}

std::uint64_t meminfo_bytes(const std::string& meminfo, const char* key) {
  const long long kb = proc_field(meminfo, key);
  return kb < 0 ? 0 : static_cast<std::uint64_t>(kb) << 10;
}

}  // namespace

std::uint64_t host_memory_available(const std::string& meminfo) { return meminfo_bytes(meminfo, "MemAvailable:"); }

std::uint64_t host_memory_total(const std::string& meminfo) { return meminfo_bytes(meminfo, "MemTotal:"); }

std::int64_t oom_kill_count(const std::string& vmstat) { return proc_field(vmstat, "oom_kill "); }

std::uint64_t memory_cgroup_limit(const std::string& proc_cgroup, const std::string& root) {
  std::ifstream in(proc_cgroup);
  std::string line;
  std::vector<std::string> files;  // v2 first: a hybrid host lists both
  while (std::getline(in, line)) {
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (line.compare(0, c1, "0") == 0 && controllers.empty())
      files.insert(files.begin(), root + path + "/memory.max");
    else if (("," + controllers + ",").find(",memory,") != std::string::npos)
      files.push_back(root + "/memory" + path + "/memory.limit_in_bytes");
  }
  for (const auto& f : files) {
    std::ifstream lim(f);
    std::string v;
    if (!(lim >> v) || v == "max") continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    // v1 says "unlimited" with a number near 2^63.
    if (end && *end == '\0' && n > 0 && n < (1ull << 62)) return static_cast<std::uint64_t>(n);
  }
  return 0;
}

std::string describe(const Sandbox& s) {
  if (!s.enabled) return "off (KGATE_SANDBOX=off)";
  const SandboxSupport& sup = sandbox_support();
  std::string d = "files: ";
  if (s.writable.empty()) d += "not restricted";
  else if (sup.landlock_abi > 0)
    d += "writable only beneath " + std::to_string(s.writable.size()) + " directories (Landlock ABI " +
         std::to_string(sup.landlock_abi) + ")";
  else d += "NOT protected (" + sup.landlock_note + ")";
  d += "; network: ";
  if (!s.isolate_network) d += "allowed";
  else if (sup.net_namespace) d += "none (own network namespace)";
  else if (sup.landlock_abi >= 4) d += "no TCP (Landlock; " + sup.net_note + ")";
  else d += "NOT isolated (" + sup.net_note + ")";
  d += "; signals: ";
  d += s.scope_signals && sup.landlock_abi >= 6 ? "only inside the sandbox" : "not scoped";
  d += "; limits: nofile " + std::to_string(s.max_open_files) + (s.core_dumps ? "" : ", core 0");
  if (s.max_address_space > 0) d += ", address space " + std::to_string(s.max_address_space >> 20) + " MiB";
  if (s.max_gpu_memory > 0) d += ", GPU memory " + std::to_string(s.max_gpu_memory >> 20) + " MiB (Python worker)";
  if (s.max_tasks > 0) {
    const TaskCap cap = task_cap(s, sup);
    d += cap.how != TaskCap::kNone ? ", tasks " + std::to_string(s.max_tasks) + " (" + cap.name() + ")"
                                   : ", tasks not capped (" + cap.why + ")";
  }
  d += "; environment: secrets removed";
  return d;
}

SandboxPlan prepare_sandbox(const Sandbox& s) {
  SandboxPlan p;
  if (!s.enabled) return p;
  p.active = true;
  const SandboxSupport& sup = sandbox_support();
  auto refuse = [&](const std::string& what) {
    throw InfraError("sandbox (KGATE_SANDBOX=strict): " + what + "; KGATE_SANDBOX=on runs without it");
  };
  // Network: a namespace when possible, else Landlock's TCP rules below.
  bool net_by_landlock = false;
  if (s.isolate_network) {
    if (sup.net_namespace) {
      p.unshare_net = true;
      p.unshare_user = ::geteuid() != 0;
      std::snprintf(p.uid_map, sizeof p.uid_map, "%u %u 1\n", ::geteuid(), ::geteuid());
      std::snprintf(p.gid_map, sizeof p.gid_map, "%u %u 1\n", ::getegid(), ::getegid());
    } else if (sup.landlock_abi >= 4) {
      net_by_landlock = true;
    } else if (s.strict) {
      refuse("the network cannot be isolated: " + sup.net_note);
    }
  }
  // Limits.
  p.no_core = !s.core_dumps;
  const TaskCap cap = s.max_tasks > 0 ? task_cap(s, sup) : TaskCap{};
  if (cap.how == TaskCap::kUserNamespace) p.nproc = s.max_tasks;
  if (cap.how == TaskCap::kPidsCgroup) {
    remove_worker_cgroups();
    std::string dir;
    {
      std::lock_guard<std::mutex> lock(g_cgroups_mu);
      dir = sup.pids_cgroup + "/kgate-" + std::to_string(::getpid()) + "-" + std::to_string(++g_cgroup_serial);
    }
    std::string why = make_pids_cgroup(dir, s.max_tasks);
    static std::once_flag at_exit;
    std::call_once(at_exit, [] { std::atexit(remove_worker_cgroups); });
    if (why.empty()) {
      p.cgroup_procs_fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
      if (p.cgroup_procs_fd < 0) why = "cannot open " + dir + "/cgroup.procs: " + std::strerror(errno);
      p.cgroup_dir = dir;
      std::lock_guard<std::mutex> lock(g_cgroups_mu);
      g_cgroups.push_back(dir);
    }
    if (!why.empty() && s.strict) refuse("the tasks cannot be capped: " + why);
  }
  struct rlimit cur {};
  if (s.max_open_files > 0 && ::getrlimit(RLIMIT_NOFILE, &cur) == 0)
    p.nofile = std::min<std::uint64_t>(s.max_open_files, cur.rlim_max);
  p.as_bytes = s.max_address_space;
  // Files (and TCP, signals): one Landlock ruleset.
  const bool want_fs = !s.writable.empty();
  const bool want_scope = s.scope_signals && sup.landlock_abi >= 6;
  if (sup.landlock_abi == 0) {
    if (s.strict && want_fs) refuse("files cannot be protected: " + sup.landlock_note);
    return p;
  }
  if (!want_fs && !net_by_landlock && !want_scope) return p;
  const int abi = sup.landlock_abi;
  RulesetAttr attr{};
  if (want_fs) attr.handled_access_fs = p.fs_rights = fs_rights(abi);
  if (net_by_landlock) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (want_scope) attr.scoped = kScopeSignal | kScopeAbstractUnix;
  const long fd = ::syscall(kSysCreateRuleset, &attr, attr_size(abi), 0U);
  if (fd < 0) throw InfraError(std::string("sandbox: cannot create the Landlock ruleset: ") + std::strerror(errno));
  p.ruleset_fd = static_cast<int>(fd);
  ::fcntl(p.ruleset_fd, F_SETFD, FD_CLOEXEC);
  if (want_fs) {
    for (const std::string& dir : s.writable) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      const int e = allow_beneath(p.ruleset_fd, dir.c_str(), attr.handled_access_fs);
      if (e < 0) continue;  // cannot exist here (a read-only parent): nothing to allow
      if (e != 0) {
        release(p);
        throw InfraError("sandbox: cannot allow writes beneath " + dir + ": " + std::strerror(e));
      }
    }
  }
  return p;
}

std::string narrow_writes_in_process(const std::vector<std::string>& dirs, bool* every_thread) {
  if (every_thread) *every_thread = false;
  const int abi = sandbox_support().landlock_abi;
  if (abi == 0) return "no Landlock: " + sandbox_support().landlock_note;
  RulesetAttr attr{};
  attr.handled_access_fs = fs_rights(abi);
  const long fd = ::syscall(kSysCreateRuleset, &attr, attr_size(abi), 0U);
  if (fd < 0) return std::string("cannot create a Landlock ruleset: ") + std::strerror(errno);
  const int rfd = static_cast<int>(fd);
  std::string why;
  std::vector<std::string> all = dirs;
  all.emplace_back("/proc/self");  // the CUDA driver writes beneath it (see apply_in_child)
  for (const std::string& dir : all) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (const int e = allow_beneath(rfd, dir.c_str(), attr.handled_access_fs); e != 0) {
      why = "cannot allow writes beneath " + dir + ": " + std::strerror(e < 0 ? -e : e);
      break;
    }
  }
  // no_new_privs is already set in a sandboxed worker; Landlock requires it of a process
  // without CAP_SYS_ADMIN.
  if (why.empty() && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    why = std::string("cannot set no_new_privs: ") + std::strerror(errno);
  const unsigned flags = abi >= 8 ? kRestrictSelfTsync : 0U;
  if (why.empty() && ::syscall(kSysRestrictSelf, rfd, flags) != 0)
    why = std::string("cannot restrict the process: ") + std::strerror(errno);
  ::close(rfd);
  if (why.empty() && every_thread) {
    std::error_code ec;
    const auto n = std::distance(fs::directory_iterator("/proc/self/task", ec), fs::directory_iterator());
    *every_thread = flags != 0 || (!ec && n == 1);
  }
  return why;
}

void release(SandboxPlan& plan) {
  if (plan.ruleset_fd >= 0) ::close(plan.ruleset_fd);
  plan.ruleset_fd = -1;
  if (plan.cgroup_procs_fd >= 0) ::close(plan.cgroup_procs_fd);
  plan.cgroup_procs_fd = -1;
}

void remove_worker_cgroups() {
  std::lock_guard<std::mutex> lock(g_cgroups_mu);
  // rmdir fails (EBUSY) while a task is in it: that one stays for the next call.
  g_cgroups.erase(std::remove_if(g_cgroups.begin(), g_cgroups.end(),
                                 [](const std::string& d) { return ::rmdir(d.c_str()) == 0 || errno == ENOENT; }),
                  g_cgroups.end());
}

int apply_in_child(const SandboxPlan& plan, int* stage) {
  if (!plan.active) return 0;
  *stage = 2;
  if (plan.cgroup_procs_fd >= 0) {
    // Into the worker's pids cgroup, before anything else: all it starts is counted there
    // ("0" names the writing process, in cgroup v1 and v2 alike).
    if (::write(plan.cgroup_procs_fd, "0\n", 2) != 2) return errno != 0 ? errno : EIO;
  }
  *stage = 1;
  if (plan.unshare_net) {
    const int flags = plan.unshare_user ? (CLONE_NEWUSER | CLONE_NEWNET) : CLONE_NEWNET;
    if (::unshare(flags) != 0) return errno;
    if (plan.unshare_user) {
      // Map the user to itself: files keep their owners, the process its identity.
      if (!write_all("/proc/self/setgroups", "deny") || !write_all("/proc/self/uid_map", plan.uid_map) ||
          !write_all("/proc/self/gid_map", plan.gid_map))
        return errno != 0 ? errno : EPERM;
    }
  }
  *stage = 2;
  if (plan.no_core) {
    struct rlimit r {0, 0};
    if (::setrlimit(RLIMIT_CORE, &r) != 0) return errno;
  }
  if (plan.nofile > 0) {
    struct rlimit r {};
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0) {
      r.rlim_cur = std::min<rlim_t>(r.rlim_cur, plan.nofile);
      r.rlim_max = std::min<rlim_t>(r.rlim_max, plan.nofile);
      if (::setrlimit(RLIMIT_NOFILE, &r) != 0) return errno;
    }
  }
  if (plan.as_bytes > 0) {
    struct rlimit r {plan.as_bytes, plan.as_bytes};
    if (::setrlimit(RLIMIT_AS, &r) != 0) return errno;
  }
  if (plan.nproc > 0) {
    // Counted in the namespace entered above: this process and what it starts, not the
    // user's other processes.
    struct rlimit r {plan.nproc, plan.nproc};
    if (::setrlimit(RLIMIT_NPROC, &r) != 0) return errno;
  }
  *stage = 3;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  *stage = 4;
  if (plan.ruleset_fd >= 0) {
    if (plan.fs_rights != 0) {
      // Its own /proc/<pid> (known only here, after fork): the CUDA driver writes beneath
      // it at cuInit. What lies there is the process's own; a magic link in it (fd/N,
      // cwd) is judged by the file it leads to.
      if (const int e = allow_beneath(plan.ruleset_fd, "/proc/self", plan.fs_rights); e != 0) return e < 0 ? -e : e;
    }
    if (::syscall(kSysRestrictSelf, plan.ruleset_fd, 0U) != 0) return errno;
    ::close(plan.ruleset_fd);
  }
  *stage = 0;
  return 0;
}

const char* sandbox_stage_name(int stage) {
  switch (stage) {
    case 1: return "the network namespace";
    case 2: return "the resource limits";
    case 3: return "no_new_privs";
    case 4: return "the Landlock ruleset";
    default: return "the sandbox";
  }
}

}  // namespace kgate::core

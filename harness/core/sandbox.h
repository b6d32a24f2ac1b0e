#pragma once
// The sandbox kgate puts its workers in (kgate-native, the Python worker, and what they
// start: the compilers, Inductor's compile workers). The candidate's code runs inside a
// worker, so whatever it does goes through these walls:
//   - files: read anywhere, write only beneath `writable` (Landlock, Linux >= 5.13,
//     unprivileged): the problem, the suite, the starter and best copies under
//     OUT/state, the records and the harness itself are read-only to the candidate;
//   - network: none (a fresh network namespace: no interface but a loopback that is
//     down; unprivileged through a user namespace), else Landlock's TCP rules (>= 6.7)
//     refuse every TCP connect and bind;
//   - signals: none to processes outside the sandbox (Landlock scope, >= 6.12): the
//     candidate cannot stop or kill kgate;
//   - limits: no core dumps, a cap on open files, optionally on address space (host
//     workers: a huge allocation fails in the candidate instead of swapping the runner),
//     and on tasks (processes and threads: a fork bomb stops at the cap): where the worker
//     has a user namespace of its own (not root; RLIMIT_NPROC counts per namespace from
//     Linux 5.14), and for root, whose tasks RLIMIT_NPROC never limits, through a pids
//     cgroup of the worker's own where kgate may make one;
//   - environment: secrets removed (names that look like keys or tokens, and every name
//     registered with hide_from_children(): the http agent's API key).
// What the kernel cannot do here is skipped and said (describe()); KGATE_SANDBOX=strict
// refuses to start a worker instead, KGATE_SANDBOX=off turns the sandbox off.
//
// Applied by core::spawn (SpawnSpec::sandbox): everything is prepared before fork (the
// ruleset is built in the parent); the child only makes system calls.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kgate::core {

struct Sandbox {
  bool enabled = false;
  // Directories beneath which the child may create, change and remove files (created
  // when missing). Everything else is read-only to it. Empty: no file rule.
  std::vector<std::string> writable;
  bool isolate_network = true;
  bool scope_signals = true;            // no signals to processes outside the sandbox
  std::uint64_t max_open_files = 4096;  // RLIMIT_NOFILE (never raised above the current)
  std::uint64_t max_address_space = 0;  // RLIMIT_AS in bytes, 0 = no cap (CUDA maps huge ranges)
  bool core_dumps = false;              // RLIMIT_CORE 0 unless true
  // Device memory a Python worker may take (KGATE_SANDBOX_GPU_MEMORY_MB), 0 = no cap. Kept
  // by the worker itself: torch's allocator capped before candidate code runs, the cap
  // checked after every call (a candidate that changes it is rejected), the lint's
  // memory-cap rule. Not applied by spawn.
  std::uint64_t max_gpu_memory = 0;
  // Tasks (processes and threads) the worker and everything it starts may have at once.
  // kgate not root: RLIMIT_NPROC inside a user namespace of the worker's own, where the
  // kernel counts that namespace's tasks alone (Linux >= 5.14); outside one it would count
  // every process of the user. Root, whose tasks RLIMIT_NPROC never limits (in a user
  // namespace mapped to root either): pids.max of a pids cgroup made for the worker
  // (SandboxSupport::pids_cgroup). 0 = no cap.
  std::uint64_t max_tasks = 4096;
  bool strict = false;                  // a wall the kernel cannot build: refuse to start

  bool operator==(const Sandbox&) const = default;
};

// What this kernel lets kgate build, probed once per process.
struct SandboxSupport {
  int landlock_abi = 0;      // 0: no Landlock (why in landlock_note)
  bool net_namespace = false;  // unshare(CLONE_NEWNET), with a user namespace when not root
  bool tasks_per_namespace = false;  // Linux >= 5.14: RLIMIT_NPROC counts per user namespace
  // Root only: the pids cgroup (v1 controller, or v2 with pids delegated to its children)
  // kgate runs in, beneath which it made and removed a cgroup; "" when none (pids_note).
  std::string pids_cgroup;
  std::string landlock_note;
  std::string net_note;
  std::string pids_note;
};
const SandboxSupport& sandbox_support();

// KGATE_SANDBOX: "off" (no sandbox), "strict" (refuse what cannot be built), anything
// else or unset: on, with what the kernel supports. Throws UsageError for a value that
// is none of off/on/auto/strict, or for a KGATE_SANDBOX_GPU_MEMORY_MB that is not a
// number of MiB (max_gpu_memory; unset or 0: no cap).
Sandbox sandbox_from_env();

// A variable name that looks like a secret: *TOKEN*, *SECRET*, *PASSWORD*, *PASSWD*,
// *CREDENTIAL*, *API_KEY*, *APIKEY*, *ACCESS_KEY*, *PRIVATE_KEY*, *_KEY, AWS_*,
// SSH_AUTH_SOCK, ACTIONS_RUNTIME_*, ACTIONS_ID_TOKEN_* (case-insensitive).
bool secret_like(std::string_view name);
// Names removed from every sandboxed child's environment besides the secret-like ones
// (the http agent registers the variable holding its key).
void hide_from_children(const std::string& name);
// Removes what a sandboxed child must not see from `env`; returns the removed names.
std::vector<std::string> scrub_environment(std::map<std::string, std::string>& env);

// Half the machine's memory, or KGATE_SANDBOX_MEMORY_MB (0: no cap; UsageError when not a
// number): the address space a native host worker, and the candidate in it, may map.
// kgate validate checks a problem's host_bench against it.
std::uint64_t host_address_space_cap();
// MemAvailable of `meminfo` (/proc/meminfo) in bytes: what this machine can give a worker
// now without swapping. 0 when unknown (no such file or line).
std::uint64_t host_memory_available(const std::string& meminfo = "/proc/meminfo");
// MemTotal of `meminfo` in bytes; 0 when unknown.
std::uint64_t host_memory_total(const std::string& meminfo = "/proc/meminfo");
// How many processes the kernel's OOM killer has ended since boot (`oom_kill` of
// /proc/vmstat, Linux 4.13 and later; a memory cgroup's kills count too); -1 when unknown.
// A worker killed by SIGKILL while this count rose was ended for want of memory.
std::int64_t oom_kill_count(const std::string& vmstat = "/proc/vmstat");
// The memory limit of this process's memory cgroup (a container's), in bytes: cgroup v2's
// memory.max, else v1's memory.limit_in_bytes, under `root`, for the cgroup `proc_cgroup`
// names; 0 when there is none, it is unlimited, or it cannot be read.
std::uint64_t memory_cgroup_limit(const std::string& proc_cgroup = "/proc/self/cgroup",
                                  const std::string& root = "/sys/fs/cgroup");

// One line: what the sandbox of `s` holds on this machine. "off" when disabled.
// "files: writable only beneath 4 directories (Landlock ABI 7); network: none (namespace);
//  signals: scoped; limits: nofile 4096, core 0; environment: secrets removed".
std::string describe(const Sandbox& s);

// Removes the pids cgroups kgate made for its workers that no task is left in: called by
// prepare_sandbox before it makes another, by a worker's stop, and at exit (registered
// with atexit when the first one is made).
void remove_worker_cgroups();

// A further Landlock layer on the calling process and everything it starts later: from
// now on it may create, change and remove files only beneath `dirs` (created when
// missing) and its own /proc/<pid>. Layers only narrow what earlier ones allowed. A worker
// calls it before it first runs code it did not write (the compiled candidate), so the
// shared caches it wrote until then become read-only to that code. "" when applied, else
// why not ("no Landlock: ..." when the kernel has none). `every_thread` says whether the
// layer holds for every thread: threads that already exist are covered from Landlock ABI 8
// (TSYNC) on; before that only the calling thread and the threads it starts later are,
// which is all of a single-threaded process.
std::string narrow_writes_in_process(const std::vector<std::string>& dirs, bool* every_thread = nullptr);

// ---- used by core::spawn ---------------------------------------------------------------

// Prepared in the parent before fork; apply_in_child() only makes system calls.
struct SandboxPlan {
  bool active = false;
  int ruleset_fd = -1;  // Landlock ruleset (close-on-exec), -1 = none
  // The file rights the ruleset handles (0: none). The child allows them beneath its own
  // /proc/<pid> too: the CUDA driver writes there (cuInit fails, 304, without it).
  std::uint64_t fs_rights = 0;
  bool unshare_net = false;
  bool unshare_user = false;  // not root: a user namespace first
  char uid_map[64] = {0};
  char gid_map[64] = {0};
  std::uint64_t nofile = 0;
  std::uint64_t as_bytes = 0;
  std::uint64_t nproc = 0;  // RLIMIT_NPROC, set inside the new user namespace
  int cgroup_procs_fd = -1;  // the worker's pids cgroup's cgroup.procs (root), -1 = none
  std::string cgroup_dir;    // that cgroup (removed by remove_worker_cgroups once empty)
  bool no_core = true;
};
// Throws InfraError when `s.strict` and a wall cannot be built, or when the ruleset
// cannot be made. The caller closes plan.ruleset_fd after fork (release()).
SandboxPlan prepare_sandbox(const Sandbox& s);
void release(SandboxPlan& plan);
// In the child, after fork and before exec: async-signal-safe. 0 on success, else the
// errno, with *stage set to what failed (1 namespaces, 2 limits -- the pids cgroup among
// them, 3 no_new_privs, 4 Landlock).
int apply_in_child(const SandboxPlan& plan, int* stage);
const char* sandbox_stage_name(int stage);

}  // namespace kgate::core

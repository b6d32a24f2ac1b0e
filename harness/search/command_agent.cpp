#include "search/command_agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::search {
namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) throw InfraError(p.string() + ": cannot write");
  out << text;
}

// The last `kgate-description:` line of the agent's log; "" when none (or no log).
std::string description_from_log(const std::string& log_path) {
  std::istringstream in(core::read_file(log_path).bytes);
  std::string line, found;
  const std::string key = "kgate-description:";
  while (std::getline(in, line)) {
    auto at = line.find(key);
    if (at == std::string::npos) continue;
    found = line.substr(at + key.size());
    size_t b = found.find_first_not_of(" \t");
    found = b == std::string::npos ? "" : found.substr(b);
  }
  return found;
}

// Kills the whole process group: the agent's own children (editors, compilers, model
// CLIs) must not outlive its turn.
void kill_group(pid_t pid) {
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 40; ++i) {
    int st;
    if (::waitpid(pid, &st, WNOHANG) == pid) {
      ::kill(-pid, SIGKILL);  // stragglers in the group
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);
  int st;
  ::waitpid(pid, &st, 0);
}

}  // namespace

void write_agent_files(const AgentContext& ctx) {
  std::filesystem::path ws(ctx.workspace);
  write_file(ws / "task.md", task_markdown(ctx));
  write_file(ws / "history.tsv", ctx.history_tsv);
  write_file(ws / "feedback.json", ctx.feedback.dump(2) + "\n");
}

CommandAgent::CommandAgent(std::string command, double timeout_s)
    : command_(std::move(command)), timeout_s_(timeout_s) {}

void CommandAgent::prepare(const AgentContext& ctx) { write_agent_files(ctx); }

Proposal CommandAgent::propose(const AgentContext& ctx) {
  Proposal p;
  std::string candidate = (std::filesystem::path(ctx.workspace) / ctx.candidate).string();
  std::filesystem::create_directories(std::filesystem::path(ctx.log_path).parent_path());
  int log_fd = ::open(ctx.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw InfraError(ctx.log_path + ": cannot create the agent log");
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw InfraError("cannot fork the command agent");
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (::chdir(ctx.workspace.c_str()) != 0) ::_exit(127);
    ::setenv("KGATE_CANDIDATE", candidate.c_str(), 1);
    ::setenv("KGATE_WORKSPACE", ctx.workspace.c_str(), 1);
    ::setenv("KGATE_EXPERIMENT", std::to_string(ctx.experiment).c_str(), 1);
    ::setenv("KGATE_PROBLEM", ctx.problem.c_str(), 1);
    ::execl("/bin/sh", "sh", "-c", command_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(log_fd);
  ::setpgid(pid, pid);  // also from the parent: no race with an early kill
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool interrupted = ctx.interrupted && ctx.interrupted->load();
    if (elapsed >= timeout_s_ || interrupted) {
      kill_group(pid);
      p.status = Proposal::Status::kTimeout;
      p.error = interrupted ? "agent stopped: run interrupted"
                            : "agent killed at its timeout of " + std::to_string(timeout_s_) + " s";
      p.description = "command agent timed out";
      return p;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // leftovers the agent started in the background
  std::string desc = description_from_log(ctx.log_path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    p.status = Proposal::Status::kFailed;
    p.error = WIFEXITED(status) ? "agent exited with status " + std::to_string(WEXITSTATUS(status))
                                : "agent killed by signal " + std::to_string(WTERMSIG(status));
    p.description = desc.empty() ? "command agent failed" : desc;
    return p;
  }
  p.description = desc.empty() ? "command agent edit" : desc;
  return p;
}

}  // namespace kgate::search

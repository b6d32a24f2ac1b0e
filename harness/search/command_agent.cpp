#include "search/command_agent.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file_io.h"
#include "core/subprocess.h"

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
  core::SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", command_};
  spec.env = {{"KGATE_CANDIDATE", candidate},
              {"KGATE_WORKSPACE", ctx.workspace},
              {"KGATE_EXPERIMENT", std::to_string(ctx.experiment)},
              {"KGATE_PROBLEM", ctx.problem}};
  spec.cwd = ctx.workspace;
  spec.stdin_mode = core::SpawnSpec::Stdin::kNull;
  spec.stdout_mode = core::SpawnSpec::Output::kFd;
  spec.stderr_mode = core::SpawnSpec::Output::kMerge;
  spec.output_fd = log_fd;
  // Its own process group: the agent's children (editors, compilers, model CLIs) must not
  // outlive its turn. At the timeout the group gets SIGTERM, 2 s later SIGKILL.
  spec.group = core::SpawnSpec::Group::kGroup;
  core::RunOptions opt;
  opt.deadline_s = timeout_s_;
  opt.term_grace_s = 2.0;
  opt.interrupted = ctx.interrupted;
  opt.kill_leftovers = true;  // what the agent started in the background
  core::RunResult r;
  try {
    r = core::run(spec, opt);
  } catch (const InfraError& e) {
    ::close(log_fd);
    // The shell could not start (or the workspace is gone): the turn failed, as before
    // when the child exited 127, but now saying why.
    p.status = Proposal::Status::kFailed;
    p.error = std::string("agent could not start: ") + e.what();
    p.description = "command agent failed";
    return p;
  }
  ::close(log_fd);
  if (r.timed_out || r.interrupted) {
    p.status = Proposal::Status::kTimeout;
    p.error = r.interrupted ? "agent stopped: run interrupted"
                            : "agent killed at its timeout of " + std::to_string(timeout_s_) + " s";
    p.description = "command agent timed out";
    return p;
  }
  std::string desc = description_from_log(ctx.log_path);
  if (!r.status.exited() || r.status.exit_code() != 0) {
    p.status = Proposal::Status::kFailed;
    p.error = r.status.exited() ? "agent exited with status " + std::to_string(r.status.exit_code())
                                : "agent killed by signal " + std::to_string(r.status.signal());
    p.description = desc.empty() ? "command agent failed" : desc;
    return p;
  }
  p.description = desc.empty() ? "command agent edit" : desc;
  return p;
}

}  // namespace kgate::search

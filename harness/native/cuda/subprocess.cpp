#include "native/cuda/subprocess.h"

#include "core/error.h"
#include "core/subprocess.h"

namespace kgate::native::cuda {

ProcessResult run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw InfraError("run_process: empty command");
  core::SpawnSpec spec;
  spec.argv = argv;
  // Not the runner's stdin: that is the protocol pipe, and nvcc must not read requests.
  spec.stdin_mode = core::SpawnSpec::Stdin::kNull;
  spec.stdout_mode = core::SpawnSpec::Output::kPipe;
  spec.stderr_mode = core::SpawnSpec::Output::kMerge;
  spec.group = core::SpawnSpec::Group::kInherit;  // dies with the worker's group
  core::RunResult r = core::run(spec);  // throws when it cannot start or cannot be reaped
  ProcessResult result;
  result.exit_code = r.status.shell_code();
  result.output = std::move(r.out);
  return result;
}

}  // namespace kgate::native::cuda

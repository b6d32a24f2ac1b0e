#pragma once
// Runs a program (no shell: arguments travel as they are) and collects its stdout and
// stderr interleaved, as a compiler log (core::run; stdin from /dev/null).
#include <string>
#include <vector>

namespace kgate::native::cuda {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by one
  std::string output;  // stdout and stderr together
};

// Throws kgate::InfraError when the program cannot be started or its end cannot be
// observed (waitpid fails): never a made-up exit 0.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace kgate::native::cuda

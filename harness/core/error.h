#pragma once
// Expected operational failures (bad YAML, missing file, worker died) travel as
// exceptions derived from kgate::Error; only main() maps one to an exit code.
// A candidate's failure is never an exception: it is a verdict (data).
#include <stdexcept>
#include <string>

#include "core/exit_code.h"

namespace kgate {

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string message)
      : std::runtime_error(std::move(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Usage or configuration problem: exit 2. Message should start with "file:line:col: ".
class UsageError : public Error {
 public:
  explicit UsageError(std::string message) : Error(ExitCode::kUsage, std::move(message)) {}
};

// Infrastructure problem (worker start, CUDA, filesystem, git): exit 3.
class InfraError : public Error {
 public:
  explicit InfraError(std::string message) : Error(ExitCode::kInfra, std::move(message)) {}
};

// Interrupted by a signal: exit 130.
class Interrupted : public Error {
 public:
  Interrupted() : Error(ExitCode::kInterrupted, "interrupted") {}
};

}  // namespace kgate

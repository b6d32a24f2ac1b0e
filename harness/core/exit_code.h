#pragma once
// The one set of process exit statuses every kgate command uses (docs/reports.md).
#include <string_view>

namespace kgate {

enum class ExitCode : int {
  kPass = 0,          // every gate passed, no regression
  kGateFailure = 1,   // a gate failed, or a (correctness / opted-in performance) regression
  kUsage = 2,         // bad command line, bad config, missing file
  kInfra = 3,         // infrastructure: worker could not start, CUDA unavailable, disk, ...
  kInterrupted = 130, // SIGINT / SIGTERM
};

constexpr int to_int(ExitCode c) { return static_cast<int>(c); }

// The more severe of two outcomes: interrupted > infrastructure > usage > failure > pass.
constexpr ExitCode worse(ExitCode a, ExitCode b) {
  auto rank = [](ExitCode c) {
    switch (c) {
      case ExitCode::kInterrupted: return 4;
      case ExitCode::kInfra: return 3;
      case ExitCode::kUsage: return 2;
      case ExitCode::kGateFailure: return 1;
      case ExitCode::kPass: return 0;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

constexpr std::string_view to_string(ExitCode c) {
  switch (c) {
    case ExitCode::kPass: return "pass";
    case ExitCode::kGateFailure: return "gate-failure";
    case ExitCode::kUsage: return "usage";
    case ExitCode::kInfra: return "infrastructure";
    case ExitCode::kInterrupted: return "interrupted";
  }
  return "unknown";
}

}  // namespace kgate

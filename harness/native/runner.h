#pragma once
// The kgate-native request loop (docs/protocol.md, docs/runner.md): one JSON request per
// line in, one response per line out. Keeps the problem, the compiled slots and the
// drawn inputs + truth across requests.
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "native/backend.h"
#include "native/checker.h"
#include "native/host_compiler.h"
#include "native/user_reference.h"
#include "ops/op.h"
#include "protocol/messages.h"

namespace kgate::native {

// Makes the backend hello asked for; null + *err when unavailable (answered `unsupported`).
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const protocol::HelloParams&, std::string* err)>;

// Host memory for the check cases (inputs + float64 truth) a runner keeps across
// requests: $KGATE_CASE_CACHE_MB when set, else 1/8 of physical memory within [1, 16] GiB.
// Every candidate of a search checks the same cases; when they do not fit, each one pays
// for drawing its inputs and the truth again (matmul 4096^3: 12 cases of 0.2-0.27 GB).
std::size_t default_case_cache_bytes();

struct RunnerOptions {
  BackendFactory backend_factory;        // default: host built in, cuda from the plugin
  std::size_t case_cache_bytes = default_case_cache_bytes();  // inputs + truth kept across requests
};

// Exit statuses of kgate-native.
inline constexpr int kRunnerExitOk = 0;           // shutdown or EOF on stdin
inline constexpr int kRunnerExitDeviceFault = protocol::kExitAfterDeviceFault;  // answered, then exited: restart me
inline constexpr int kRunnerExitIoError = 4;      // the protocol pipe broke

class Runner {
 public:
  explicit Runner(RunnerOptions opts = {});
  ~Runner();

  // Handles one request line and returns the response line (without '\n'). A blank line
  // gets no response (returns ""). Never throws.
  std::string handle(const std::string& line);

  // True once the runner must exit (shutdown, device fault); exit_code() says how.
  bool done() const { return done_; }
  int exit_code() const { return exit_code_; }

 private:
  protocol::Json dispatch(const protocol::Request& req);
  protocol::Json do_hello(const protocol::Json& p);
  protocol::Json do_load_problem(const protocol::Json& p);
  protocol::Json do_compile(const protocol::Json& p);
  protocol::Json do_check(const protocol::Json& p);
  protocol::Json do_time(const protocol::Json& p);

  Backend& backend();  // the hello'ed one; host with default settings when hello was skipped
  const ops::Op& op() const;
  const Module& slot_module(const std::string& slot) const;
  const CaseData& case_data(const protocol::CheckCase& c);
  void drop_slots();

  RunnerOptions opts_;
  std::unique_ptr<Backend> backend_;
  std::string cache_dir_;
  HostCompiler* host_compiler();  // lazily: only references need it on cuda
  std::unique_ptr<HostCompiler> host_compiler_;

  std::optional<protocol::ProblemSpec> problem_;
  const ops::Op* op_ = nullptr;
  std::unique_ptr<UserReference> reference_;
  std::map<std::string, std::shared_ptr<Module>> slots_;

  // LRU of drawn cases: key -> data; the list holds keys, most recent first.
  std::map<std::string, CaseData> cases_;
  std::list<std::string> case_lru_;
  // Inputs drawn for `time`, keyed by dtype/seed/dims (see time_inputs()).
  const std::vector<ops::HostTensor>& time_inputs(const ops::Dims& dims, DType dtype, uint64_t seed);
  std::map<std::string, std::vector<ops::HostTensor>> time_inputs_;
  std::size_t case_bytes_ = 0;
  // The widest tolerance the checks of this problem used, per dtype: what the audit of
  // the timed calls compares the slots' outputs within (timing_audit.h).
  std::map<DType, ops::Tolerance> audit_tol_;
  ops::Tolerance audit_tolerance(DType dtype, const ops::Dims& dims) const;

  bool done_ = false;
  int exit_code_ = kRunnerExitOk;
};

// The default BackendFactory: "host" -> make_host_backend(); "cuda" -> dlopen
// libkgate_native_cuda.so from plugin_dir (default: the directory of /proc/self/exe).
std::unique_ptr<Backend> make_backend(const protocol::HelloParams& p, std::string* err,
                                      const std::string& plugin_dir = "");

// Reads requests from in_fd until EOF or done(), writing responses to out_fd.
// Returns the process exit status.
int serve(Runner& runner, int in_fd, int out_fd);

}  // namespace kgate::native

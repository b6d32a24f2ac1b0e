#pragma once
// The four-gate cascade for one native problem (docs/gates.md). Policy lives here; the
// numbers come from a kgate-native worker. Cheapest gate first; the first failure ends
// the candidate. The worker is restarted after a timeout or crash.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/types.h"
#include "verdict/verdict.h"
#include "protocol/messages.h"

namespace kgate::gates {

struct EvalOptions {
  std::string backend = "host";          // "host" | "cuda"
  std::string native_bin;                // path of kgate-native ("" = beside kgate)
  std::string cache_dir;                 // compile cache ("" = worker default)
  std::string workspace;                 // candidate workspace: static gate hashes it ("" = skip)
  // Compiled mode: the kernel files every slot swaps into torch.compile's model (the
  // workspace's kernels/, so kept kernels compose and the final re-measure runs the whole
  // set); "" = only the candidate file itself.
  std::string kernels_dir;
  // Compiled mode: the problem is loaded for its inventory alone (kgate profile): no probe
  // of the reference, no float64 truth; evaluate/remeasure are refused by the worker.
  bool inventory_only = false;
  // Directories the worker itself writes (kgate profile --kernels-dir), besides the cache
  // and a compiled-mode workspace: everything else is read-only to the sandboxed worker
  // and the candidate code it runs (core/sandbox.h).
  std::vector<std::string> writable;
  uint64_t seed = 0;                     // correctness seed root
  config::GateThresholds thresholds;
  config::MeasurementConfig measurement;
  double bandwidth_gbps = 0;             // roofline ceiling; 0 = worker-measured
  double request_timeout_s = 120;        // per worker request
  double compile_timeout_s = 0;          // per compile request; 0 = request_timeout_s
  bool run_performance = true;
  // Compiled mode: the kernel-level screen (config::Budget::screen_slack; 0 = off). An
  // edited kernel timed more than this fraction slower than the baseline's copy of it, on
  // the trial call's arguments, fails the performance gate as a slowdown before the
  // model-level gates run (judge_screen).
  double screen_slack = 0;
  // KernelBench worker: the candidate slot is a native library (kgate_run) built by
  // kgate-native, not a ModelNew file (Evaluator::torch_references).
  bool native_candidate = false;
  // Set by kgate run's SIGINT/SIGTERM: the worker's call in flight is abandoned and
  // Interrupted thrown (worker/worker.h), so a stop never waits on a long compile.
  const std::atomic<bool>* interrupted = nullptr;
  // Called as each gate finishes (not for the gates skipped after a failure), so a
  // long evaluation shows progress.
  std::function<void(const GateResult&)> on_gate;
};

// One re-measure against the reference model: its timing, or why there is none.
struct ReferenceTiming {
  Timing timing;
  std::string error;
};

class Evaluator {
 public:
  Evaluator(config::NativeProblem problem, EvalOptions options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Runs every gate on the candidate against the baseline source.
  // `defines` are tunable values (-DNAME=value) for the candidate only.
  CandidateVerdict evaluate(const std::string& candidate_path,
                            const std::map<std::string, std::string>& defines,
                            const std::string& baseline_path);

  // Compiled mode, a pair experiment: the partner kernel files an evaluation of `candidate`
  // lets change with it (the static gate's workspace rule exempts them), runs in the
  // baseline slot as kept (their best copies pinned), and, when one differs from its kept
  // copy, judges without the kernel-level screen (it times the candidate's kernel alone,
  // which then does the partner's work too). Empty: none (the default).
  void set_partners(const std::string& candidate, std::vector<PartnerFile> partners);

  // A native problem's oracle anchored at `starter_path` before the first evaluate (a
  // resumed search, whose first baseline is its kept best, so the bound would otherwise
  // start from the best): the starter compiled as the baseline and checked on every case.
  // A no-op for KernelBench problems (their anchor is the reference's own error) and once
  // anchored. A case the starter cannot be checked on now is an InfraError.
  void anchor_oracle(const std::string& starter_path);

  // Fresh worker, interleaved re-measure of an already-gated candidate (final numbers).
  Timing remeasure(const std::string& candidate_path,
                   const std::map<std::string, std::string>& defines,
                   const std::string& baseline_path);

  // KernelBench: the candidate timed interleaved against the reference model in each of
  // `modes` (eager | compile | compile-max-autotune: the vs-eager / vs-compile numbers),
  // all in one fresh worker (the candidate compiled once; a second mode that resets
  // torch.compile's caches gets a worker of its own). A mode that fails (torch.compile
  // unsupported here) answers its error and the others go on; `stop` is asked before each.
  std::map<std::string, ReferenceTiming> remeasure_references(const std::string& candidate_path,
                                                              const std::map<std::string, std::string>& defines,
                                                              std::vector<std::string> modes,
                                                              const std::function<bool()>& stop = {});

  // A native problem: the candidate timed interleaved against its op's PyTorch form
  // (ops::torch_form_module at the timed shape and dtype) in each of `modes`, in the
  // Python worker, which loads the library a fresh kgate-native worker built from the
  // candidate. The form and the library are kept under the cache's torch-forms/. Empty
  // when the op has none (a user's own reference); errors per mode as remeasure_references.
  std::map<std::string, ReferenceTiming> torch_references(const std::string& candidate_path,
                                                          const std::map<std::string, std::string>& defines,
                                                          std::vector<std::string> modes,
                                                          const std::function<bool()>& stop = {});
  bool kernelbench() const;
  // KernelBench problem in dispatch-aware mode (torch.compile's model is the baseline).
  bool compiled() const;
  // Compiled mode: torch.compile's model taken apart by the worker: its Triton kernels (one
  // editable file each written into `dir`), extern calls and per-kernel device times
  // (docs/dispatch.md). Infrastructure failures throw.
  // `seed_mode` ("coordinate-descent"; "" = none): a second compile whose launch config
  // per kernel seeds the tuner (kgate:tune-seed in the kernel files), made only when some
  // kernel's Amdahl bound reaches the keep threshold (else the inventory's seed_note says
  // "not seeded: ...").
  protocol::Json inventory(const std::string& dir, const std::string& seed_mode = "");

  const protocol::DeviceInfo& device() const;
  // The worker's hello: its device and the software it runs (torch, triton, CUDA, driver).
  const protocol::HelloResult& runtime() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kgate::gates

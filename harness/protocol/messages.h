#pragma once
// kgate worker protocol v1 (docs/protocol.md): request/response types and their JSON.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/wire.h"

namespace kgate::protocol {

inline constexpr int kVersion = 1;
// A worker exits with this status after answering a request that left its device unusable
// (a sticky CUDA error); a request sent after that answer was never read.
inline constexpr int kExitAfterDeviceFault = 3;

using Json = nlohmann::json;

// kCannotJudge: the machine cannot hold the problem (the Python worker's load sizes it
// first): kgate cannot judge it here, which says nothing of the code under test.
enum class ErrorKind { kBadRequest, kUnsupported, kNoProblem, kNoCandidate, kInternal, kCannotJudge };
NLOHMANN_JSON_SERIALIZE_ENUM(ErrorKind, {{ErrorKind::kBadRequest, "bad_request"},
                                         {ErrorKind::kUnsupported, "unsupported"},
                                         {ErrorKind::kNoProblem, "no_problem"},
                                         {ErrorKind::kNoCandidate, "no_candidate"},
                                         {ErrorKind::kInternal, "internal"},
                                         {ErrorKind::kCannotJudge, "cannot_judge"}})

struct WireError {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
};
KGATE_WIRE_RESULT(WireError, kind, message)

// ---- hello ----------------------------------------------------------------------------
struct HelloParams {
  std::string backend = "host";  // "host" | "cuda"
  int device_index = 0;
  std::string cache_dir;  // "" = $XDG_CACHE_HOME/kgate or ~/.cache/kgate
};
KGATE_WIRE_PARAMS(HelloParams, backend, device_index, cache_dir)

struct DeviceInfo {
  std::string name;
  std::string cc;  // "9.0"; "" for host
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int clock_mhz = 0;
  double copy_bandwidth_gbps = 0;  // measured by the worker at hello (read + write bytes)
  std::string driver;              // driver version, "" for host
};
KGATE_WIRE_RESULT(DeviceInfo, name, cc, sm_count, l2_bytes,
                                                memory_bytes, clock_mhz, copy_bandwidth_gbps,
                                                driver)

struct HelloResult {
  std::string runner;
  std::string version;
  int protocol = kVersion;
  std::string backend;
  DeviceInfo device;
  // The Python worker's software ("" from kgate-native): what the run records say it ran on.
  std::string torch;   // "2.11.0"
  std::string triton;  // "3.6.0", "" when absent
  std::string cuda;    // the CUDA torch was built with ("13.0"), "" on a CPU build
  std::string python;  // "3.12.3"
};
KGATE_WIRE_RESULT(HelloResult, runner, version, protocol, backend,
                                                device, torch, triton, cuda, python)

// ---- load_problem ---------------------------------------------------------------------
// What the worker needs of a problem. For native problems `op` names the built-in op;
// `reference_source` is a user C++ reference (templated on the element type).
struct ProblemSpec {
  std::string id;
  std::string kind = "native";  // "native" | "kernelbench"
  std::string op;
  std::string reference_source;  // "" = the op's built-in float64 reference
  std::string path;              // kernelbench: the problem .py file
  std::string variant;           // kernelbench: "" (as written) | "small" (its `# kgate:small` sizes)
  // kernelbench: "model" (ModelNew candidates) | "compiled" (torch.compile's model with some
  // Inductor Triton kernels replaced by the kernel files in `kernels_dir`)
  std::string mode = "model";
  std::string kernels_dir;                  // compiled: the workspace's kernel files
  std::string compile_mode = "default";     // compiled: "default" | "max-autotune-no-cudagraphs"
  // compiled: loaded for `inventory` alone (kgate profile): the reference is not probed and
  // no float64 truth is computed; ops that check or time are refused.
  bool inventory_only = false;
  // kernelbench: loaded to be timed (a fresh worker's re-measure): the float64 truth of the
  // first input set is not computed at the load but by the first check that needs it.
  bool defer_truth = false;
};
KGATE_WIRE_PARAMS(ProblemSpec, id, kind, op, reference_source, path,
                                                variant, mode, kernels_dir, compile_mode, inventory_only,
                                                defer_truth)

struct TensorInfo {
  std::string name;
  std::string dtype;  // "case" when it follows the case dtype
};
KGATE_WIRE_RESULT(TensorInfo, name, dtype)

struct LoadProblemResult {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // kernelbench: why the reference output cannot tell a wrong candidate from a right one
  // ("constant output", "seed-invariant output", "near-zero output"); "" = fine.
  std::string degenerate;
  bool variant_applied = false;  // kernelbench: the requested size variant was found
};
KGATE_WIRE_RESULT(LoadProblemResult, inputs, outputs, degenerate,
                                                variant_applied)

// ---- compile --------------------------------------------------------------------------
struct CompileParams {
  std::string slot = "candidate";  // "candidate" | "baseline"
  std::string source_path;
  std::map<std::string, std::string> defines;
  // Python worker: source_path is a native kgate library (kgate_run) built by kgate-native,
  // loaded as the slot beside the problem (a native op's PyTorch form).
  bool native = false;
  // Python worker, compiled mode, on a GPU: the trial call also times the edited kernel
  // against the baseline slot's copy of it (CompileResult::screen).
  bool screen = false;
  // Python worker, compiled mode, the baseline slot: kernel files that replace the
  // workspace's file of their kernel (a pair experiment's partners as kept, where the
  // workspace may hold the experiment's edit of them).
  std::vector<std::string> pins;
};
KGATE_WIRE_PARAMS(CompileParams, slot, source_path, defines, native, screen, pins)

// A static-lint finding of the worker (Python candidates are linted by the Python worker).
struct LintFinding {
  int line = 0;
  std::string rule;
  std::string message;
};
KGATE_WIRE_RESULT(LintFinding, line, rule, message)

// Compiled mode's kernel-level screen: the edited kernel's launch and the copy the
// baseline runs ("kept": a kept kernel file; "inductor": Inductor's own), each timed alone
// on the trial call's arguments (L2 flushed, events around it), interleaved; medians.
// An empty `kernel`: not screened.
struct KernelScreen {
  std::string kernel;
  std::string against;
  double best_us = 0;
  double candidate_us = 0;
  int samples = 0;
};
KGATE_WIRE_PART(KernelScreen, kernel, against, best_us, candidate_us, samples)

struct CompileResult {
  bool compiled = false;
  bool cache_hit = false;
  double compile_ms = 0;
  std::string log;
  std::vector<LintFinding> findings;  // non-empty: not compiled because the lint failed
  // kgate-native: the shared object it loaded (in the compile cache, or in the worker's own
  // directory once its writes are narrowed): what kgate copies for the PyTorch references.
  std::string library;
  KernelScreen screen;
};
KGATE_WIRE_RESULT(CompileResult, compiled, cache_hit, compile_ms, log,
                                                findings, library, screen)

// ---- check ----------------------------------------------------------------------------
struct CheckCase {
  std::string case_id;  // e.g. "seed=1234/R=1023,C=4097/f16/signed"
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;
  std::string dtype = "f32";
  std::string dist = "normal";
  int repeats = 3;
  double atol = 0;
  double rtol = 0;
};
KGATE_WIRE_PART(CheckCase, case_id, seed, dims, dtype, dist,
                                                repeats, atol, rtol)

struct CheckParams {
  std::string slot = "candidate";
  std::vector<CheckCase> cases;
};
KGATE_WIRE_PARAMS(CheckParams, slot, cases)

struct OutputError {
  std::string name;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double rel_l2_err = 0;
  int64_t over_tol = 0;
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t truth_nonfinite = 0;
  int64_t unwritten = 0;
  int64_t worst_index = -1;
  double worst_got = 0;
  double worst_want = 0;
  bool shape_ok = true;
  // JSON has no NaN/Inf: worst_got is 0 when the element is not finite and this says
  // what it was: "finite" | "nan" | "inf" | "-inf" | "unwritten" ("" = no worst element).
  std::string worst_kind;
  // Python worker: |got - want| at worst_index (an element over tolerance when there is
  // one; max_abs_err may belong to another, within tolerance); 0 = not reported.
  double worst_abs_err = 0;
  // Python worker: the float32 reference's own rel_l2_err on the same case (same inputs,
  // dtype and seeding) against the float64 truth, the oracle's anchor; -1 = not reported
  // (kgate-native, or the reference could not be run): the baseline's error anchors it.
  double reference_rel_l2_err = -1;
  // Python worker, compiled mode: torch.compile's model's own rel_l2_err on the same case,
  // none of the search's kernels swapped in (fixed per case, like the reference's); the
  // oracle anchors on the larger of the two; -1 = not reported.
  double compiled_rel_l2_err = -1;
  // Python worker: the dtype the slot returned (f32, f16, i64, ...) and the reference's on
  // the same case; a slot returning another dtype fails correctness ("" = not reported).
  std::string dtype;
  std::string reference_dtype;
  // Python worker: the truth's shape, so worst_index (flat) reads as an element's index
  // where the case plan names no output shapes (KernelBench); empty = not reported.
  std::vector<int64_t> shape;
};
KGATE_WIRE_RESULT(OutputError, name, max_abs_err, max_rel_err,
                                                rel_l2_err, over_tol, nan, inf, truth_nonfinite,
                                                unwritten, worst_index, worst_got, worst_want,
                                                shape_ok, worst_kind, worst_abs_err,
                                                reference_rel_l2_err, compiled_rel_l2_err, dtype,
                                                reference_dtype, shape)

struct CaseResult {
  std::string case_id;
  int return_code = 0;
  bool inputs_modified = false;
  bool deterministic = true;
  double elapsed_ms = 0;
  std::vector<OutputError> outputs;
  std::string error;  // what the candidate raised (Python worker), "" = nothing
  // Python worker: non-empty = the case was not judged, and why (no outputs then); a
  // verdict on the harness's reach, never on the candidate.
  std::string cannot_judge;
  // Python worker: non-empty = the float64 oracle cannot be used for this problem (why);
  // correctness is then judged against the float32 reference.
  std::string oracle_skip;
  std::vector<std::string> notes;  // relaxations the worker applied, in words
  // kgate-native: a write past the end of a buffer the candidate was given, caught in the
  // guard bytes after it ("output 'y': 256 of the 4096 guard bytes after its end changed");
  // "" = none.
  std::string out_of_bounds;
};
KGATE_WIRE_RESULT(CaseResult, case_id, return_code, inputs_modified,
                                                deterministic, elapsed_ms, outputs, error, cannot_judge,
                                                oracle_skip, notes, out_of_bounds)

struct CheckResult {
  std::vector<CaseResult> cases;
};
KGATE_WIRE_RESULT(CheckResult, cases)

// ---- time -----------------------------------------------------------------------------
struct TimeParams {
  std::vector<std::string> slots{"candidate", "baseline"};
  std::map<std::string, int64_t> dims;
  std::string dtype = "f32";
  uint64_t seed = 0;
  double warmup_s = 0.05;
  double min_time_s = 0.5;
  double max_time_s = 5.0;
  int min_samples = 30;
  int max_samples = 2000;
  double target_rse = 0.005;
  bool flush_l2 = true;
  int input_sets = 2;
  bool cuda_graph = true;  // allowed to batch µs-scale calls into a graph
  int pin_cpu = -1;        // host: pin the timing thread to this CPU (-1 = no pinning)
  // Python worker on CUDA: the GPU is held busy before each start event until the host
  // has issued the call, so a sample is the call's device time without the host's cost
  // of issuing it (a native library's reference columns: the library is called through
  // ctypes there, its PyTorch forms through Python dispatch; kgate-native times the same
  // library with a C++ launch).
  bool exclude_launch = false;
};
KGATE_WIRE_PARAMS(TimeParams, slots, dims, dtype, seed, warmup_s,
                                                min_time_s, max_time_s, min_samples, max_samples,
                                                target_rse, flush_l2, input_sets, cuda_graph,
                                                pin_cpu, exclude_launch)

struct TimeResult {
  std::map<std::string, std::vector<double>> samples_us;
  std::string timer;  // "steady_clock" | "cuda_event" | "cuda_graph"
  int batch = 1;
  int dropped_throttled = 0;
  std::vector<int> clock_mhz;
  bool side_stream_work = false;
  double min_bytes = 0;
  double flops = 0;
  double elapsed_s = 0;
  std::string stop_reason;  // "converged" | "max_time" | "max_samples"
  int return_code = 0;      // first non-zero kgate_run return (or exception) seen while timing
  std::string timer_note;   // why the timer is not the usual one, e.g. graph capture failed
  std::string failed_slot;  // the slot whose call failed while timed (with return_code; "" = none)
  // The audit of the timed calls (the Python worker, kgate_worker/audit.py): rounds whose
  // outputs were compared between the slots, what differed or showed a result cache ("" =
  // nothing), and what could not be audited.
  int audited = 0;
  std::string audit_failure;
  std::string audit_note;
};
KGATE_WIRE_RESULT(TimeResult, samples_us, timer, batch,
                                                dropped_throttled, clock_mhz, side_stream_work,
                                                min_bytes, flops, elapsed_s, stop_reason,
                                                return_code, timer_note, failed_slot, audited,
                                                audit_failure, audit_note)

// ---- envelope -------------------------------------------------------------------------
struct Request {
  int v = kVersion;
  int64_t id = 0;
  std::string op;
  Json params;  // the request object minus v/id/op
};
// Parses one request line. Returns false and sets *err on malformed JSON or envelope.
bool parse_request(const std::string& line, Request* out, std::string* err);
std::string make_request(int64_t id, const std::string& op, const Json& params);

struct Response {
  int v = kVersion;
  int64_t id = 0;
  bool ok = false;
  Json result;                      // when ok
  std::optional<WireError> error;   // when !ok
};
bool parse_response(const std::string& line, Response* out, std::string* err);
std::string make_ok(int64_t id, const Json& result);
std::string make_error(int64_t id, ErrorKind kind, const std::string& message);

}  // namespace kgate::protocol

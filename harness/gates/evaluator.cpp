#include "gates/evaluator.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "core/disk_space.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/number_format.h"
#include "core/paths.h"
#include "config/loader.h"
#include "gates/case_plan.h"
#include "gates/correctness_gate.h"
#include "gates/oracle_gate.h"
#include "gates/performance_gate.h"
#include "gates/static_gate.h"
#include "worker/worker.h"

namespace kgate::gates {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using protocol::Json;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string gate_name(Gate g) { return nlohmann::json(g).get<std::string>(); }

// The first lines of a compiler log worth showing: the error lines (with the line after
// each, usually the offending source), else the log's beginning.
std::string first_errors(const std::string& log, std::size_t max_lines = 6) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<std::string> picked;
  for (std::size_t i = 0; i < lines.size() && picked.size() < max_lines; ++i) {
    if (lines[i].find("error") != std::string::npos) {
      picked.push_back(lines[i]);
      if (i + 1 < lines.size() && picked.size() < max_lines) picked.push_back(lines[++i]);
    }
  }
  if (picked.empty())
    for (std::size_t i = 0; i < lines.size() && picked.size() < max_lines; ++i) picked.push_back(lines[i]);
  std::string out;
  for (const auto& l : picked) out += (out.empty() ? "" : "\n") + l;
  return out.empty() ? "(empty compiler log)" : out;
}

// The lines of a compiler log that carry the system's words for a full disk (at most 3),
// else the log's first error lines.
std::string disk_lines(const std::string& log) {
  std::istringstream in(log);
  std::string out;
  int n = 0;
  for (std::string l; std::getline(in, l) && n < 3;)
    if (!core::disk_full_words(l).empty()) {
      out += (out.empty() ? "" : "\n") + l;
      ++n;
    }
  return out.empty() ? first_errors(log) : out;
}

std::string dims_str(const ops::Op& op, const ops::Dims& dims) {
  std::string s;
  for (const auto& d : op.dims())
    if (auto it = dims.find(d); it != dims.end()) s += (s.empty() ? "" : ",") + d + "=" + std::to_string(it->second);
  for (const auto& [k, v] : dims)
    if (s.find(k + "=") == std::string::npos) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

// A worker's rejection of a problem, located: at the problem file's line when the
// worker's message starts with it ("P.py:2: SyntaxError: ..."), else at the problem's
// own location (its config entry, or its file).
std::string located_rejection(const config::NativeProblem& problem, const std::string& message) {
  const std::string head = "error: problem " + problem.id + " rejected by the worker: ";
  const std::string prefix = problem.path + ":";
  if (!problem.path.empty() && message.rfind(prefix, 0) == 0) {
    std::size_t end = prefix.size();
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    if (end > prefix.size() && message.compare(end, 2, ": ") == 0)
      return message.substr(0, end) + ": " + head + message.substr(end + 2);
  }
  return problem.loc.str() + ": " + head + message;
}

}  // namespace

struct Evaluator::Impl {
  config::NativeProblem problem;
  EvalOptions opt;
  const ops::Op* op = nullptr;
  std::unique_ptr<worker::Worker> worker;  // the evaluator's own (main()); null once lent out
  bool worker_used = false;  // it has compiled, checked, timed or inventoried since its load
  protocol::DeviceInfo device;
  protocol::HelloResult runtime;  // the last hello: device and software versions
  std::string baseline_id;  // path + content hash of the baseline compiled in the worker
  // case_id -> the first baseline's numbers: the oracle's anchor where the worker reports
  // no reference error (a native problem), fixed for the Evaluator's lifetime (the search's
  // starter), so kept candidates cannot loosen it
  std::map<std::string, protocol::CaseResult> baseline_cache;
  // The kernel-level screen of the last compile (compiled mode): a slowdown that stands for
  // the performance gate, or nullopt.
  std::optional<GateResult> screen_failure;
  // per candidate and its exempt partners (the snapshot's key: the exempt paths joined)
  std::map<std::string, core::WorkspaceSnapshot> workspace_before;
  // Compiled mode: a candidate (absolute path) -> its pair partners (set_partners)
  std::map<std::string, std::vector<PartnerFile>> partners;
  const std::vector<PartnerFile>& partners_of(const std::string& cand) const {
    static const std::vector<PartnerFile> none;
    auto it = partners.find(paths::absolute(cand));
    return it == partners.end() ? none : it->second;
  }
  // A partner file that differs from its kept copy: this experiment rewrote it.
  bool partner_changed(const std::string& cand) const {
    for (const auto& pf : partners_of(cand))
      if (hash_file(pf.workspace_path) != hash_file(pf.best_path)) return true;
    return false;
  }
  std::string degenerate;  // kernelbench: the worker's degenerate-problem finding
  bool small_sizes = false;  // kernelbench on the host: the file's `# kgate:small` sizes ran

  // KernelBench problems run in the Python worker, native ones in kgate-native.
  bool kernelbench() const { return problem.kind == "kernelbench"; }
  bool compiled() const { return kernelbench() && problem.kernelbench_mode == "compiled"; }

  worker::WorkerSpec spec() const {
    // The sandbox: the worker writes its compile cache, a compiled-mode workspace (the
    // kernel files and template offers of the inventory) and what opt.writable names.
    std::vector<std::string> writable = opt.writable;
    for (auto& w : writable) w = paths::absolute(w);
    if (!opt.kernels_dir.empty()) writable.push_back(fs::path(paths::absolute(opt.kernels_dir)).parent_path().string());
    if (const char* trace = std::getenv("KGATE_WORKER_TRACE"); trace && *trace)
      writable.push_back(fs::path(paths::absolute(trace)).parent_path().string());
    // What a sealed Python worker keeps writable: all of the above but the compile cache.
    const std::vector<std::string> keep_after_seal = writable;
    if (!opt.cache_dir.empty()) writable.push_back(paths::absolute(opt.cache_dir));
    // A native host worker runs the candidate in its own address space: a huge allocation
    // fails there (a bad_alloc, a crash) instead of pushing the runner into swap.
    worker::WorkerSpec s;
    if (!kernelbench()) {
      s = worker::native_worker_spec(opt.backend, writable, opt.native_bin);
    } else {
      s = worker::python_worker_spec();
      worker::sandbox_worker(s, writable);
      worker::seal_python_worker(s, keep_after_seal);
    }
    s.interrupted = opt.interrupted;
    return s;
  }

  // hello + load_problem on `w`; infrastructure failures throw.
  // `timing`: a fresh worker that only times (its load defers the float64 truth).
  protocol::DeviceInfo setup(worker::Worker& w, bool timing = false) {
    protocol::HelloParams hp;
    hp.backend = kernelbench() && opt.backend == "host" ? "cpu" : opt.backend;
    hp.cache_dir = opt.cache_dir;
    worker::Reply r = w.call("hello", Json(hp), opt.request_timeout_s);
    if (!r.good()) {
      if (r.error && r.error->kind == protocol::ErrorKind::kUnsupported)
        throw InfraError("backend " + opt.backend + " is not available here: " + r.error->message +
                         (w.spec().sandbox.enabled && opt.backend != "host"
                              ? " (the worker ran in kgate's sandbox: if the device works outside it, a wall "
                                "is in its way -- KGATE_SANDBOX=off runs without it; docs/sandbox.md)"
                              : ""));
      throw InfraError("worker did not start (" + w.spec().argv[0] + "): " + r.describe() +
                       (r.stderr_tail.empty() ? "" : "\nworker stderr:\n" + r.stderr_tail));
    }
    protocol::HelloResult hello = r.result.get<protocol::HelloResult>();
    runtime = hello;
    // A native problem timed on this GPU: its bench shape against the memory the device
    // has, before a load that would meet an out-of-memory error (a suite's plan bounds it
    // by the target's memory_bytes; `kgate bench` has only the device).
    if (!kernelbench() && opt.backend == "cuda" && op != nullptr)
      if (std::string why = config::device_memory_problem(
              problem, *op, problem.bench, hello.device.memory_bytes,
              "this GPU (" + hello.device.name + ", as its worker reports it)");
          !why.empty())
        throw UsageError(problem.bench_loc.str() + ": error: 'bench' " + why);
    protocol::ProblemSpec ps;
    ps.id = problem.id;
    ps.kind = problem.kind;
    ps.op = problem.op;
    ps.reference_source = problem.reference_source;
    ps.path = problem.path;
    // On the host a KernelBench problem runs at its `# kgate:small` sizes.
    if (kernelbench() && opt.backend == "host") ps.variant = "small";
    if (compiled()) {
      ps.mode = "compiled";
      ps.compile_mode = problem.kernelbench_baseline == "compile-max-autotune" ? "max-autotune-no-cudagraphs" : "default";
      ps.kernels_dir = opt.kernels_dir;
      ps.inventory_only = opt.inventory_only;
    }
    ps.defer_truth = timing && kernelbench();
    r = w.call("load_problem", Json{{"problem", Json(ps)}}, opt.request_timeout_s);
    if (!r.good()) {
      if (r.error && r.error->kind == protocol::ErrorKind::kBadRequest)
        throw UsageError(located_rejection(problem, r.error->message));
      if (r.error && r.error->kind == protocol::ErrorKind::kCannotJudge)
        throw InfraError(std::string(kCannotJudgeProblem) + " on this machine: " + r.error->message);
      throw InfraError("worker could not load problem " + problem.id + ": " + r.describe() +
                       (r.stderr_tail.empty() ? "" : "\nworker stderr:\n" + r.stderr_tail));
    }
    if (kernelbench()) {
      degenerate = r.result.value("degenerate", std::string());
      small_sizes = ps.variant == "small" && r.result.value("variant_applied", false);
      // Said once per worker: on the host a file without the line runs at its own sizes,
      // which for the official KernelBench files are GPU-sized.
      if (ps.variant == "small" && !small_sizes)
        log::info(problem.id + ": no '# kgate:small' line in " + problem.path +
                  ": it runs at the file's own sizes on the host");
      // Where the float64 truth goes decides much of a check's cost (a host truth of a
      // GB-sized problem takes seconds per case): said once per worker, when not the device.
      const std::string where = r.result.value("truth", std::string());
      if (where == "host" || where == "sliced")
        log::info(problem.id + ": the float64 truth is computed " +
                  (where == "host" ? "on the host" : "in slices of the batch") + " (" +
                  r.result.value("truth_note", std::string()) + ")");
      else if (where.rfind("cannot", 0) == 0)
        log::info(problem.id + ": the float64 truth: " + where);
    }
    return hello.device;
  }

  std::string resolve_baseline(const std::string& given) const {
    // KernelBench: the reference model itself (eager or torch.compile'd), unless a ModelNew
    // file (the search's current best) is given.
    if (kernelbench()) return given.empty() ? problem.path : paths::absolute(given);
    if (!given.empty()) return paths::absolute(given);
    if (auto it = problem.baselines.find(opt.backend); it != problem.baselines.end()) return it->second;
    if (auto it = problem.starters.find(opt.backend); it != problem.starters.end()) return it->second;
    throw UsageError(problem.loc.str() + ": error: problem " + problem.id + " has no baseline or starter for backend " +
                     opt.backend + " (pass --baseline)");
  }

  // `mode` (KernelBench only): eager | compile | compile-max-autotune for the reference
  // model; "" = the problem's default, or `candidate` when `path` is not the problem file.
  void compile_baseline(worker::Worker& w, const std::string& path, std::string mode = "",
                        const std::vector<std::string>& pins = {}) {
    std::string id = path + "#" + hash_file(path);
    for (const auto& pin : pins) id += "|" + pin + "#" + hash_file(pin);
    if (&w == worker.get() && id == baseline_id) return;
    if (hash_file(path).empty()) throw UsageError(path + ": error: cannot read the baseline");
    protocol::CompileParams cp;
    cp.slot = "baseline";
    cp.source_path = path;
    cp.pins = pins;
    if (kernelbench()) {
      if (mode.empty()) mode = path == problem.path ? problem.kernelbench_baseline : "candidate";
      cp.defines["KGATE_BASELINE"] = mode;
      id += "#" + mode;
      if (&w == worker.get() && id == baseline_id) return;
    }
    worker::Reply r = w.call("compile", Json(cp), compile_timeout());
    if (!r.good()) throw InfraError("compiling the baseline " + path + ": " + r.describe() +
                                    (r.stderr_tail.empty() ? "" : "\nworker stderr:\n" + r.stderr_tail));
    auto res = r.result.get<protocol::CompileResult>();
    if (!res.compiled) {
      // A compiler that could not write its object ("final link failed: No space left on
      // device", a line first_errors does not pick) or a cache without room: the disk's
      // failure, not the baseline's.
      if (const std::string why = core::storage_trouble({opt.cache_dir}, res.log); !why.empty())
        throw InfraError("compiling the baseline " + path + ": the disk is full (" + why +
                         "); the failed compile is not charged to the baseline: free space and run again:\n" +
                         disk_lines(res.log));
      throw UsageError(path + ": error: the baseline does not compile:\n" + first_errors(res.log));
    }
    if (&w == worker.get()) baseline_id = id;
  }

  // A worker fault or error during a gate: the gate is `error`, the candidate fails, and
  // the candidate's module is not replayed into the fresh worker.
  void fault_gate(GateResult& g, const worker::Reply& r, const std::string& case_id, const std::string& what) {
    g.status = GateStatus::kError;
    g.fault = r.fault == Fault::kNone ? Fault::kWorkerError : r.fault;
    g.failed_case = case_id;
    g.reason = gate_name(g.gate) + ": " + (case_id.empty() ? "" : "case " + case_id + ": ") + what + ": " +
               r.describe();
    std::string tail = r.stderr_tail;
    if (!tail.empty()) {
      // Last few worker lines: usually the signal report or the last log line before a hang.
      std::istringstream in(tail);
      std::vector<std::string> lines;
      for (std::string l; std::getline(in, l);) lines.push_back(l);
      std::string last;
      for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
        last += (last.empty() ? "" : " | ") + lines[i];
      g.reason += " (worker stderr: " + last + ")";
    }
    CaseRow row;
    row.case_id = case_id;
    row.pass = false;
    row.detail = r.describe();
    g.rows.push_back(row);
    worker->forget_slot("candidate");
  }

  GateResult run_static(const std::string& cand, const std::map<std::string, std::string>& defines) {
    GateResult g;
    g.gate = Gate::kStatic;
    g.status = GateStatus::kPass;
    auto fail = [&](const std::string& case_id, const std::string& why) {
      g.status = GateStatus::kFail;
      g.failed_case = case_id;
      g.reason = "static: " + why;
      g.rows.push_back({case_id, false, why, 0, 0});
    };
    core::ReadResult read = core::read_file(cand);
    if (!read.ok()) {
      fail("read", "cannot read candidate " + cand);
      return g;
    }
    const std::string source = std::move(read.bytes);

    // Python candidates are linted by the Python worker (it knows the problem's reference op).
    auto findings = kernelbench() ? std::vector<LintFinding>{} : lint_candidate_file(cand, source);
    for (const auto& f : findings) g.rows.push_back({"lint " + f.rule, false, f.str(), 0, 0});
    if (!findings.empty()) {
      g.status = GateStatus::kFail;
      g.failed_case = "lint " + findings.front().rule;
      g.reason = "static: " + cand + (findings.front().file.empty() ? ":" : ": ") + findings.front().str() +
                 (findings.size() > 1 ? " (+" + std::to_string(findings.size() - 1) + " more)" : "");
      return g;
    }
    g.rows.push_back({"lint", true, "no forbidden constructs", 0, 0});

    if (!opt.workspace.empty()) {
      std::vector<std::string> exempt = {cand};
      std::string key = cand;
      for (const auto& pf : partners_of(cand)) {
        exempt.push_back(pf.workspace_path);
        key += "\n" + pf.workspace_path;
      }
      auto now = core::snapshot_workspace(opt.workspace, exempt);
      auto [it, first] = workspace_before.try_emplace(key, now);
      auto changed = describe_workspace_changes(it->second, now);
      if (!changed.empty()) {
        std::string list;
        for (std::size_t i = 0; i < changed.size() && i < 5; ++i) list += (i ? ", " : "") + changed[i];
        if (changed.size() > 5) list += ", ...";
        fail("workspace", std::string("files other than the candidate") +
                              (exempt.size() > 1 ? " and its partner kernel files" : "") +
                              " changed in the workspace: " + list);
        return g;
      }
      g.rows.push_back({"workspace", true, first ? "snapshot taken" : "unchanged", 0, 0});
    }

    protocol::CompileParams cp;
    cp.slot = "candidate";
    cp.source_path = cand;
    cp.defines = defines;
    // A rewritten partner: the candidate's kernel does the partner's work too, so timing it
    // alone against its kept copy says nothing; the model-level gate decides.
    cp.screen = compiled() && opt.screen_slack > 0 && !partner_changed(cand);
    screen_failure.reset();
    worker::Reply r = worker->call("compile", Json(cp), compile_timeout());
    if (!r.good()) {
      fault_gate(g, r, "compile", "while compiling");
      return g;
    }
    auto res = r.result.get<protocol::CompileResult>();
    if (!res.findings.empty()) {
      for (const auto& f : res.findings)
        g.rows.push_back({"lint " + f.rule, false, std::to_string(f.line) + ": " + f.message, 0, 0});
      const auto& f = res.findings.front();
      g.status = GateStatus::kFail;
      g.failed_case = "lint " + f.rule;
      g.reason = "static: " + cand + ":" + std::to_string(f.line) + ": [" + f.rule + "] " + f.message +
                 (res.findings.size() > 1 ? " (+" + std::to_string(res.findings.size() - 1) + " more)" : "");
      return g;
    }
    if (!res.compiled) {
      // The disk's words stay in the reason (the suite run reads them as no verdict) even
      // when they are on a line first_errors does not pick.
      const std::string words = core::disk_full_words(res.log);
      std::string shown = first_errors(res.log);
      if (!words.empty() && shown.find(words) == std::string::npos) shown += "\n" + disk_lines(res.log);
      fail("compile", (kernelbench() ? "import error:\n" : "compile error:\n") + shown);
      return g;
    }
    g.rows.push_back({"compile", true, res.cache_hit ? "cached" : "compiled in " + fmt_num(res.compile_ms) + " ms",
                      res.compile_ms, 0});
    if (cp.screen) {
      screen_failure = judge_screen(res.screen, opt.screen_slack);
      if (!res.screen.kernel.empty())
        log::info("screen: kernel " + res.screen.kernel + " " + fmt_num(res.screen.candidate_us) + " us vs " +
                  fmt_num(res.screen.best_us) + " us (" + res.screen.against + ")" +
                  (screen_failure ? ": reverted before the model-level gates" : ""));
    }
    return g;
  }

  // Runs one case on a slot; false (and the gate filled) on a fault.
  bool check_one(GateResult& g, const std::string& slot, const CorrectnessCase& c, protocol::CaseResult* out) {
    protocol::CheckParams cp;
    cp.slot = slot;
    cp.cases = {c.check};
    worker::Reply r = worker->call("check", Json(cp), opt.request_timeout_s);
    if (r.good()) {
      auto res = r.result.get<protocol::CheckResult>();
      if (res.cases.size() == 1) {
        *out = std::move(res.cases.front());
        return true;
      }
      r.fault = Fault::kWorkerError;
      r.fault_message = "check answered " + std::to_string(res.cases.size()) + " cases for 1";
    }
    fault_gate(g, r, c.check.case_id, slot == "candidate" ? "while running the candidate" : "while running the baseline");
    return false;
  }

  GateResult run_correctness(const std::vector<CorrectnessCase>& cases,
                             std::vector<protocol::CaseResult>* results) {
    GateResult g;
    g.gate = Gate::kCorrectness;
    g.status = GateStatus::kPass;
    for (const auto& c : cases) {
      protocol::CaseResult r;
      if (!check_one(g, "candidate", c, &r)) return g;
      CaseRow row = judge_correctness_case(c, r);
      g.rows.push_back(row);
      results->push_back(std::move(r));
      if (!row.pass) {
        g.status = GateStatus::kFail;
        g.failed_case = c.check.case_id;
        g.reason = "correctness: case " + c.check.case_id + ": " + row.detail;
        return g;
      }
    }
    // A case the worker could not judge (a GPU-sized case that does not fit) is no verdict
    // on the candidate; with no case judged at all there is nothing to pass on.
    const bool none_judged = !g.rows.empty() && std::all_of(g.rows.begin(), g.rows.end(),
                                                            [](const CaseRow& r) { return r.not_judged; });
    if (none_judged) {
      g.status = GateStatus::kError;
      g.fault = Fault::kCannotJudge;
      g.failed_case = g.rows.front().case_id;
      g.reason = "cannot judge: no case could be checked (" + g.rows.front().detail + ")";
    }
    return g;
  }

  GateResult run_oracle(const std::vector<CorrectnessCase>& cases,
                        const std::vector<protocol::CaseResult>& cand) {
    GateResult g;
    g.gate = Gate::kOracle;
    g.status = GateStatus::kPass;
    for (std::size_t i = 0; i < cases.size() && i < cand.size(); ++i) {
      const auto& c = cases[i];
      // A reference that cannot run in float64 (tensors made in forward without a dtype):
      // correctness was judged against the float32 reference, and there is no oracle.
      if (!cand[i].oracle_skip.empty()) {
        g.status = GateStatus::kSkipped;
        g.reason = "skipped: " + cand[i].oracle_skip;
        g.rows.clear();
        return g;
      }
      if (!cand[i].cannot_judge.empty()) continue;
      auto it = baseline_cache.find(c.check.case_id);
      if (it == baseline_cache.end()) {
        protocol::CaseResult b;
        if (!check_one(g, "baseline", c, &b)) return g;
        it = baseline_cache.emplace(c.check.case_id, std::move(b)).first;
      }
      CaseRow row = judge_oracle_case(c, cand[i], it->second, opt.thresholds);
      g.rows.push_back(row);
      if (!row.pass) {
        g.status = GateStatus::kFail;
        g.failed_case = c.check.case_id;
        g.reason = "oracle: case " + c.check.case_id + ": " + row.detail;
        return g;
      }
    }
    return g;
  }

  const ops::Dims& timed_dims() const {
    return (opt.backend == "host" && !problem.host_bench.empty()) ? problem.host_bench : problem.bench;
  }

  std::vector<CorrectnessCase> plan() const {
    const int n = std::max(1, opt.thresholds.seeds);
    if (kernelbench())
      return plan_kernelbench_correctness(opt.seed, n, problem.bench_dtype, problem.atol, problem.rtol);
    return plan_correctness(problem, *op, opt.backend, opt.seed, n);
  }

  protocol::TimeParams time_params() const {
    protocol::TimeParams tp;
    tp.slots = {"candidate", "baseline"};
    tp.dims = timed_dims();
    tp.dtype = std::string(to_string(problem.bench_dtype));
    tp.seed = opt.seed;
    tp.min_time_s = opt.measurement.min_time_s;
    tp.max_time_s = opt.measurement.max_time_s;
    tp.min_samples = opt.measurement.min_samples;
    tp.target_rse = opt.measurement.target_rse;
    tp.flush_l2 = opt.measurement.flush_l2;
    tp.warmup_s = std::min(0.05, opt.measurement.min_time_s / 4);
    tp.exclude_launch = opt.native_candidate;
    return tp;
  }

  std::string timed_case_id() const {
    if (kernelbench())
      return std::string(small_sizes ? "small" : "get_inputs") + "/" +
             std::string(to_string(problem.bench_dtype));
    return dims_str(*op, timed_dims()) + "/" + std::string(to_string(problem.bench_dtype));
  }

  double time_timeout() const { return opt.request_timeout_s + 2 * opt.measurement.max_time_s; }

  double compile_timeout() const {
    return opt.compile_timeout_s > 0 ? opt.compile_timeout_s : opt.request_timeout_s;
  }

  double bandwidth(const protocol::DeviceInfo& d) const {
    return opt.bandwidth_gbps > 0 ? opt.bandwidth_gbps : d.copy_bandwidth_gbps;
  }

  GateResult run_performance(std::optional<Timing>* timing) {
    GateResult g;
    g.gate = Gate::kPerformance;
    worker::Reply r = worker->call("time", Json(time_params()), time_timeout());
    if (!r.good()) {
      fault_gate(g, r, timed_case_id(), "while timing");
      return g;
    }
    protocol::TimeResult t = r.result.get<protocol::TimeResult>();
    auto pj = judge_performance(t, timed_case_id(), opt.thresholds, bandwidth(device),
                                opt.measurement.min_samples);
    // Inconclusive: one more interleaved run, four times as long, judged together with the
    // first (a power-bound 5 ms GEMM's first ~30 samples a side often cannot separate a 3%
    // change from noise). A failed extension leaves the first verdict standing.
    if (pj.timing.verdict == SpeedVerdict::kUnknown && pj.gate.status == GateStatus::kPass) {
      worker::Reply more = worker->call("time", Json(extended_time_params(time_params())), time_timeout());
      if (more.good()) {
        t = merge_time_results(t, more.result.get<protocol::TimeResult>());
        pj = judge_performance(t, timed_case_id(), opt.thresholds, bandwidth(device),
                               opt.measurement.min_samples);
      } else {
        log::warn("performance: extending an inconclusive timing failed: " + more.describe());
      }
    }
    *timing = pj.timing;
    return pj.gate;
  }

  // A fresh process: no state (allocator, caches, clocks warmed by earlier candidates)
  // carries over into the final numbers. `baseline_path` + `mode` as compile_baseline takes
  // them; `what` names the measurement in errors.
  Timing remeasure_in_fresh_worker(const std::string& candidate_path,
                                    const std::map<std::string, std::string>& defines,
                                    const std::string& baseline_path, const std::string& mode,
                                    const std::string& what) {
    Impl& m = *this;
    Fresh f = m.fresh_worker(candidate_path, what);
    m.compile_baseline(*f.worker, baseline_path, mode);
    m.compile_fresh_candidate(f, candidate_path, defines, what);
    return m.time_fresh(f, what);
  }

  // A fresh worker with the problem loaded, and what its candidate slot holds.
  struct Fresh {
    std::unique_ptr<worker::Worker> worker;
    protocol::DeviceInfo device;
    bool candidate = false;  // compiled into the candidate slot
    std::string library;     // kgate-native: the shared object the candidate compiled to
    std::string note;        // compiled mode: which kernel files it swapped in
    std::vector<std::string> swapped, unchanged;
  };

  // The evaluator's own worker for a gate or an inventory: started (and the problem
  // loaded) again when a fresh one took it over.
  worker::Worker& main() {
    if (!worker) {
      worker = std::make_unique<worker::Worker>(spec());
      device = setup(*worker);
    }
    worker_used = true;
    return *worker;
  }

  Fresh fresh_worker(const std::string& candidate_path, const std::string& what) {
    Impl& m = *this;
    if (m.compiled() && m.opt.kernels_dir.empty() &&
        paths::absolute(candidate_path) == paths::absolute(m.problem.path))
      throw InfraError(what + ": compiled mode without a kernel directory: the problem file alone is "
                       "torch.compile's model, there is no kernel set to measure");
    Fresh f;
    if (m.worker && !m.worker_used) {
      // The evaluator's own worker has done nothing since its load (an evaluator made for
      // its re-measures alone): as fresh as a new one, and the load is not paid twice (a
      // GPU-sized problem's load is seconds: its probe and float64 truth).
      f.worker = std::move(m.worker);
      f.device = m.device;
      return f;
    }
    f.worker = std::make_unique<worker::Worker>(m.spec());
    f.device = m.setup(*f.worker, /*timing=*/true);
    return f;
  }

  void compile_fresh_candidate(Fresh& f, const std::string& candidate_path,
                               const std::map<std::string, std::string>& defines, const std::string& what) {
    Impl& m = *this;
    protocol::CompileParams cp;
    cp.slot = "candidate";
    cp.source_path = paths::absolute(candidate_path);
    cp.defines = defines;
    cp.native = m.opt.native_candidate;
    worker::Reply r = f.worker->call("compile", Json(cp), m.compile_timeout());
    if (!r.good() || !r.result.value("compiled", false)) {
      throw InfraError(what + ": candidate " + candidate_path + " did not compile in a fresh worker: " +
                       (r.good() ? first_errors(r.result.value("log", std::string())) : r.describe()));
    }
    f.candidate = true;
    f.library = r.result.value("library", std::string());
    if (!m.compiled()) return;
    // Which kernel files this worker swapped in: a kept file equal to the fresh worker's own
    // Inductor choice (its autotuning can pick differently) is not swapped.
    for (const auto& n : r.result.value("overrides", Json::array())) f.swapped.push_back(n.get<std::string>());
    for (const auto& n : r.result.value("unchanged", Json::array())) f.unchanged.push_back(n.get<std::string>());
    std::string names;
    for (const auto& n : f.swapped) names += (names.empty() ? "" : ", ") + n;
    f.note = (f.swapped.empty() ? std::string("no kernel file swapped in") : "swapped in: " + names) +
             (f.unchanged.empty() ? "" : "; " + std::to_string(f.unchanged.size()) +
                                             " kernel file(s) equal to this worker's own Inductor choice");
    log::info(what + ": " + f.note);
  }

  Timing time_fresh(Fresh& f, const std::string& what) {
    Impl& m = *this;
    worker::Reply r = f.worker->call("time", Json(m.time_params()), m.time_timeout());
    if (!r.good()) throw InfraError(what + ": timing failed: " + r.describe());
    Timing t = judge_performance(r.result.get<protocol::TimeResult>(), m.timed_case_id(), m.opt.thresholds,
                                 m.bandwidth(f.device), m.opt.measurement.min_samples)
                   .timing;
    t.note = f.note;
    t.swapped = f.swapped;
    t.unchanged = f.unchanged;
    return t;
  }

  // Compiling the reference in this mode resets torch.compile's caches in the worker
  // (a torch.compile of its own), which would make a candidate compiled before it compile
  // again. Eager needs none, nor compiled mode's default compile: that model is the one
  // the candidate swaps its kernels into.
  bool reference_resets(const std::string& mode) const {
    return mode != "eager" && !(compiled() && mode == problem.kernelbench_baseline);
  }
};

Evaluator::Evaluator(config::NativeProblem problem, EvalOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->problem = std::move(problem);
  impl_->opt = std::move(options);
  // No cache named (kgate bench, kgate check): the kept one when $KGATE_CACHE_DIR names
  // it, else the worker's default (~/.cache/kgate).
  if (impl_->opt.cache_dir.empty()) impl_->opt.cache_dir = paths::kept_cache_dir();
  impl_->op = ops::find_op(impl_->problem.op);
  if (!impl_->op && impl_->problem.kind != "kernelbench") {
    throw UsageError(impl_->problem.loc.str() + ": error: problem " + impl_->problem.id + ": unknown op '" +
                     impl_->problem.op + "'");
  }
  if (impl_->opt.backend != "host" && impl_->opt.backend != "cuda")
    throw UsageError("unknown backend '" + impl_->opt.backend + "' (host or cuda)");
  impl_->worker = std::make_unique<worker::Worker>(impl_->spec());
  impl_->device = impl_->setup(*impl_->worker);
}

Evaluator::~Evaluator() = default;

const protocol::DeviceInfo& Evaluator::device() const { return impl_->device; }
const protocol::HelloResult& Evaluator::runtime() const { return impl_->runtime; }

CandidateVerdict Evaluator::evaluate(const std::string& candidate_path,
                                     const std::map<std::string, std::string>& defines,
                                     const std::string& baseline_path) {
  Impl& m = *impl_;
  const auto t0 = Clock::now();
  CandidateVerdict v;
  v.problem = m.problem.id;
  v.candidate = paths::absolute(candidate_path);
  v.backend = m.opt.backend;
  v.seed = m.opt.seed;

  const std::string baseline = m.resolve_baseline(baseline_path);
  std::vector<std::string> pins;
  for (const auto& pf : m.partners_of(candidate_path)) pins.push_back(pf.best_path);
  m.compile_baseline(m.main(), baseline, "", pins);

  v.degenerate = m.degenerate;
  std::vector<CorrectnessCase> cases = m.plan();
  std::vector<protocol::CaseResult> cand_results;

  auto run = [&](Gate gate, auto&& body) -> bool {
    auto g0 = Clock::now();
    GateResult g = body();
    g.gate = gate;
    g.elapsed_s = since(g0);
    bool ok = g.status == GateStatus::kPass || g.status == GateStatus::kSkipped;
    if (m.opt.on_gate) m.opt.on_gate(g);
    v.gates.push_back(std::move(g));
    if (!ok) v.failed_gate = gate;
    return ok;
  };
  bool ok = run(Gate::kStatic, [&] { return m.run_static(v.candidate, defines); });
  // The kernel-level screen (compiled mode): its slowdown stands for the performance gate.
  if (ok && m.screen_failure) ok = run(Gate::kPerformance, [&] { return *m.screen_failure; });
  ok = ok && run(Gate::kCorrectness, [&] {
    if (cases.empty()) {
      GateResult g;
      g.status = GateStatus::kFail;
      g.reason = "correctness: the problem has no valid shape to check";
      return g;
    }
    return m.run_correctness(cases, &cand_results);
  });
  ok = ok && run(Gate::kOracle, [&] { return m.run_oracle(cases, cand_results); });
  if (m.opt.run_performance) {
    ok = ok && run(Gate::kPerformance, [&] { return m.run_performance(&v.timing); });
  }
  // Gates after the first failure are listed as skipped, so every verdict has one row per gate.
  for (Gate g : {Gate::kStatic, Gate::kCorrectness, Gate::kOracle, Gate::kPerformance}) {
    bool present = false;
    for (const auto& r : v.gates) present = present || r.gate == g;
    if (!present) {
      GateResult s;
      s.gate = g;
      s.status = GateStatus::kSkipped;
      s.reason = g == Gate::kPerformance && !m.opt.run_performance
                     ? "not requested"
                     : "not run: the " + gate_name(*v.failed_gate) + " gate failed";
      v.gates.push_back(s);
    }
  }
  // In the gates' own order (the kernel-level screen fails the performance gate first).
  std::stable_sort(v.gates.begin(), v.gates.end(),
                   [](const GateResult& a, const GateResult& b) { return a.gate < b.gate; });
  v.passed = ok;
  v.wall_s = since(t0);
  return v;
}

void Evaluator::set_partners(const std::string& candidate, std::vector<PartnerFile> partners) {
  if (partners.empty()) impl_->partners.erase(paths::absolute(candidate));
  else impl_->partners[paths::absolute(candidate)] = std::move(partners);
}

void Evaluator::anchor_oracle(const std::string& starter_path) {
  Impl& m = *impl_;
  if (m.kernelbench() || !m.baseline_cache.empty()) return;
  m.compile_baseline(m.main(), m.resolve_baseline(starter_path));
  std::map<std::string, protocol::CaseResult> anchor;
  for (const auto& c : m.plan()) {
    GateResult g;
    g.gate = Gate::kOracle;
    protocol::CaseResult b;
    if (!m.check_one(g, "baseline", c, &b))
      throw InfraError("anchoring the oracle at the starter " + starter_path + ": " + g.reason);
    anchor.emplace(c.check.case_id, std::move(b));
  }
  m.baseline_cache = std::move(anchor);
}

std::map<std::string, ReferenceTiming> Evaluator::remeasure_references(const std::string& candidate_path,
                                                                       const std::map<std::string, std::string>& defines,
                                                                       std::vector<std::string> modes,
                                                                       const std::function<bool()>& stop) {
  Impl& m = *impl_;
  if (!m.kernelbench()) throw UsageError("remeasure_references: " + m.problem.id + " is not a KernelBench problem");
  std::map<std::string, ReferenceTiming> out;
  // The reference that resets torch.compile's caches goes first, before the candidate is
  // compiled; a second such mode gets a fresh worker of its own.
  std::stable_partition(modes.begin(), modes.end(), [&](const std::string& mo) { return m.reference_resets(mo); });
  std::optional<Impl::Fresh> shared;
  std::string all;
  for (const auto& mo : modes) all += (all.empty() ? "" : ", ") + mo;
  for (const std::string& mode : modes) {
    if (stop && stop()) break;
    const std::string what = "remeasure vs " + mode;
    ReferenceTiming& rt = out[mode];
    try {
      if (shared && m.reference_resets(mode)) {
        rt.timing = m.remeasure_in_fresh_worker(candidate_path, defines, m.problem.path, mode, what);
        continue;
      }
      if (!shared) shared = m.fresh_worker(candidate_path, what);
      m.compile_baseline(*shared->worker, m.problem.path, mode);
      if (!shared->candidate) m.compile_fresh_candidate(*shared, candidate_path, defines, "remeasure vs " + all);
      rt.timing = m.time_fresh(*shared, what);
      log::info(what + ": the reference " + core::fmt_num(rt.timing.baseline_us) + " us, the candidate " +
                core::fmt_num(rt.timing.candidate_us) + " us (worker " + std::to_string(shared->worker->pid()) + ")");
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      // torch.compile can fail on a machine (no compiler, unsupported op): that column is
      // then empty rather than the problem without a result. A worker whose candidate did
      // not compile is not asked again (a worker that died restarts with its setup).
      rt.error = e.what();
      if (shared && !shared->candidate) shared.reset();
    }
  }
  return out;
}

std::map<std::string, ReferenceTiming> Evaluator::torch_references(const std::string& candidate_path,
                                                                   const std::map<std::string, std::string>& defines,
                                                                   std::vector<std::string> modes,
                                                                   const std::function<bool()>& stop) {
  Impl& m = *impl_;
  if (m.kernelbench()) throw UsageError("torch_references: " + m.problem.id + " is a KernelBench problem");
  const ops::Op* op = ops::find_op(m.problem.op);
  if (op == nullptr || op->torch_form().empty() || !m.problem.reference_source.empty()) return {};
  const std::string what = "the PyTorch references";
  // The run's cache; without one (kgate bench), a directory of this user's under the temp.
  const fs::path dir = m.opt.cache_dir.empty()
                           ? fs::temp_directory_path() / ("kgate-torch-forms-" + std::to_string(getuid()))
                           : fs::path(m.opt.cache_dir) / "torch-forms";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InfraError(what + ": cannot create " + dir.string() + ": " + ec.message());
  // The library: built (or found in the cache) by a fresh kgate-native worker, copied out
  // of its directory before the worker ends, named by its content.
  std::string library;
  {
    Impl::Fresh f = m.fresh_worker(candidate_path, what);
    m.compile_fresh_candidate(f, candidate_path, defines, what);
    if (f.library.empty()) throw InfraError(what + ": kgate-native named no library for " + candidate_path);
    const core::ReadResult so = core::read_file(f.library);
    if (!so.ok()) throw InfraError(what + ": cannot read " + f.library + ": " + so.error);
    library = (dir / (hash_bytes(so.bytes).substr(0, 16) + ".so")).string();
    if (!fs::exists(library)) core::write_file_atomic_or_throw(library, so.bytes);
  }
  // The form, at the shape and dtype the candidate is timed at.
  const std::string title = "The PyTorch form of kgate's op '" + std::string(op->name()) + "' at " +
                            dims_str(*op, m.timed_dims()) + " (" + std::string(to_string(m.problem.bench_dtype)) +
                            "), written by kgate for problem " + m.problem.id +
                            ":\nits candidate is timed against this model in eager and under torch.compile.";
  const std::string text = ops::torch_form_module(*op, m.timed_dims(), m.problem.bench_dtype, title);
  const std::string form = (dir / (std::string(op->name()) + "-" + hash_bytes(text).substr(0, 12) + ".py")).string();
  if (!fs::exists(form)) core::write_file_atomic_or_throw(form, text);
  config::NativeProblem kb = config::kernelbench_problem(m.problem.id + " (PyTorch form)", form, "eager");
  kb.bench_dtype = m.problem.bench_dtype;
  EvalOptions o = m.opt;
  o.native_candidate = true;
  o.workspace.clear();
  o.kernels_dir.clear();
  o.on_gate = nullptr;
  Evaluator py(std::move(kb), std::move(o));
  return py.remeasure_references(library, {}, std::move(modes), stop);
}

bool Evaluator::kernelbench() const { return impl_->kernelbench(); }

bool Evaluator::compiled() const { return impl_->compiled(); }

protocol::Json Evaluator::inventory(const std::string& dir, const std::string& seed_mode) {
  Impl& m = *impl_;
  if (!m.compiled()) throw UsageError("inventory: " + m.problem.id + " is not a compiled-mode KernelBench problem");
  Json params = {{"profile", true}};
  if (!dir.empty()) params["dir"] = paths::absolute(dir);
  if (!seed_mode.empty()) {
    params["seed_mode"] = seed_mode;
    // Each seeded kernel costs its own autotuning and descent: only the kernels the plan
    // would search (an Amdahl bound at the keep threshold) are seeded.
    params["seed_min_bound"] = m.opt.thresholds.keep_threshold;
  }
  // A cold torch.compile of a level-3 network takes minutes: the compile budget applies.
  worker::Reply r = m.main().call("inventory", params,
                                   m.compile_timeout() * (seed_mode.empty() ? 1 : 2) + m.opt.request_timeout_s);
  if (!r.good())
    throw InfraError("inventory of " + m.problem.id + " (torch.compile's kernels): " + r.describe() +
                     (r.stderr_tail.empty() ? "" : "\nworker stderr:\n" + r.stderr_tail));
  return r.result;
}

Timing Evaluator::remeasure(const std::string& candidate_path,
                            const std::map<std::string, std::string>& defines,
                            const std::string& baseline_path) {
  Impl& m = *impl_;
  return m.remeasure_in_fresh_worker(candidate_path, defines, m.resolve_baseline(baseline_path), "", "remeasure");
}

}  // namespace kgate::gates

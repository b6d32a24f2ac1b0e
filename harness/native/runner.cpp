#include "native/runner.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <vector>

#include "core/log.h"
#include "core/number_format.h"
#include "kgate/build_info.h"
#include "native/compile_cache.h"
#include "native/device_buffer.h"
#include "native/timing_audit.h"

namespace kgate::native {
namespace fs = std::filesystem;
using protocol::ErrorKind;
using protocol::Json;

namespace {

// A request the runner answers with ok:false.
struct RequestError {
  ErrorKind kind;
  std::string message;
};

[[noreturn]] void bad_request(const std::string& m) { throw RequestError{ErrorKind::kBadRequest, m}; }

// Typed params; a field of the wrong type is the orchestrator's bug: bad_request.
template <typename T>
T parse_params(const Json& p, const char* op) {
  if (!p.is_object()) bad_request(std::string(op) + ": params must be a JSON object");
  try {
    return p.get<T>();
  } catch (const Json::exception& e) {
    bad_request(std::string(op) + ": bad params: " + e.what());
  }
}

void require(const Json& p, const char* op, const char* field, Json::value_t type) {
  if (!p.contains(field)) bad_request(std::string(op) + ": missing required field \"" + field + "\"");
  const Json& v = p.at(field);
  bool ok = v.type() == type ||
            (type == Json::value_t::number_integer && v.is_number_unsigned());
  if (!ok) bad_request(std::string(op) + ": field \"" + field + "\" has the wrong type");
}

bool valid_slot(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_.-]*");
  return std::regex_match(s, re);
}

bool valid_macro_name(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, re);
}

std::string self_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace

std::size_t default_case_cache_bytes() {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  if (const char* env = std::getenv("KGATE_CASE_CACHE_MB"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return static_cast<std::size_t>(mb) << 20;
    log::warn(std::string("ignoring KGATE_CASE_CACHE_MB=\"") + env + "\" (not a number of MiB)");
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return kGiB;
  const std::size_t phys = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  return std::clamp(phys / 8, kGiB, 16 * kGiB);
}

// ---- backend selection ----------------------------------------------------------------

std::unique_ptr<Backend> make_backend(const protocol::HelloParams& p, std::string* err,
                                      const std::string& plugin_dir) {
  if (p.backend == "host") return make_host_backend();
  if (p.backend != "cuda") {
    *err = "unknown backend \"" + p.backend + "\"";
    return nullptr;
  }
  // The plugin is loaded once per process and never unloaded: backends live in its code.
  static void* handle = nullptr;
  std::string path = (plugin_dir.empty() ? self_dir() : plugin_dir) + "/" + kCudaPluginName;
  if (!handle) {
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = ::dlerror();
      *err = "cuda backend unavailable: " + std::string(e ? e : "cannot load " + path);
      return nullptr;
    }
  }
  ::dlerror();
  auto create = reinterpret_cast<CreateCudaBackendFn>(::dlsym(handle, kCudaPluginEntry));
  if (!create) {
    *err = "cuda backend unavailable: " + path + " does not export " + kCudaPluginEntry;
    return nullptr;
  }
  std::string why;
  Backend* b = nullptr;
  try {
    b = create(p.device_index, &why);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!b) {
    *err = "cuda backend unavailable: " + (why.empty() ? std::string("no device") : why);
    return nullptr;
  }
  return std::unique_ptr<Backend>(b);
}

// ---- Runner ---------------------------------------------------------------------------

Runner::Runner(RunnerOptions opts) : opts_(std::move(opts)) {
  if (!opts_.backend_factory) {
    opts_.backend_factory = [](const protocol::HelloParams& p, std::string* err) {
      return make_backend(p, err);
    };
  }
  cache_dir_ = default_cache_dir();
}

Runner::~Runner() {
  // Modules before the backend that made them.
  slots_.clear();
}

std::string Runner::handle(const std::string& line) {
  if (line.find_first_not_of(" \t\r\n") == std::string::npos) return "";
  protocol::Request req;
  std::string perr;
  if (!protocol::parse_request(line, &req, &perr)) {
    // Answer with the id when one can be read, so the orchestrator can match it.
    int64_t id = 0;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("id") && j["id"].is_number_integer()) id = j["id"].get<int64_t>();
    return protocol::make_error(id, ErrorKind::kBadRequest, perr);
  }
  try {
    return protocol::make_ok(req.id, dispatch(req));
  } catch (const RequestError& e) {
    return protocol::make_error(req.id, e.kind, e.message);
  } catch (const DeviceFault& e) {
    // The device is poisoned for this process: answer, then exit so a fresh runner starts.
    done_ = true;
    exit_code_ = kRunnerExitDeviceFault;
    log::error(std::string("device fault, exiting: ") + e.what());
    return protocol::make_error(req.id, ErrorKind::kInternal, std::string("device fault: ") + e.what());
  } catch (const std::bad_alloc&) {
    return protocol::make_error(req.id, ErrorKind::kInternal, req.op + ": out of memory");
  } catch (const std::exception& e) {
    return protocol::make_error(req.id, ErrorKind::kInternal, req.op + ": " + e.what());
  }
}

Json Runner::dispatch(const protocol::Request& req) {
  const Json& p = req.params;
  if (req.op == "hello") return do_hello(p);
  if (req.op == "load_problem") return do_load_problem(p);
  if (req.op == "compile") return do_compile(p);
  if (req.op == "check") return do_check(p);
  if (req.op == "time") return do_time(p);
  if (req.op == "shutdown") {
    done_ = true;
    exit_code_ = kRunnerExitOk;
    return Json::object();
  }
  bad_request("unknown op \"" + req.op +
              "\" (known: hello, load_problem, compile, check, time, shutdown)");
}

Backend& Runner::backend() {
  if (!backend_) backend_ = make_host_backend();
  return *backend_;
}

HostCompiler* Runner::host_compiler() {
  if (!host_compiler_) host_compiler_ = std::make_unique<HostCompiler>();
  return host_compiler_.get();
}

void Runner::drop_slots() { slots_.clear(); }

const ops::Op& Runner::op() const {
  if (!op_) throw RequestError{ErrorKind::kNoProblem, "no problem loaded (send load_problem first)"};
  return *op_;
}

const Module& Runner::slot_module(const std::string& slot) const {
  auto it = slots_.find(slot);
  if (it == slots_.end() || !it->second) {
    throw RequestError{ErrorKind::kNoCandidate,
                       "slot \"" + slot + "\" holds no compiled module (send compile first)"};
  }
  return *it->second;
}

Json Runner::do_hello(const Json& p) {
  auto hp = parse_params<protocol::HelloParams>(p, "hello");
  if (hp.backend != "host" && hp.backend != "cuda") {
    bad_request("hello: backend must be \"host\" or \"cuda\", not \"" + hp.backend + "\"");
  }
  std::string err;
  std::unique_ptr<Backend> b;
  try {
    b = opts_.backend_factory(hp, &err);
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (!b) throw RequestError{ErrorKind::kUnsupported, err.empty() ? "backend unavailable" : err};
  drop_slots();  // modules belong to the backend that compiled them
  backend_ = std::move(b);
  cache_dir_ = hp.cache_dir.empty() ? default_cache_dir() : hp.cache_dir;

  protocol::HelloResult r;
  r.runner = "kgate-native";
  r.version = std::string(build::kVersion) + " (" + build::kGitSha + ")";
  r.protocol = protocol::kVersion;
  r.backend = backend_->name();
  r.device = backend_->device_info();
  return r;
}

Json Runner::do_load_problem(const Json& p) {
  require(p, "load_problem", "problem", Json::value_t::object);
  auto spec = parse_params<protocol::ProblemSpec>(p.at("problem"), "load_problem");
  if (spec.kind != "native") {
    throw RequestError{ErrorKind::kUnsupported,
                       "kgate-native runs native problems; \"" + spec.kind +
                           "\" problems go to the python worker"};
  }
  if (spec.op.empty()) bad_request("load_problem: problem.op is required");
  const ops::Op* op = ops::find_op(spec.op);
  if (!op) {
    std::string known;
    for (const auto& n : ops::op_names()) known += (known.empty() ? "" : ", ") + n;
    bad_request("load_problem: unknown op \"" + spec.op + "\" (known: " + known + ")");
  }
  std::unique_ptr<UserReference> ref;
  if (!spec.reference_source.empty()) {
    std::string err;
    ref = UserReference::load(spec.reference_source, cache_dir_, *host_compiler(), &err);
    if (!ref) bad_request("load_problem: " + err);
  }
  bool same = problem_ && problem_->id == spec.id && problem_->op == spec.op &&
              problem_->reference_source == spec.reference_source;
  if (!same) {
    drop_slots();
    cases_.clear();
    time_inputs_.clear();
    audit_tol_.clear();
    case_lru_.clear();
    case_bytes_ = 0;
  }
  problem_ = spec;
  op_ = op;
  reference_ = std::move(ref);

  protocol::LoadProblemResult r;
  for (const auto& d : op->inputs()) {
    r.inputs.push_back({d.name, d.fixed_dtype ? std::string(to_string(*d.fixed_dtype)) : "case"});
  }
  for (const auto& d : op->outputs()) {
    r.outputs.push_back({d.name, d.fixed_dtype ? std::string(to_string(*d.fixed_dtype)) : "case"});
  }
  return r;
}

Json Runner::do_compile(const Json& p) {
  require(p, "compile", "source_path", Json::value_t::string);
  auto cp = parse_params<protocol::CompileParams>(p, "compile");
  if (!valid_slot(cp.slot)) bad_request("compile: bad slot name \"" + cp.slot + "\"");
  for (const auto& [name, value] : cp.defines) {
    if (!valid_macro_name(name)) bad_request("compile: bad define name \"" + name + "\"");
    if (value.find('\n') != std::string::npos) bad_request("compile: define " + name + " has a newline");
  }
  std::shared_ptr<Module> m;
  slots_.erase(cp.slot);  // a failed compile leaves the slot empty, never the old module
  protocol::CompileResult r = backend().compile(cp.source_path, cp.defines, cache_dir_, &m);
  if (r.compiled && m) slots_[cp.slot] = std::move(m);
  return r;
}

const CaseData& Runner::case_data(const protocol::CheckCase& c) {
  std::string key = case_key(c);
  auto it = cases_.find(key);
  if (it != cases_.end()) {
    case_lru_.remove(key);
    case_lru_.push_front(key);
    return it->second;
  }
  CaseData d = make_case_data(op(), reference_.get(), c, &backend());
  std::size_t sz = d.bytes();
  // Evict the least recently used cases, keeping at least the one being added.
  while (!case_lru_.empty() && case_bytes_ + sz > opts_.case_cache_bytes) {
    auto old = cases_.find(case_lru_.back());
    case_bytes_ -= old->second.bytes();
    cases_.erase(old);
    case_lru_.pop_back();
  }
  case_bytes_ += sz;
  case_lru_.push_front(key);
  return cases_.emplace(key, std::move(d)).first->second;
}

Json Runner::do_check(const Json& p) {
  require(p, "check", "cases", Json::value_t::array);
  auto cp = parse_params<protocol::CheckParams>(p, "check");
  const ops::Op& o = op();
  const Module& m = slot_module(cp.slot);
  protocol::CheckResult r;
  const Json& raw_cases = p.at("cases");
  for (std::size_t i = 0; i < cp.cases.size(); ++i) {
    protocol::CheckCase c = cp.cases[i];
    // Tolerances left out of the request default to the op's for the dtype.
    if (!raw_cases[i].contains("atol") && !raw_cases[i].contains("rtol")) {
      if (auto dt = parse_dtype(c.dtype)) {
        auto tol = o.tolerance_at(*dt, c.dims);
        c.atol = tol.atol;
        c.rtol = tol.rtol;
      }
    }
    if (auto dt = parse_dtype(c.dtype)) {
      ops::Tolerance& t = audit_tol_[*dt];
      t.atol = std::max(t.atol, c.atol);
      t.rtol = std::max(t.rtol, c.rtol);
    }
    try {
      const CaseData& data = case_data(c);
      r.cases.push_back(check_case(backend(), m, o, c, data));
    } catch (const BadCase& e) {
      bad_request("check: case \"" + c.case_id + "\": " + e.what());
    }
  }
  return r;
}

const std::vector<ops::HostTensor>& Runner::time_inputs(const ops::Dims& dims, DType dtype,
                                                        uint64_t seed) {
  std::string key = std::string(to_string(dtype)) + "/" + std::to_string(seed);
  for (const auto& [name, v] : dims) key += "/" + name + "=" + std::to_string(v);
  auto it = time_inputs_.find(key);
  if (it != time_inputs_.end()) return it->second;
  std::size_t bytes = 0;
  for (const auto& [k, v] : time_inputs_) {
    for (const auto& t : v) bytes += t.bytes.size();
  }
  if (bytes > opts_.case_cache_bytes * 8) time_inputs_.clear();  // keep the host footprint bounded
  auto drawn = op().make_inputs(dims, dtype, seed, ops::Distribution::kNormal);
  return time_inputs_.emplace(key, std::move(drawn)).first->second;
}

ops::Tolerance Runner::audit_tolerance(DType dtype, const ops::Dims& dims) const {
  ops::Tolerance t = op().tolerance_at(dtype, dims);
  if (auto it = audit_tol_.find(dtype); it != audit_tol_.end()) {
    t.atol = std::max(t.atol, it->second.atol);
    t.rtol = std::max(t.rtol, it->second.rtol);
  }
  return t;
}

namespace {

// Two correct slots are each within the check's tolerance of the truth, so within about
// twice it of each other (relative to the baseline's value instead of the truth's: 2.1).
constexpr double kAuditSlack = 2.1;

// Every slot's outputs of input set `set` against the baseline slot's, brought to the
// host (`staging`: one HostTensor per slot and output, sized once). Integer and bool
// outputs must match exactly; NaN only NaN, an infinity only itself (compare_output).
std::string compare_slots(Backend& b, const std::vector<TimedCall>& calls, std::size_t base,
                          std::size_t set, std::vector<std::vector<ops::HostTensor>>& staging,
                          const std::vector<ops::TensorDecl>& decls, const ops::Tolerance& tol) {
  auto fetch = [&](std::size_t k, std::size_t j) -> const ops::HostTensor& {
    ops::HostTensor& t = staging[k][j];
    b.to_host(t.bytes.data(), calls[k].output_sets[set][j].data, t.bytes.size());
    return t;
  };
  for (std::size_t j = 0; j < decls.size(); ++j) {
    const ops::HostTensor& want = fetch(base, j);
    const bool exact = !is_float(want.dtype);
    for (std::size_t k = 0; k < calls.size(); ++k) {
      if (k == base) continue;
      const ops::HostTensor& got = fetch(k, j);
      protocol::OutputError e =
          compare_output(decls[j].name, got, want, exact ? 0 : kAuditSlack * tol.atol,
                         exact ? 0 : kAuditSlack * tol.rtol);
      if (e.over_tol == 0) continue;
      std::string where = e.worst_index >= 0 ? ", first worst at [" + std::to_string(e.worst_index) + "]: " +
                                                   (e.worst_kind == "finite" || e.worst_kind.empty()
                                                        ? core::fmt_num(e.worst_got)
                                                        : e.worst_kind) +
                                                   " where slot '" + calls[base].slot + "' has " +
                                                   core::fmt_num(e.worst_want)
                                             : "";
      return "slot '" + calls[k].slot + "' output '" + decls[j].name + "': " + std::to_string(e.over_tol) +
             " of " + std::to_string(got.numel()) + " elements differ from slot '" + calls[base].slot +
             "' beyond " + (exact ? std::string("exact equality") : "2.1x the check's tolerance") + where;
    }
  }
  return "";
}


// Every slot's outputs of input set `set` filled with the poison pattern of their dtype.
void poison_outputs(Backend& b, std::vector<TimedCall>& calls, std::size_t set) {
  for (TimedCall& c : calls)
    for (const kgate_tensor& t : c.output_sets[set])
      b.fill(t.data, poison_pattern(static_cast<DType>(static_cast<int>(t.dtype))), tensor_bytes(t));
}

// Rounds on contents the timed calls never saw, at the addresses they used: the input
// sets' contents rotated by one (set s gets set s+1's), every slot's outputs poisoned, each
// slot called once (untimed), then audited. A result cache keyed on addresses returns what
// it stored for the old contents; one that skips work leaves the poisoned outputs.
void fresh_contents_rounds(Backend& b, std::vector<TimedCall>& calls, RoundAudit& audit,
                           protocol::TimeResult& r) {
  if (!audit.failure().empty()) return;
  const std::size_t n_sets = calls.front().input_sets.size();
  if (n_sets < 2) {
    r.audit_note = "one input set: no round on fresh contents";
    return;
  }
  const auto& sets = calls.front().input_sets;  // every slot sees the same input buffers
  for (std::size_t i = 0; i < sets[0].size(); ++i) {
    const std::size_t bytes = tensor_bytes(sets[0][i]);
    DeviceBuffer first(b, bytes);
    b.copy(first.get(), sets[0][i].data, bytes);
    for (std::size_t s = 0; s + 1 < n_sets; ++s) b.copy(sets[s][i].data, sets[s + 1][i].data, bytes);
    b.copy(sets[n_sets - 1][i].data, first.get(), bytes);
  }
  for (std::size_t s = 0; s < n_sets; ++s) {
    poison_outputs(b, calls, s);
    for (TimedCall& c : calls) {
      const int rc = b.run(*c.module, c.input_sets[s], c.output_sets[s]);
      if (rc != 0) {
        audit.fail("a round on fresh contents: slot '" + c.slot + "' returned " + std::to_string(rc));
        return;
      }
    }
    if (!audit.audit_now(s, "a round on fresh contents (input set " + std::to_string(s) +
                                " holding set " + std::to_string((s + 1) % n_sets) + "'s)"))
      return;
  }
}

// Rounds on contents no call has seen: each input of a set shifted in place by a few
// elements (circularly: the same values, valid for every op's inputs, at new positions),
// outputs poisoned, the baseline called once to settle, then every slot called once in
// turn, timed, and audited. Each round runs twice over the very same steps: the second
// pass writes the same shifted contents again (the same copies, an offset of zero in
// place of the shift), poisons, settles and calls the slots in the same order. In the
// first pass no slot has seen these contents; in the second every slot has, after exactly
// the same work, so what that work leaves behind (caches, clocks, a heavier baseline's
// call just before) weighs on both and cancels out of their ratio, and so does load; a
// result cache keyed on content computes on the first and only copies on the second. Both
// calls are timed the same way (on the host clock, launch and synchronisation included).
// Fills each slot's times (us) on new contents and on seen ones; false when a slot failed
// (the audit holds why).
constexpr int kNewContentRounds = 5;

struct ContentTimes {
  std::vector<std::vector<double>> fresh, seen;  // [slot][round]
};

bool new_content_rounds(Backend& b, std::vector<TimedCall>& calls, std::size_t base, RoundAudit& audit,
                        std::size_t first_shift, ContentTimes& out) {
  out.fresh.assign(calls.size(), {});
  out.seen.assign(calls.size(), {});
  const std::size_t n_sets = calls.front().input_sets.size();
  for (int i = 0; i < kNewContentRounds; ++i) {
    const std::size_t set = static_cast<std::size_t>(i) % n_sets, shift = first_shift + static_cast<std::size_t>(i);
    for (int pass = 0; pass < 2; ++pass) {
      for (const kgate_tensor& t : calls.front().input_sets[set]) {
        const std::size_t bytes = tensor_bytes(t);
        const std::size_t off = (shift * dtype_size(static_cast<DType>(static_cast<int>(t.dtype)))) % std::max<std::size_t>(bytes, 1);
        if (off == 0) continue;
        // pass 0 rotates by `off`; pass 1 writes the rotated contents back in place with
        // the same two copies
        const std::size_t at = pass == 0 ? off : 0;
        DeviceBuffer was(b, bytes);
        b.copy(was.get(), t.data, bytes);
        b.copy(t.data, static_cast<unsigned char*>(was.get()) + at, bytes - off);
        b.copy(static_cast<unsigned char*>(t.data) + (bytes - off),
               static_cast<unsigned char*>(was.get()) + (at == 0 ? bytes - off : 0), off);
      }
      poison_outputs(b, calls, set);
      int rc = b.run(*calls[base].module, calls[base].input_sets[set], calls[base].output_sets[set]);
      if (rc != 0)
        audit.fail("a round on new contents: slot '" + calls[base].slot + "' returned " + std::to_string(rc));
      for (std::size_t j = 0; j < calls.size() && rc == 0; ++j) {
        TimedCall& c = calls[i % 2 == 0 ? j : calls.size() - 1 - j];
        const std::size_t k = static_cast<std::size_t>(&c - calls.data());
        const auto t0 = std::chrono::steady_clock::now();
        rc = b.run(*c.module, c.input_sets[set], c.output_sets[set]);
        (pass == 0 ? out.fresh : out.seen)[k].push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        if (rc != 0) audit.fail("a round on new contents: slot '" + c.slot + "' returned " + std::to_string(rc));
      }
      if (rc != 0 || !audit.audit_now(set, "a round on new contents (input set " + std::to_string(set) +
                                               " shifted by " + std::to_string(shift) + " elements" +
                                               (pass == 1 ? ", again" : "") + ")"))
        return false;
    }
  }
  return true;
}

double median_us(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "" unless a slot's medians on new contents and on the same contents seen, beside the
// baseline's, read as a result cache (looks_like_result_cache, timing_audit.h; the Python
// worker's rule is kgate_worker/audit.py).
std::string cache_finding(const std::vector<TimedCall>& calls, std::size_t base, const ContentTimes& t) {
  const double bs = median_us(t.seen[base]), bf = median_us(t.fresh[base]);
  for (std::size_t k = 0; k < calls.size(); ++k) {
    if (k == base) continue;
    const double cs = median_us(t.seen[k]), cf = median_us(t.fresh[k]);
    if (looks_like_result_cache(bs, bf, cs, cf))
      return "slot '" + calls[k].slot + "' is faster on inputs it has seen before (a result cache): median " +
             core::fmt_num(cf) + " us over " + std::to_string(t.fresh[k].size()) + " calls on new contents against " +
             core::fmt_num(cs) + " us on the same contents again after the same steps (baseline " + core::fmt_num(bf) +
             " against " + core::fmt_num(bs) + " us)";
  }
  return "";
}

// The content-cache rule over two sets of new-content rounds: a cache is slower on new
// contents every time; a burst of load over the first set's few rounds is not repeated.
void content_cache_rounds(Backend& b, std::vector<TimedCall>& calls, std::size_t base, RoundAudit& audit,
                          protocol::TimeResult& r) {
  if (!audit.failure().empty()) return;
  ContentTimes first, second;
  if (!new_content_rounds(b, calls, base, audit, 1, first)) return;
  const std::string seen = cache_finding(calls, base, first);
  if (seen.empty()) return;
  if (!new_content_rounds(b, calls, base, audit, 1 + kNewContentRounds, second)) return;
  const std::string again = cache_finding(calls, base, second);
  if (!again.empty()) {
    audit.fail(again);
    return;
  }
  r.audit_note += std::string(r.audit_note.empty() ? "" : "; ") +
                  "new contents: slower once, not in a second set of rounds (load, not a cache): " + seen;
}

}  // namespace

Json Runner::do_time(const Json& p) {
  auto tp = parse_params<protocol::TimeParams>(p, "time");
  const ops::Op& o = op();
  if (tp.slots.empty()) bad_request("time: slots is empty");
  std::set<std::string> seen;
  for (const auto& s : tp.slots) {
    if (!seen.insert(s).second) bad_request("time: slot \"" + s + "\" listed twice");
    slot_module(s);
  }
  auto dtype = parse_dtype(tp.dtype);
  if (!dtype) bad_request("time: unknown dtype \"" + tp.dtype + "\"");
  for (const auto& d : o.dims()) {
    if (!tp.dims.count(d)) bad_request("time: op " + std::string(o.name()) + " needs dim " + d);
  }
  if (std::string why = o.check_dims(tp.dims); !why.empty()) bad_request("time: " + why);
  if (tp.input_sets < 1) bad_request("time: input_sets must be >= 1");
  if (tp.max_samples < 1) bad_request("time: max_samples must be >= 1");
  if (!(tp.max_time_s > 0)) bad_request("time: max_time_s must be > 0");

  Backend& b = backend();
  std::vector<DeviceBuffer> buffers;
  buffers.reserve(static_cast<std::size_t>(tp.input_sets) * (o.inputs().size() + tp.slots.size() * o.outputs().size()));
  std::vector<TimedCall> calls(tp.slots.size());
  for (std::size_t k = 0; k < tp.slots.size(); ++k) {
    calls[k].slot = tp.slots[k];
    calls[k].module = &slot_module(tp.slots[k]);
  }
  const auto out_decls = o.outputs();
  for (int s = 0; s < tp.input_sets; ++s) {
    // Every slot sees the same inputs; each set is drawn fresh so no slot times a
    // cache-resident copy of the previous call's data.
    // Drawing GPU-sized inputs on the host costs seconds; repeated `time` requests on the
    // same (dims, dtype, seed) -- every candidate of a search -- reuse the drawn sets.
    const auto& inputs = time_inputs(tp.dims, *dtype, tp.seed + static_cast<uint64_t>(s));
    std::vector<kgate_tensor> in_desc;
    for (const auto& t : inputs) {
      buffers.emplace_back(b, t.bytes.size());
      b.to_device(buffers.back().get(), t.bytes.data(), t.bytes.size());
      in_desc.push_back(describe(t, buffers.back().get()));
    }
    for (auto& call : calls) {
      std::vector<kgate_tensor> out_desc;
      for (const auto& d : out_decls) {
        // Shape and dtype only: the buffer is cleared on the device (a 1 GiB output built
        // and uploaded from the host cost ~0.3 s per request).
        ops::HostTensor t;
        t.dtype = d.fixed_dtype ? *d.fixed_dtype : *dtype;
        t.shape = o.shape_of(d, tp.dims);
        const std::size_t bytes = static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype);
        buffers.emplace_back(b, bytes);
        b.zero(buffers.back().get(), bytes);
        out_desc.push_back(describe(t, buffers.back().get()));
      }
      call.input_sets.push_back(in_desc);
      call.output_sets.push_back(std::move(out_desc));
    }
  }
  // The audit of the timed calls: every slot's outputs against the baseline's (the slot
  // named "baseline", else the first), between rounds, and then on contents the timed
  // calls never saw. One slot has nothing to be compared with.
  std::optional<RoundAudit> audit;
  std::vector<std::vector<ops::HostTensor>> staging;
  std::size_t audit_base = 0;
  if (calls.size() >= 2) {
    std::size_t base = 0;
    for (std::size_t k = 0; k < calls.size(); ++k)
      if (calls[k].slot == "baseline") base = k;
    audit_base = base;
    for (std::size_t k = 0; k < calls.size(); ++k) {
      staging.emplace_back();
      for (const auto& d : out_decls)
        staging.back().push_back(
            ops::HostTensor::make(d.fixed_dtype ? *d.fixed_dtype : *dtype, o.shape_of(d, tp.dims)));
    }
    const ops::Tolerance tol = audit_tolerance(*dtype, tp.dims);
    audit.emplace([&, base, tol](std::size_t set) { return compare_slots(b, calls, base, set, staging, out_decls, tol); },
                  [&](std::size_t set) { poison_outputs(b, calls, set); }, unpredictable_seed());
  }
  protocol::TimeResult r = b.time(calls, tp, audit ? &*audit : nullptr);
  if (audit) {
    if (r.return_code == 0) fresh_contents_rounds(b, calls, *audit, r);
    if (r.return_code == 0) content_cache_rounds(b, calls, audit_base, *audit, r);
    audit->fill(r);
  } else {
    r.audit_note = "one slot timed: no outputs to compare it with";
  }
  r.min_bytes = o.min_bytes(tp.dims, *dtype);
  r.flops = o.flops(tp.dims);
  return r;
}

// ---- serve ----------------------------------------------------------------------------

namespace {
bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}
}  // namespace

int serve(Runner& runner, int in_fd, int out_fd) {
  std::string buf;
  char chunk[65536];
  bool eof = false;
  while (!eof) {
    ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      log::error(std::string("kgate-native: reading requests: ") + std::strerror(errno));
      return kRunnerExitIoError;
    }
    if (n == 0) {
      eof = true;
      if (!buf.empty()) buf += '\n';  // a final request without its newline still counts
    } else {
      buf.append(chunk, static_cast<std::size_t>(n));
    }
    std::size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      std::string line = buf.substr(start, nl - start);
      start = nl + 1;
      std::string resp = runner.handle(line);
      if (!resp.empty() && !write_all(out_fd, resp + "\n")) {
        log::error(std::string("kgate-native: writing a response: ") + std::strerror(errno));
        return kRunnerExitIoError;
      }
      if (runner.done()) return runner.exit_code();
    }
    buf.erase(0, start);
  }
  return kRunnerExitOk;
}

}  // namespace kgate::native

#include "native/host_backend.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/file_io.h"
#include "core/log.h"
#include "native/compile_cache.h"
#include "native/stopping_rule.h"

namespace kgate::native {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "";
}

int64_t sysconf_or(int name, int64_t fallback) {
  long v = ::sysconf(name);
  return v > 0 ? static_cast<int64_t>(v) : fallback;
}

// Pins the calling thread for the lifetime of the object (restores the old mask after).
class CpuPin {
 public:
  explicit CpuPin(int cpu) {
    if (cpu < 0) return;
    if (sched_getaffinity(0, sizeof old_, &old_) != 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0) {
      pinned_ = true;
    } else {
      log::warn("time: cannot pin to cpu " + std::to_string(cpu) + ": " + std::strerror(errno));
    }
  }
  ~CpuPin() {
    if (pinned_) sched_setaffinity(0, sizeof old_, &old_);
  }
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;

 private:
  cpu_set_t old_{};
  bool pinned_ = false;
};

}  // namespace

// ---- SharedObjectModule ---------------------------------------------------------------

std::shared_ptr<SharedObjectModule> SharedObjectModule::load(const std::string& path,
                                                             const std::string& symbol,
                                                             std::string* err) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    *err = std::string("cannot load ") + path + ": " + (e ? e : "unknown dlopen error");
    return nullptr;
  }
  ::dlerror();
  void* fn = ::dlsym(h, symbol.c_str());
  if (!fn) {
    *err = "the compiled object does not export `" + symbol +
           "`: declare it extern \"C\" (see kgate/kernel.h)";
    ::dlclose(h);
    return nullptr;
  }
  return std::shared_ptr<SharedObjectModule>(new SharedObjectModule(h, fn));
}

SharedObjectModule::~SharedObjectModule() {
  if (handle_) ::dlclose(handle_);
}

// ---- device info ----------------------------------------------------------------------

double measure_host_copy_gbps(std::size_t bytes, int reps) {
  std::vector<unsigned char> src(bytes), dst(bytes);
  std::memset(src.data(), 1, bytes);  // fault the pages in before timing
  std::memset(dst.data(), 2, bytes);
  double best_s = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    double s = seconds_since(t0);
    if (r == 0 || s < best_s) best_s = s;
  }
  // Keep the copy observable so it cannot be elided.
  if (dst[bytes / 2] != 1) return 0;
  return best_s > 0 ? 2.0 * static_cast<double>(bytes) / best_s / 1e9 : 0;
}

protocol::DeviceInfo HostBackend::device_info() {
  protocol::DeviceInfo d;
  d.name = cpuinfo_field("model name");
  if (d.name.empty()) d.name = "host CPU";
  d.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The host "L2" is the per-core L2: what flush_l2 evicts between samples.
  d.l2_bytes = sysconf_or(_SC_LEVEL2_CACHE_SIZE, 0);
  d.memory_bytes = sysconf_or(_SC_PHYS_PAGES, 0) * sysconf_or(_SC_PAGESIZE, 4096);
  std::string mhz = cpuinfo_field("cpu MHz");
  d.clock_mhz = mhz.empty() ? 0 : static_cast<int>(std::lround(std::atof(mhz.c_str())));
  d.copy_bandwidth_gbps = measure_host_copy_gbps(std::size_t{256} << 20, 4);
  return d;
}

// ---- compile --------------------------------------------------------------------------

protocol::CompileResult HostBackend::compile(const std::string& source_path,
                                             const std::map<std::string, std::string>& defines,
                                             const std::string& cache_dir,
                                             std::shared_ptr<Module>* module) {
  module->reset();
  protocol::CompileResult res;
  const core::ReadResult src = core::read_file(source_path);
  if (!src.ok()) {
    res.log = "cannot read candidate source " + source_path + ": " + src.error;
    return res;
  }

  HostCompileRequest req;
  // The #line keeps diagnostics pointing at the user's file, not the cached copy.
  std::string display = fs::absolute(source_path).lexically_normal().string();
  req.text = "#line 1 \"" + display + "\"\n" + src.bytes;
  req.source_dir = fs::path(display).parent_path().string();
  req.defines = defines;
  req.cache_dir = cache_dir;
  HostCompileOutput out = compiler_.compile(req);
  res.cache_hit = out.cache_hit;
  res.compile_ms = out.compile_ms;
  res.log = out.log;
  if (!out.ok) return res;

  std::string err;
  seal_before_loading();
  auto m = SharedObjectModule::load(out.so_path, "kgate_run", &err);
  if (!m) {
    res.log += (res.log.empty() || res.log.back() == '\n' ? "" : "\n") + err + "\n";
    return res;
  }
  res.compiled = true;
  res.library = fs::absolute(out.so_path).string();
  *module = std::move(m);
  return res;
}

// ---- memory and calls -----------------------------------------------------------------

void* HostBackend::alloc(std::size_t bytes) {
  // Page-aligned and rounded up, so a kernel's vector loads never straddle into
  // unrelated allocations and zero-size tensors still get a distinct pointer.
  std::size_t n = (std::max<std::size_t>(bytes, 1) + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(4096, n);
  if (!p) throw std::bad_alloc();
  return p;
}
void HostBackend::release(void* p) { std::free(p); }
void HostBackend::zero(void* dst, std::size_t bytes) { std::memset(dst, 0, bytes); }
void HostBackend::fill(void* dst, const std::vector<unsigned char>& pattern, std::size_t bytes) {
  check_fill_pattern(pattern);
  const std::size_t whole = bytes / pattern.size() * pattern.size();
  if (whole == 0) return;
  auto* d = static_cast<unsigned char*>(dst);
  std::memcpy(d, pattern.data(), pattern.size());
  // Doubling copies: log2(bytes) memcpy calls whatever the pattern size.
  for (std::size_t filled = pattern.size(); filled < whole;) {
    const std::size_t n = std::min(filled, whole - filled);
    std::memcpy(d + filled, d, n);
    filled += n;
  }
}
void HostBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}
bool HostBackend::equal(const void* a, const void* b, std::size_t bytes) {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}
void HostBackend::to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void HostBackend::to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

int HostBackend::run(const Module& m, const std::vector<kgate_tensor>& inputs,
                     std::vector<kgate_tensor>& outputs) {
  return m.entry()(inputs.data(), static_cast<int32_t>(inputs.size()), outputs.data(),
                   static_cast<int32_t>(outputs.size()), nullptr);
}

// ---- timing ---------------------------------------------------------------------------

protocol::TimeResult HostBackend::time(std::vector<TimedCall>& calls,
                                       const protocol::TimeParams& p, RoundAudit* audit) {
  protocol::TimeResult res;
  res.timer = "steady_clock";
  res.batch = 1;
  auto t_all = Clock::now();
  if (calls.empty()) return res;
  CpuPin pin(p.pin_cpu);

  // Flushing on the host evicts the core's L2 (4x its size is written between samples);
  // the shared L3 may still hold data, which is what a hot CPU kernel sees in practice.
  std::vector<unsigned char> flush;
  if (p.flush_l2) {
    int64_t l2 = sysconf_or(_SC_LEVEL2_CACHE_SIZE, 1 << 20);
    flush.assign(static_cast<std::size_t>(4 * l2), 0);
  }
  unsigned char flush_byte = 0;

  std::size_t n_sets = SIZE_MAX;
  for (const auto& c : calls) n_sets = std::min({n_sets, c.input_sets.size(), c.output_sets.size()});
  if (n_sets == 0 || n_sets == SIZE_MAX) throw std::invalid_argument("time: no input sets");

  int nonzero_rc = 0;
  std::string nonzero_slot;
  auto call_once = [&](TimedCall& c, std::size_t set) -> double {
    if (!flush.empty()) std::memset(flush.data(), ++flush_byte, flush.size());
    auto& in = c.input_sets[set];
    auto& out = c.output_sets[set];
    kgate_run_fn fn = c.module->entry();
    auto t0 = Clock::now();
    int rc = fn(in.data(), static_cast<int32_t>(in.size()), out.data(),
                static_cast<int32_t>(out.size()), nullptr);
    auto t1 = Clock::now();
    if (rc != 0 && nonzero_rc == 0) {
      nonzero_rc = rc;
      nonzero_slot = c.slot;
    }
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  };

  // Warm-up by time (and at least one call per slot and set): page faults, lazy
  // binding, frequency ramp.
  auto t_warm = Clock::now();
  std::size_t w = 0;
  do {
    for (auto& c : calls) call_once(c, w % n_sets);
    ++w;
  } while (seconds_since(t_warm) < p.warmup_s || w < n_sets);

  std::vector<std::vector<double>> samples(calls.size());
  StoppingRule rule(p);
  auto t_timed = Clock::now();
  StopReason why = StopReason::kContinue;
  for (std::size_t round = 0; why == StopReason::kContinue; ++round) {
    std::size_t set = round % n_sets;
    const auto t_round = Clock::now();
    // ABAB... with the order reversed every other round, so neither slot always runs
    // right after the other's cache footprint.
    for (std::size_t k = 0; k < calls.size(); ++k) {
      std::size_t i = (round % 2 == 0) ? k : calls.size() - 1 - k;
      samples[i].push_back(call_once(calls[i], set));
    }
    // Between rounds, outside every timed window.
    if (audit != nullptr && !audit->after_round(set, seconds_since(t_round) * 1e6)) break;
    why = rule.after_round(round, StoppingRule::Samples(samples.begin(), samples.end()), seconds_since(t_timed));
  }
  if (audit != nullptr) audit->finish(n_sets);
  if (nonzero_rc != 0) {
    res.timer_note = nonzero_slot + ": kgate_run returned " + std::to_string(nonzero_rc) + " while timed";
    log::warn("time: " + res.timer_note);
  }
  for (std::size_t i = 0; i < calls.size(); ++i) res.samples_us[calls[i].slot] = std::move(samples[i]);
  res.stop_reason = stop_reason_name(why);
  res.return_code = nonzero_rc;
  res.failed_slot = nonzero_slot;
  res.elapsed_s = seconds_since(t_all);
  return res;
}

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace kgate::native

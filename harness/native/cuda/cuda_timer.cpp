#include "native/cuda/cuda_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "native/checker.h"
#include "native/cuda/cuda_check.h"
#include "native/cuda/nvml_clock.h"
#include "native/stopping_rule.h"
#include "stats/descriptive.h"
#include "stats/throttle.h"

namespace kgate::native::cuda {

namespace {

// A slot's kgate_run returned non-zero while timed: the answer says which (return_code,
// failed_slot), as the host timer's does, and the performance gate fails that slot.
struct SlotFailed : std::runtime_error {
  SlotFailed(std::string s, int code)
      : std::runtime_error("slot '" + s + "': kgate_run returned " + std::to_string(code) +
                           " while being timed"),
        slot(std::move(s)),
        rc(code) {}
  std::string slot;
  int rc;
};
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

class EventPair {
 public:
  EventPair() {
    KGATE_CU_CHECK(cuEventCreate(&start_, CU_EVENT_DEFAULT));
    CUresult r = cuEventCreate(&end_, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) {
      KGATE_CU_CHECK_NOTHROW(cuEventDestroy(start_));
      KGATE_CU_CHECK(r);
    }
  }
  ~EventPair() {
    KGATE_CU_CHECK_NOTHROW(cuEventDestroy(start_));
    KGATE_CU_CHECK_NOTHROW(cuEventDestroy(end_));
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  CUevent start() const { return start_; }
  CUevent end() const { return end_; }

 private:
  CUevent start_ = nullptr;
  CUevent end_ = nullptr;
};

struct Slot {
  TimedCall* call = nullptr;
  std::vector<double> samples_us;
  std::vector<int> clocks_mhz;  // per sample, 0 = unknown; throttled ones are dropped after
  // Side-work evidence per way of calling: [0] plain calls, [1] graph replays. A graph
  // replays only what reached our stream, so the plain calls carry the evidence there.
  int side_hits[2] = {0, 0};
  int side_checked[2] = {0, 0};
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;

  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  Slot(Slot&& o) noexcept { *this = std::move(o); }
  Slot& operator=(Slot&& o) noexcept {
    std::swap(call, o.call);
    std::swap(samples_us, o.samples_us);
    std::swap(clocks_mhz, o.clocks_mhz);
    std::swap(side_hits, o.side_hits);
    std::swap(side_checked, o.side_checked);
    std::swap(graph, o.graph);
    std::swap(exec, o.exec);
    return *this;
  }
  ~Slot() { drop_graph(); }
  void drop_graph() {
    if (exec != nullptr) KGATE_CU_CHECK_NOTHROW(cuGraphExecDestroy(exec));
    if (graph != nullptr) KGATE_CU_CHECK_NOTHROW(cuGraphDestroy(graph));
    exec = nullptr;
    graph = nullptr;
  }
};

int call_once(const Slot& s, std::size_t set, CUstream stream) {
  auto& ins = s.call->input_sets[set % s.call->input_sets.size()];
  auto& outs = s.call->output_sets[set % s.call->output_sets.size()];
  return s.call->module->entry()(ins.data(), static_cast<int32_t>(ins.size()), outs.data(),
                                 static_cast<int32_t>(outs.size()), stream);
}

// Waits for the whole context. The candidate's rc is checked first by callers; a sticky
// error here is the candidate's fault and becomes DeviceFault.
void sync_context() { KGATE_CU_CHECK(cuCtxSynchronize()); }

class Sampler {
 public:
  Sampler(const TimerDevice& dev, const protocol::TimeParams& params)
      : dev_(dev), params_(params) {}

  void prepare_flush() {
    if (!params_.flush_l2) return;
    // Writing twice the L2 evicts whatever the previous sample left there.
    std::size_t want = static_cast<std::size_t>(std::max<int64_t>(dev_.l2_bytes, 1 << 20)) * 2;
    want = (want + 255) / 256 * 256;
    if (*dev_.flush_bytes < want) {
      if (*dev_.flush_buffer != 0) KGATE_CU_CHECK(cuMemFree(*dev_.flush_buffer));
      *dev_.flush_buffer = 0;
      *dev_.flush_bytes = 0;
      KGATE_CU_CHECK(cuMemAlloc(dev_.flush_buffer, want));
      *dev_.flush_bytes = want;
    }
  }

  // Idle cost of cuCtxSynchronize on this host: the baseline for side-stream detection.
  void measure_sync_baseline() {
    sync_context();
    std::vector<double> t;
    for (int i = 0; i < 21; ++i) {
      auto t0 = Clock::now();
      sync_context();
      t.push_back(us_since(t0));
    }
    sync_baseline_us_ = stats::median(t);
    // Work the candidate leaves running elsewhere keeps cuCtxSynchronize waiting well past
    // its idle cost; host jitter alone stays under this margin nearly always, and a
    // verdict needs a quarter of the samples to agree (see flagged()).
    side_threshold_us_ = sync_baseline_us_ + std::max(20.0, 4 * sync_baseline_us_);
  }

  // One timed sample of `s`: flush, start event, the call (or graph replay), end event.
  // Returns µs per call.
  double sample(Slot& s, std::size_t set, bool graph, int batch) {
    CUstream stream = dev_.stream;
    if (params_.flush_l2) {
      flush_value_ ^= 0x5a5a5a5au;
      KGATE_CU_CHECK(cuMemsetD32Async(*dev_.flush_buffer, flush_value_, *dev_.flush_bytes / 4,
                                      stream));
    }
    KGATE_CU_CHECK(cuEventRecord(events_.start(), stream));
    if (graph) {
      KGATE_CU_CHECK(cuGraphLaunch(s.exec, stream));
    } else {
      int rc = call_once(s, set, stream);
      if (rc != 0) {
        sync_context();
        throw SlotFailed(s.call->slot, rc);
      }
    }
    KGATE_CU_CHECK(cuEventRecord(events_.end(), stream));
    KGATE_CU_CHECK(cuEventSynchronize(events_.end()));
    float ms = 0;
    KGATE_CU_CHECK(cuEventElapsedTime(&ms, events_.start(), events_.end()));
    check_side_work(s, graph ? 1 : 0);
    return static_cast<double>(ms) * 1000.0 / batch;
  }

  // After our end event completed, is anything of this context still running? Work on
  // the legacy stream shows in cuStreamQuery; work on a stream the candidate made shows
  // as cuCtxSynchronize taking longer than idle. Either way the sample missed work.
  void check_side_work(Slot& s, int way) {
    CUresult q = cuStreamQuery(CU_STREAM_LEGACY);
    if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) KGATE_CU_CHECK(q);
    bool legacy_busy = q == CUDA_ERROR_NOT_READY;
    auto t0 = Clock::now();
    sync_context();
    double waited_us = us_since(t0);
    ++s.side_checked[way];
    if (legacy_busy || waited_us > side_threshold_us_) ++s.side_hits[way];
  }

  static bool flagged(const Slot& s) {
    for (int way = 0; way < 2; ++way)
      if (s.side_hits[way] >= 3 && s.side_hits[way] * 4 >= s.side_checked[way]) return true;
    return false;
  }

  double sync_baseline_us() const { return sync_baseline_us_; }

 private:
  const TimerDevice& dev_;
  const protocol::TimeParams& params_;
  EventPair events_;
  unsigned flush_value_ = 0;
  double sync_baseline_us_ = 0;
  double side_threshold_us_ = 50;
};

// Captures `batch` calls of `s` (rotating input sets) into a graph on the stream.
// Returns "" on success, else why capture did not work.
std::string capture(Slot& s, int batch, CUstream stream) {
  KGATE_CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  int bad_rc = 0;
  for (int i = 0; i < batch && bad_rc == 0; ++i)
    bad_rc = call_once(s, static_cast<std::size_t>(i), stream);
  CUgraph g = nullptr;
  CUresult end = cuStreamEndCapture(stream, &g);
  if (is_sticky(end)) KGATE_CU_CHECK(end);
  auto fail = [&](std::string why) {
    if (g != nullptr) KGATE_CU_CHECK_NOTHROW(cuGraphDestroy(g));
    return why;
  };
  if (bad_rc != 0)
    return fail("kgate_run returned " + std::to_string(bad_rc) + " under stream capture");
  if (end != CUDA_SUCCESS || g == nullptr) return fail("stream capture failed: " + describe(end));
  std::size_t nodes = 0;
  KGATE_CU_CHECK(cuGraphGetNodes(g, nullptr, &nodes));
  if (nodes == 0) return fail("the capture recorded no work on the given stream");
  CUgraphExec exec = nullptr;
  CUresult inst = cuGraphInstantiate(&exec, g, 0);
  if (is_sticky(inst)) KGATE_CU_CHECK(inst);
  if (inst != CUDA_SUCCESS) return fail("graph instantiation failed: " + describe(inst));
  s.graph = g;
  s.exec = exec;
  return "";
}

// The audit of the graph replays: every slot's outputs of the sets its graph covers
// poisoned, each graph replayed once, then those sets audited. The sampling rounds' audit
// sees a replay's outputs only where the replay wrote them; a candidate whose captured work
// differs from its plain calls (a no-op while the stream is captured, work launched on a
// stream of its own, which capture does not record) leaves an earlier plain call's correct
// outputs in place there, and passed every gate at 3-4x. A failure stays in the audit.
void audit_graph_replays(std::vector<Slot>& slots, std::size_t covered, CUstream stream, RoundAudit& audit) {
  for (std::size_t set = 0; set < covered; ++set) audit.poison(set);
  for (Slot& s : slots) KGATE_CU_CHECK(cuGraphLaunch(s.exec, stream));
  KGATE_CU_CHECK(cuStreamSynchronize(stream));
  sync_context();
  for (std::size_t set = 0; set < covered; ++set)
    if (!audit.audit_now(set, "a CUDA-graph replay, outputs poisoned first (input set " + std::to_string(set) + ")",
                         "the work the slot's graph captured differs from its plain calls: work launched on a "
                         "stream the capture does not record (a side stream), or skipped while captured"))
      return;
}

void check_calls(const std::vector<TimedCall>& calls, const protocol::TimeParams& p) {
  if (calls.empty()) throw InfraError("time: no calls to time");
  for (const TimedCall& c : calls) {
    if (c.module == nullptr) throw InfraError("time: slot '" + c.slot + "' has no module");
    if (c.input_sets.empty() || c.output_sets.empty())
      throw InfraError("time: slot '" + c.slot + "' has no input or output sets");
  }
  if (p.max_samples < 1 || p.max_time_s <= 0)
    throw InfraError("time: max_samples and max_time_s must be positive");
}

}  // namespace

protocol::TimeResult CudaTimer::time(std::vector<TimedCall>& calls,
                                     const protocol::TimeParams& params, RoundAudit* audit) {
  auto t_begin = Clock::now();
  check_calls(calls, params);
  protocol::TimeResult result;
  std::vector<Slot> slots(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) slots[i].call = &calls[i];
  std::size_t n_sets = 1;
  for (const TimedCall& c : calls) n_sets = std::max(n_sets, c.input_sets.size());

  Sampler sampler(dev_, params);
  sampler.prepare_flush();
  sampler.measure_sync_baseline();

  bool use_graph = false;
  int batch = 1;
  int reference_mhz = dev_.clock != nullptr ? dev_.clock->reference_sm_clock_mhz() : 0;
  try {
    // Warm-up by time (module load, lazy initialisation, clocks ramping up), ABAB.
    {
      auto t0 = Clock::now();
      std::size_t round = 0;
      do {
        for (Slot& s : slots) sampler.sample(s, round, false, 1);
        ++round;
      } while (us_since(t0) < params.warmup_s * 1e6 && round < 100000);
    }

    // Probe: is this a µs-scale call?
    double probe_min_us = std::numeric_limits<double>::infinity();
    for (Slot& s : slots) {
      std::vector<double> t;
      for (std::size_t k = 0; k < 5; ++k) t.push_back(sampler.sample(s, k, false, 1));
      probe_min_us = std::min(probe_min_us, stats::median(t));
    }
    if (params.cuda_graph && probe_min_us < kGraphBelowUs) {
      batch = static_cast<int>(std::ceil(kGraphBatchTargetUs / std::max(probe_min_us, 0.5)));
      batch = std::clamp(batch, 2, 1000);
      std::string why;
      for (Slot& s : slots) {
        why = capture(s, batch, dev_.stream);
        if (!why.empty()) {
          why = "slot '" + s.call->slot + "': " + why;
          break;
        }
      }
      if (why.empty()) {
        use_graph = true;
        // One replay each uploads the graphs before the first sample.
        for (Slot& s : slots) {
          KGATE_CU_CHECK(cuGraphLaunch(s.exec, dev_.stream));
          KGATE_CU_CHECK(cuStreamSynchronize(dev_.stream));
        }
      } else {
        for (Slot& s : slots) s.drop_graph();
        sync_context();
        // A failed capture can leave an error in the candidate's runtime state that its next
        // cudaGetLastError() returns; one untimed call per slot absorbs it.
        for (Slot& s : slots) (void)call_once(s, 0, dev_.stream);
        sync_context();
        batch = 1;
        result.timer_note = "CUDA graph capture not usable (" + why + "); timed with events";
      }
    }

    // Sampling: round r visits the slots in rotated order (AB, BA, ...) on input set r,
    // until the stopping rule the host timer also follows says stop.
    const StoppingRule rule(params);
    StopReason why = StopReason::kContinue;
    auto t_sampling = Clock::now();
    for (std::size_t round = 0;; ++round) {
      const auto t_round = Clock::now();
      for (std::size_t k = 0; k < slots.size(); ++k) {
        Slot& s = slots[(round + k) % slots.size()];
        double us = sampler.sample(s, round % n_sets, use_graph, batch);
        s.samples_us.push_back(us);
        s.clocks_mhz.push_back(dev_.clock != nullptr ? dev_.clock->sm_clock_mhz() : 0);
      }
      // Between rounds, never inside a timed window (sample() has synchronized the stream;
      // with graphs the outputs are the batch's last call's).
      if (audit != nullptr && !audit->after_round(round % n_sets, us_since(t_round))) break;
      StoppingRule::Samples views;
      for (const Slot& s : slots) views.emplace_back(s.samples_us);
      why = rule.after_round(round, views, us_since(t_sampling) * 1e-6);
      if (why != StopReason::kContinue) break;
    }
    result.stop_reason = stop_reason_name(why);

    if (audit != nullptr && use_graph && audit->failure().empty())
      audit_graph_replays(slots, std::min<std::size_t>(static_cast<std::size_t>(batch), n_sets), dev_.stream, *audit);
    if (audit != nullptr) audit->finish(n_sets);
  } catch (const SlotFailed& f) {
    // What was sampled before stays in the answer; no verdict is drawn from it.
    result.return_code = f.rc;
    result.failed_slot = f.slot;
    result.stop_reason = "error";
    result.timer_note = f.slot + ": kgate_run returned " + std::to_string(f.rc) + " while timed";
    log::warn("time: " + result.timer_note);
    for (Slot& s : slots) s.drop_graph();
  }

  // Throttled samples out, judged against the default clock (or the run's own steady
  // clock when the kernel holds the clock down: stats/throttle.h).
  std::vector<int> all_clocks;
  for (const Slot& s : slots) all_clocks.insert(all_clocks.end(), s.clocks_mhz.begin(), s.clocks_mhz.end());
  const stats::ThrottleReference ref = stats::throttle_reference(all_clocks, reference_mhz, kThrottleFraction);
  if (ref.steady_low)
    result.timer_note += (result.timer_note.empty() ? "" : "; ") + ref.note;
  for (Slot& s : slots) {
    std::vector<double>& kept = result.samples_us[s.call->slot];
    for (std::size_t i = 0; i < s.samples_us.size(); ++i) {
      const int mhz = s.clocks_mhz[i];
      if (ref.mhz > 0 && mhz > 0 && mhz < kThrottleFraction * ref.mhz) {
        ++result.dropped_throttled;
        continue;
      }
      kept.push_back(s.samples_us[i]);
      if (mhz > 0) result.clock_mhz.push_back(mhz);
    }
    if (Sampler::flagged(s)) result.side_stream_work = true;
  }
  result.timer = use_graph ? "cuda_graph" : "cuda_event";
  result.batch = batch;
  result.elapsed_s = us_since(t_begin) * 1e-6;
  return result;
}

}  // namespace kgate::native::cuda

#pragma once
// The audit of the timed calls in kgate-native (the host and CUDA timers): the slots'
// outputs compared between sampling rounds, never inside a timed window. The correctness
// gate sees a candidate's first calls only; a candidate that computes on every other call,
// or honestly while it is checked and then less, is caught here (the Python worker's
// counterpart is kgate_worker/audit.py; docs/gates.md, "The audit of the timed calls").
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/rng.h"
#include "protocol/messages.h"

namespace kgate::native {

class RoundAudit {
 public:
  // Compares every slot's outputs of input set `set` with the baseline's: "" when they
  // agree, else what differs (slot, output, element).
  //
  // Timed outputs persist between calls, so a call that skips its work leaves an earlier
  // call's correct result: the sampling rounds catch wrong values, the rounds on fresh
  // contents (the runner's, outputs poisoned first) catch skipped work, and the roofline
  // floor a candidate that skips only when its output already looks written. Poisoning
  // the sampling rounds' outputs instead would make such a candidate compute exactly on
  // the audited rounds.
  using Compare = std::function<std::string(std::size_t set)>;
  // Fills every slot's outputs of input set `set` with the poison pattern of their dtype
  // (the runner's poison_outputs), for a round whose skipped work must show.
  using Poison = std::function<void(std::size_t set)>;

  // Rounds always audited at the start, the least audited in all (more at the end when
  // sampling stopped early), and the share of the sampling time the audit may take.
  static constexpr int kFirstRounds = 4;
  static constexpr int kMinAudited = 8;
  static constexpr double kTimeShare = 0.25;

  RoundAudit(Compare compare, Poison poison, uint64_t seed);

  // After a sampling round on `set` that took `round_us` (the slots' calls, flushes
  // included), outside its timed windows: compares when the round is drawn (always the
  // first kFirstRounds, then with the probability that keeps the audit near kTimeShare
  // of the sampling time; at least 1/32). False once a comparison failed: stop sampling.
  bool after_round(std::size_t set, double round_us);
  // After sampling: audits the sets' last outputs until kMinAudited rounds were audited
  // (each set at most once). False on a failure.
  bool finish(std::size_t n_sets);
  // One comparison outside the schedule (a round on fresh contents). False on a failure;
  // `meaning`, when given, is appended to the failure (what such a difference tells).
  bool audit_now(std::size_t set, const std::string& what, const std::string& meaning = "");
  // Poisons every slot's outputs of `set` (the Poison callback).
  void poison(std::size_t set) const { poison_(set); }
  // A failure found around the comparisons (a slot failing in an untimed audit round);
  // the first failure stands.
  void fail(const std::string& what);

  int audited() const { return audited_; }
  const std::string& failure() const { return failure_; }
  // audited and audit_failure into the timing's result.
  void fill(protocol::TimeResult& r) const;

 private:
  bool compare_set(std::size_t set, const std::string& what);

  Compare compare_;
  Poison poison_;
  core::Rng rng_;
  int rounds_ = 0;
  int audited_ = 0;
  double audit_us_ = 0;  // time spent comparing
  double round_us_ = 0;  // time spent in the rounds seen
  std::string failure_;
};

// A seed the candidate cannot predict (the rounds the audit draws).
uint64_t unpredictable_seed();

// The result-cache rule on medians (us): the baseline's and a slot's first calls on new
// contents (`*_new`) and their calls on the same contents again after the same steps, now
// seen (`*_repeated`), timed the same way (the runner's new-content rounds).
// A slot is a cache when its new-content median is above kCacheFactor x what it would take
// computing as it does on seen contents: its seen median scaled by the baseline's own
// new/seen ratio (cold data), or plus the baseline's own excess (a cost per call),
// whichever is more. Never when the baseline itself was above kCacheFactor slower on new
// contents (load that slowed both is not a cache).
inline constexpr double kCacheFactor = 1.5;
bool looks_like_result_cache(double base_repeated, double base_new, double slot_repeated, double slot_new);

}  // namespace kgate::native

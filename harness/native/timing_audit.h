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
  using Compare = std::function<std::string(std::size_t set)>;
  // Poisons every slot's outputs of input set `set` before an audited round, so what is
  // compared after it is that round's work (timed outputs persist between calls: a call
  // that skips its work would otherwise leave an earlier call's correct result).
  using Prepare = std::function<void(std::size_t set)>;

  // Rounds always audited at the start, the least audited in all (more at the end when
  // sampling stopped early), and the share of the sampling time the audit may take.
  static constexpr int kFirstRounds = 4;
  static constexpr int kMinAudited = 8;
  static constexpr double kTimeShare = 0.25;

  RoundAudit(Compare compare, Prepare prepare, uint64_t seed);

  // Before a sampling round on `set`, outside its timed windows: draws whether the round
  // is audited (always the first kFirstRounds, then with the probability that keeps the
  // audit near kTimeShare of the sampling time; at least 1/32) and, when it is, poisons
  // the set's outputs.
  void before_round(std::size_t set);
  // After that round, which took `round_us` (the slots' calls, flushes included):
  // compares when it was drawn. False once a comparison failed: stop sampling.
  bool after_round(std::size_t set, double round_us);
  // After sampling: audits the sets' last outputs until kMinAudited rounds were audited
  // (each set at most once). False on a failure.
  bool finish(std::size_t n_sets);
  // One comparison outside the schedule (a round on fresh contents). False on a failure.
  bool audit_now(std::size_t set, const std::string& what);

  int audited() const { return audited_; }
  const std::string& failure() const { return failure_; }
  // audited and audit_failure into the timing's result.
  void fill(protocol::TimeResult& r) const;

 private:
  bool compare_set(std::size_t set, const std::string& what);

  Compare compare_;
  Prepare prepare_;
  core::Rng rng_;
  bool due_ = false;     // the current round is audited
  double prepare_us_ = 0;  // time spent poisoning
  int rounds_ = 0;
  int audited_ = 0;
  double audit_us_ = 0;  // time spent comparing
  double round_us_ = 0;  // time spent in the rounds seen
  std::string failure_;
};

// A seed the candidate cannot predict (the rounds the audit draws).
uint64_t unpredictable_seed();

}  // namespace kgate::native

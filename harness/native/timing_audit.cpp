#include "native/timing_audit.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <utility>

namespace kgate::native {

RoundAudit::RoundAudit(Compare compare, Poison poison, uint64_t seed)
    : compare_(std::move(compare)), poison_(std::move(poison)), rng_(seed) {}

bool RoundAudit::compare_set(std::size_t set, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string diff = compare_(set);
  audit_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  ++audited_;
  if (!diff.empty()) failure_ = what + ": " + diff;
  return failure_.empty();
}

bool RoundAudit::after_round(std::size_t set, double round_us) {
  if (!failure_.empty()) return false;
  ++rounds_;
  round_us_ += std::max(0.0, round_us);
  bool due = rounds_ <= kFirstRounds;
  if (!due) {
    // The share of the sampling time one more comparison would bring the audit to.
    const double per_audit = audit_us_ / std::max(1, audited_);
    const double per_round = round_us_ / rounds_;
    const double p = per_audit > 0 ? kTimeShare * per_round / per_audit : 1.0;
    due = rng_.uniform() < std::clamp(p, 1.0 / 32, 1.0);
  }
  if (!due) return true;
  return compare_set(set, "sampling round " + std::to_string(rounds_) + " (input set " +
                              std::to_string(set) + ")");
}

bool RoundAudit::finish(std::size_t n_sets) {
  for (std::size_t s = 0; s < n_sets && audited_ < kMinAudited && failure_.empty(); ++s)
    compare_set(s, "the last timed call on input set " + std::to_string(s));
  return failure_.empty();
}

bool RoundAudit::audit_now(std::size_t set, const std::string& what, const std::string& meaning) {
  if (!failure_.empty()) return false;
  if (compare_set(set, what)) return true;
  if (!meaning.empty()) failure_ += "; " + meaning;
  return false;
}

void RoundAudit::fail(const std::string& what) {
  if (failure_.empty()) failure_ = what;
}

void RoundAudit::fill(protocol::TimeResult& r) const {
  r.audited = audited_;
  r.audit_failure = failure_;
}

uint64_t unpredictable_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

bool looks_like_result_cache(double base_repeated, double base_new, double slot_repeated, double slot_new) {
  if (base_repeated <= 0 || base_new <= 0 || slot_repeated <= 0 || base_new > kCacheFactor * base_repeated) return false;
  const double scaled = slot_repeated * std::max(1.0, base_new / base_repeated);
  const double plus = slot_repeated + std::max(0.0, base_new - base_repeated);
  return slot_new > kCacheFactor * std::max(scaled, plus);
}

}  // namespace kgate::native

#pragma once
// The search's view of the gate cascade: what gates::Evaluator does, behind an interface
// so the loop can be driven by a fake in tests. cmd_run adapts the real Evaluator.
#include <memory>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/verdict.h"
#include "protocol/messages.h"
#include "search/tune_space.h"

namespace kgate::search {

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // Every gate on `candidate` (with -D `defines`), timed against `baseline`.
  virtual gates::CandidateVerdict evaluate(const std::string& candidate, const Point& defines,
                                           const std::string& baseline) = 0;
  // Fresh worker, interleaved: the number that is reported.
  virtual gates::Timing remeasure(const std::string& candidate, const Point& defines,
                                  const std::string& baseline) = 0;
  // A native problem's float64 oracle anchored at `starter` before the first evaluate (a
  // resumed search from a kept best); a no-op where the anchor is not the starter's (fakes,
  // KernelBench).
  virtual void anchor_oracle(const std::string& /*starter*/) {}
  // Compiled mode: the pair partners an evaluation of `candidate` lets change with it
  // (gates::Evaluator::set_partners); empty: none.
  virtual void set_partners(const std::string& /*candidate*/, std::vector<gates::PartnerFile> /*partners*/) {}
  virtual std::string device_name() const = 0;
  // The worker's device and software (torch, triton, CUDA, driver) for the records;
  // empty when unknown (fakes).
  virtual protocol::HelloResult runtime() const { return {}; }
  // KernelBench problems: the candidate re-measured against the reference model, by mode
  // ("eager", "compile"); empty for native problems.
  // Compiled-mode KernelBench problems: torch.compile's model taken apart (Triton kernels
  // written as files into `dir`, extern calls, per-kernel times); null otherwise.
  virtual nlohmann::json inventory(const std::string& /*dir*/) { return nullptr; }
  virtual std::map<std::string, gates::Timing> reference_timings(const std::string& /*candidate*/,
                                                                 const Point& /*defines*/) {
    return {};
  }
};

}  // namespace kgate::search

#pragma once
// Shared by the gate-matrix tests of both backends (tests/unit/gates_evaluator_test.cpp on
// the host, tests/gpu/cuda_gates_test.cpp on a GPU): find a gate in a verdict, its reason,
// and the one expectation they all make — failed at this gate, for this reason.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "verdict/verdict.h"

namespace kgate::test {

inline const gates::GateResult& gate(const gates::CandidateVerdict& v, gates::Gate g) {
  for (const auto& r : v.gates)
    if (r.gate == g) return r;
  throw std::runtime_error("no such gate in verdict");
}

inline std::string reason(const gates::CandidateVerdict& v) {
  return v.failed_gate ? gate(v, *v.failed_gate).reason : std::string();
}

inline void expect_fails(const gates::CandidateVerdict& v, gates::Gate g, const std::string& needle) {
  EXPECT_FALSE(v.passed);
  ASSERT_TRUE(v.failed_gate.has_value()) << "passed unexpectedly";
  EXPECT_EQ(*v.failed_gate, g) << reason(v);
  EXPECT_NE(reason(v).find(needle), std::string::npos) << "reason: " << reason(v);
}

}  // namespace kgate::test

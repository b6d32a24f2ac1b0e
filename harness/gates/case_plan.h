#pragma once
// Which correctness cases a candidate must pass (gate 2), derived deterministically from
// the run seed, so `kgate bench --seed N` replays exactly the cases a run used.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/types.h"
#include "ops/op.h"
#include "protocol/messages.h"

namespace kgate::gates {

struct CorrectnessCase {
  protocol::CheckCase check;                  // what the worker gets (case_id, tolerances)
  bool adversarial = false;                   // large / tiny / mixed magnitudes
  std::map<std::string, std::vector<int64_t>> output_shapes;  // for "N of M", [i,j] indices
};

// `n` seeds from the root, via splitmix64; distinct, 9 decimal digits at most so case ids
// stay readable.
std::vector<uint64_t> derive_seeds(uint64_t root, int n);

// "seed=123456/R=33,C=4097/f16/signed": dims in the op's order.
std::string make_case_id(uint64_t seed, const ops::Op& op, const ops::Dims& dims, DType dtype,
                         ops::Distribution dist);

// Extra shapes derived from the timed shape: the shape itself, every dim +1 (4096 ->
// 4097), every dim * 3/8 + 1 (4096 -> 1537), kept only when valid for the op and within
// `max_elements` (the float64 truth of a case is computed on the CPU).
std::vector<ops::Dims> derived_shapes(const ops::Op& op, const ops::Dims& bench,
                                      int64_t max_elements);

// Largest tensor-element total a derived shape may have on a backend.
int64_t derived_shape_cap(const std::string& backend);

// The tolerance of a dtype: the problem's override, else the op's default.
ops::Tolerance tolerance_for(const config::NativeProblem& p, const ops::Op& op, DType dtype);
// The tolerance of one case: the problem's override, else the op's for the dtype at these
// dims (matmul widens atol with K).
ops::Tolerance tolerance_for(const config::NativeProblem& p, const ops::Op& op, DType dtype,
                             const ops::Dims& dims);

// Cases, cheapest first:
//  1. every seed x dtype x {normal, signed} on the smallest shape (multi-seed);
//  2. every other shape (sweep + derived) x dtype x {normal, signed}, seeds in rotation;
//  3. adversarial {large, tiny, mixed} x dtype on the smallest shape, tolerance x10.
std::vector<CorrectnessCase> plan_correctness(const config::NativeProblem& p, const ops::Op& op,
                                              const std::string& backend, uint64_t root_seed,
                                              int n_seeds);

// Cases of a KernelBench problem (inputs come from its own get_inputs()): every seed x
// {problem, signed} in `dtype`, with the problem's tolerance. Case ids read
// "seed=123456/f32/problem".
std::vector<CorrectnessCase> plan_kernelbench_correctness(uint64_t root_seed, int n_seeds,
                                                          DType dtype, double atol, double rtol);

// Total elements of every input and output tensor of the op at these dims.
int64_t total_elements(const ops::Op& op, const ops::Dims& dims);

}  // namespace kgate::gates

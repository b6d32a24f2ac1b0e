#pragma once
// Internal to harness/ops: the built-in ops' singletons (registered in op_registry.cpp)
// and small helpers their references share.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"

namespace kgate::ops {

const Op& softmax_op();
const Op& rmsnorm_op();
const Op& layernorm_op();
const Op& bias_gelu_op();
const Op& reduce_sum_op();
const Op& cross_entropy_op();
const Op& rotary_embedding_op();
const Op& matmul_op();

// Throws kgate::UsageError unless `inputs` match the op's declared inputs for `dims`
// (count and shapes); references call it first so bad calls fail with a message.
void check_reference_inputs(const Op& op, const Dims& dims, const std::vector<HostTensor>& inputs);

// A float64 output tensor of the op's i-th output shape, filled from `values`.
HostTensor f64_output(const Op& op, std::size_t i, const Dims& dims, const std::vector<double>& values);

// Largest finite value of the float32 type: intermediates of a float32-accumulating
// kernel must stay below it for the Large distribution to be fair.
inline constexpr double kF32Max = FLT_MAX;

// The row normalisations (layernorm, rmsnorm) share their input scale and tolerances. f16:
// |y| <= |x / sigma| * |w| (+ |b|) must fit 65504 with w drawn Large too, so S = 1000 (an f16
// sum of squares still overflows). Wider types: a float32 sum of squares must not overflow.
class RowNormOp : public Op {
 public:
  double large_scale(const Dims& d, DType dt) const override {
    if (dt == DType::kF16) return 1000.0;
    return std::min(1e30, std::sqrt(kF32Max / (16.0 * static_cast<double>(d.at("C")))));
  }
  Tolerance default_tolerance(DType dt) const override {
    if (dt == DType::kBF16) return {2e-2, 2e-2};
    if (dt == DType::kF64) return {1e-11, 1e-11};
    return Op::default_tolerance(dt);
  }
};

}  // namespace kgate::ops

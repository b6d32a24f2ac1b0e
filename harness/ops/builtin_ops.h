#pragma once
// Internal to harness/ops: the built-in ops' singletons (registered in op_registry.cpp)
// and small helpers their references share.
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

}  // namespace kgate::ops

// The built-in op table: find_op / op_names and the helpers builtin_ops.h declares.
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ops/builtin_ops.h"

namespace kgate::ops {
namespace {

const std::vector<const Op*>& all_ops() {
  static const std::vector<const Op*> ops = {
      &softmax_op(),      &rmsnorm_op(),        &layernorm_op(),         &bias_gelu_op(),
      &reduce_sum_op(),   &cross_entropy_op(),  &rotary_embedding_op(),  &matmul_op(),
  };
  return ops;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

const Op* find_op(std::string_view name) {
  for (const Op* op : all_ops()) {
    if (op->name() == name) return op;
  }
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const Op* op : all_ops()) names.emplace_back(op->name());
  std::sort(names.begin(), names.end());
  return names;
}

void check_reference_inputs(const Op& op, const Dims& dims, const std::vector<HostTensor>& inputs) {
  const std::string why = op.check_dims(dims);
  if (!why.empty()) throw UsageError(std::string(op.name()) + ": " + why);
  const std::vector<TensorDecl> decls = op.inputs();
  if (inputs.size() != decls.size()) {
    throw UsageError(std::string(op.name()) + ": expected " + std::to_string(decls.size()) +
                     " inputs, got " + std::to_string(inputs.size()));
  }
  for (std::size_t i = 0; i < decls.size(); ++i) {
    const std::vector<int64_t> want = op.shape_of(decls[i], dims);
    if (inputs[i].shape != want) {
      throw UsageError(std::string(op.name()) + ": input " + decls[i].name + " has shape " +
                       shape_str(inputs[i].shape) + ", expected " + shape_str(want));
    }
    if (inputs[i].bytes.size() != static_cast<std::size_t>(inputs[i].numel()) * dtype_size(inputs[i].dtype)) {
      throw UsageError(std::string(op.name()) + ": input " + decls[i].name + " has a wrong byte size");
    }
  }
}

HostTensor f64_output(const Op& op, std::size_t i, const Dims& dims, const std::vector<double>& values) {
  HostTensor t = HostTensor::make(DType::kF64, op.shape_of(op.outputs().at(i), dims));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

}  // namespace kgate::ops

#pragma once
// Correctness numbers for one slot on one case, backend-generic: draw inputs, compute the
// float64 truth, run the slot `repeats` times on fresh copies with poisoned outputs, and
// measure every element against the truth. Only numbers: kgate's gates decide.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "native/backend.h"
#include "ops/op.h"
#include "protocol/messages.h"

namespace kgate::native {

class UserReference;

// A request the worker cannot serve as asked (unknown dtype, bad dims): bad_request.
class BadCase : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The drawn inputs and their truth; cached by the runner per case key.
struct CaseData {
  std::vector<ops::HostTensor> inputs;
  std::vector<ops::HostTensor> truth;
  DType dtype = DType::kF32;
  std::size_t bytes() const;
};

// "seed/dims/dtype/dist": what the inputs depend on.
std::string case_key(const protocol::CheckCase& c);

// Draws the inputs and computes the truth (the op's reference_f64, or `ref` when given).
// Throws BadCase for an unknown dtype/dist or dims the op rejects.
// `device`: when given, its device_reference_f64 computes the truth where it has one
// (a user reference always runs on the host).
CaseData make_case_data(const ops::Op& op, const UserReference* ref, const protocol::CheckCase& c,
                        Backend* device = nullptr);

// The ABI descriptor of `t` with its data at `data`.
kgate_tensor describe(const ops::HostTensor& t, void* data);

// The element written into outputs before a run; an element still holding it afterwards
// was never written. Floats: a quiet NaN with a distinctive payload; integers: a sentinel.
std::vector<unsigned char> poison_pattern(DType d);

// The bytes `t` spans (contiguous: its elements times its dtype's size).
std::size_t tensor_bytes(const kgate_tensor& t);

// Every element of `got` against `want` (same shape). See docs/runner.md for the rules.
protocol::OutputError compare_output(const std::string& name, const ops::HostTensor& got,
                                     const ops::HostTensor& want, double atol, double rtol);

// Runs the whole per-case procedure (repeats, poisoning, input-mutation and determinism
// checks). Throws DeviceFault from the backend unchanged.
protocol::CaseResult check_case(Backend& backend, const Module& module, const ops::Op& op,
                                const protocol::CheckCase& c, const CaseData& data);

}  // namespace kgate::native
